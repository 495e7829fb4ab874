"""Tree workloads with real tar, find, cat, cp, git and rm on real mounts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import load_export, mountbench, plant_neighbours, snapshot
from support.tools import needs_fio

from mountbench.host.targets import create_scratch
from mountbench.kinds.tree import TreeRunner, tree_workload
from mountbench.model import RunSettings, Target, TargetContext, TargetInfo, WorkloadFailed

pytestmark = pytest.mark.slow

ACTIONS = ["extract", "walk-cold", "walk-warm", "read-cold", "copy", "git-commit", "git-status", "delete"]


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def test_tree_preset_on_two_real_targets(tmp_path, mb_env):
    disk = tmp_path / "disk"
    disk.mkdir()
    before = plant_neighbours(disk)
    out = tmp_path / "run.json"
    with realmounts.tmpfs("64m") as ram:
        proc = mountbench(
            "run", f"ram={ram}", f"disk={disk}", "--tree", "tiny", "--repeat", "1", "--json", str(out), env=mb_env
        )
        assert proc.returncode == 0, proc.stderr
    assert snapshot(disk) == before
    doc = load_export(out)
    (run,) = doc["runs"]
    names = {w["name"] for w in run["workloads"]}
    assert names == {*ACTIONS, "churn-create", "churn-delete"}
    assert all(s["ok"] for s in run["samples"]), [s["error"] for s in run["samples"] if not s["ok"]]
    for sample in run["samples"]:
        if sample["workload"].startswith("churn"):
            assert sample["metrics"]["files_per_s"] > 0
            continue
        m = sample["metrics"]
        assert m["wall"] > 0 and m["user"] >= 0 and m["sys"] >= 0
        if sample["workload"] in {"extract", "copy", "delete", "read-cold", "git-commit"}:
            assert m["files_per_s"] == pytest.approx(120 / m["wall"])
    # cold walks had their caches dropped (we are root) and it is recorded
    cold = [s for s in run["samples"] if s["workload"] == "walk-cold"]
    assert all(s["cache_action"].startswith("dropped") for s in cold) or os.geteuid() != 0
    warm = [s for s in run["samples"] if s["workload"] == "walk-warm"]
    assert {s["cache_action"] for s in warm} == {"not needed (a warm workload)"}
    rows = {(r["workload"], r["target"]): r for r in doc["summary"]}
    assert rows[("extract", "disk")]["metric"] == "wall" and rows[("extract", "disk")]["higher_is_better"] is False
    assert "lower is better" in proc.stdout


def test_user_tarball_and_only(tmp_path, mb_env):
    import lzma

    from mountbench.kinds.trees import generate

    source = generate("tiny", 3, tmp_path)
    given = tmp_path / "mine.tar.xz"
    given.write_bytes(lzma.compress(source.path.read_bytes()))
    target = tmp_path / "t"
    target.mkdir()
    out = tmp_path / "run.json"
    proc = mountbench(
        "run",
        str(target),
        "--tarball",
        str(given),
        "--only",
        "extract",
        "--only",
        "delete",
        "--repeat",
        "1",
        "--json",
        str(out),
        env=mb_env,
    )
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    assert [w["name"] for w in run["workloads"]] == ["extract", "delete"]
    assert run["workloads"][0]["spec"]["tree"] == {"tarball": str(given)}
    assert all(s["ok"] for s in run["samples"])


def test_warmup_rounds_run_for_real_and_are_not_stored(tmp_path, mb_env):
    """--warmup 1 extracts once more per target, before the measured rounds, like hyperfine --warmup."""
    import json

    target = tmp_path / "t"
    target.mkdir()
    out, events = tmp_path / "run.json", tmp_path / "events.jsonl"
    argv = ["run", str(target), "--tree", "tiny", "--only", "extract", "--repeat", "2", "--warmup", "1"]
    proc = mountbench(*argv, "--json", str(out), "--events", str(events), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    assert run["config"]["warmup"] == 1
    assert sorted(s["round"] for s in run["samples"]) == [0, 1] and all(s["ok"] for s in run["samples"])
    done = [json.loads(line.split(" ", 1)[1]) for line in events.read_text().splitlines()]
    done = [e for e in done if e["event"] == "done"]
    assert [e["warmup"] for e in done] == [True, False, False] and done[0]["ok"]
    assert "after 1 warm-up" in proc.stderr and "1 warm-up round first, not counted" in " ".join(proc.stdout.split())


def test_enospc_mid_extraction_is_the_cells_error_and_leaves_no_partial_tree(tmp_path):
    runner = TreeRunner()
    workload = tree_workload("extract", {"profile": "tiny", "seed": 1}, "test")
    runner.check([workload])
    with realmounts.tmpfs("2m") as small:
        target = Target("small", str(small))
        scratch = create_scratch(target, "enospc-test")
        ctx = TargetContext(target, TargetInfo("tmpfs", str(small), "tmpfs", "", 0, 0, True, "accepted"), scratch)
        filler = small / "filler"  # the test, not mountbench, fills the filesystem...
        fd = os.open(filler, os.O_CREAT | os.O_WRONLY)
        try:
            while os.write(fd, b"x" * 65536):
                pass
        except OSError:
            pass
        os.ftruncate(fd, os.fstat(fd).st_size - 300 * 1024)  # ...but for 300 KiB: tar starts, then fails
        os.close(fd)
        settings = RunSettings(workdir=tmp_path)
        prepared = runner.prepare(workload, ctx, settings)
        runner.setup(prepared, ctx, settings)  # as the executor does: untimed, then the timed run
        with pytest.raises(WorkloadFailed, match="No space left on device"):
            runner.run(prepared, ctx, settings)
        assert not (scratch / "extract").exists()
        filler.unlink()


def test_tree_bad_input(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    before = snapshot(target)
    corrupt = tmp_path / "broken.tar.gz"
    corrupt.write_bytes(b"\x1f\x8b garbage")
    cases = [
        (["--tarball", str(tmp_path / "missing.tar")], "does not exist"),
        (["--tarball", str(corrupt)], "not a readable tar"),
        (["--tarball", str(tmp_path)], "not a file"),
        (["--tree", "tiny", "--tarball", str(corrupt)], "either --tree or --tarball"),
        (["--only", "nothing*"], "matches no workload"),
    ]
    for args, message in cases:
        proc = mountbench("run", str(target), *args, env=mb_env)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    with realmounts.tmpfs("1m") as small:
        proc = mountbench("run", str(small), "--tree", "tiny", env=mb_env)
        assert proc.returncode == 2 and "not enough space" in proc.stderr
    # git missing: every other tool present
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("fio", "tar", "find", "cat", "cp", "rm", "sh"):
        os.symlink(Path(os.popen(f"command -v {tool}").read().strip()), bin_dir / tool)
    proc = mountbench("run", str(target), "--tree", "tiny", env=dict(mb_env, PATH=str(bin_dir)))
    assert proc.returncode == 2 and "git is needed" in proc.stderr
    assert snapshot(target) == before


def test_rsync_copies_and_updates_the_tree_on_real_targets(tmp_path, mb_env):
    """S3: rsync -a onto the target (a fresh copy), then the delta path after touching 10% of the files."""
    realmounts.require_tools("rsync")
    disk = tmp_path / "disk"
    disk.mkdir()
    before = plant_neighbours(disk)
    out = tmp_path / "run.json"
    with realmounts.tmpfs("64m") as ram:
        proc = mountbench(
            "run", f"ram={ram}", f"disk={disk}", "--preset", "s3", "--only", "rsync*", "--tree", "tiny",
            "--repeat", "2", "--json", str(out), env=mb_env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert not [p for p in ram.iterdir() if p.name.startswith(".mountbench-")]
    assert snapshot(disk) == before
    (run,) = load_export(out)["runs"]
    assert [w["name"] for w in run["workloads"]] == ["rsync", "rsync-update"]
    assert len(run["samples"]) == 2 * 2 * 2 and all(s["ok"] for s in run["samples"])
    for sample in run["samples"]:
        m = sample["metrics"]
        files = 120 if sample["workload"] == "rsync" else 12  # the tiny tree: every 10th of its 120 files
        assert m["files_per_s"] == pytest.approx(files / m["wall"])
        assert m["bytes_per_s"] > 0 and m["wall"] > 0
    fresh = {s["metrics"]["bytes_per_s"] * s["metrics"]["wall"] for s in run["samples"] if s["workload"] == "rsync"}
    assert len({round(b) for b in fresh}) == 1  # the whole tree's bytes, every time
    rows = {(r["workload"], r["metric"]) for r in load_export(out)["summary"]}
    assert ("rsync", "wall") in rows and ("rsync-update", "wall") in rows


def test_rsync_update_transfers_exactly_the_touched_files(tmp_path):
    """The untimed setup makes the copy equal to the source and touches every 10th file; the
    timed rsync then sends those files (and only those) through its delta path."""
    runner = TreeRunner()
    workload = tree_workload("rsync-update", {"profile": "tiny", "seed": 1}, "test")
    runner.check([workload])
    target_dir = tmp_path / "t"
    target_dir.mkdir()
    target = Target("t", str(target_dir))
    scratch = create_scratch(target, "rsync-test")
    ctx = TargetContext(target, TargetInfo("ext4", str(target_dir), "x", "", 0, 0, True, "accepted"), scratch)
    settings = RunSettings(workdir=tmp_path)
    prepared = runner.prepare(workload, ctx, settings)
    for _ in range(2):
        runner.setup(prepared, ctx, settings)
        archive = prepared.payload["archive"]
        source = runner._source_root(archive)
        copy = scratch / "rsync-update"
        touched = [p for p in source.rglob("*") if p.is_file() and
                   p.stat().st_mtime_ns != (copy / p.relative_to(source)).stat().st_mtime_ns]  # fmt: skip
        assert len(touched) == 12
        outcome = runner.run(prepared, ctx, settings)
        assert outcome.metrics["files_per_s"] == pytest.approx(12 / outcome.metrics["wall"])
        for path in source.rglob("*"):
            if path.is_file():
                mirrored = copy / path.relative_to(source)
                assert mirrored.read_bytes() == path.read_bytes()
                assert mirrored.stat().st_mtime_ns == path.stat().st_mtime_ns
    assert not str(source).startswith(str(target_dir))  # the source lives outside the target


def _tarball_with(tmp_path: Path, *extra: tuple[str, bytes, dict]) -> Path:
    import io
    import tarfile

    path = tmp_path / "tree.tar"
    with tarfile.open(path, "w") as tar:
        for name, data, fields in (("src/a.c", b"int a;\n", {}), *extra):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            for key, value in fields.items():
                setattr(info, key, value)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return path


def test_a_tarball_with_a_device_node_is_refused_before_anything_runs(tmp_path, mb_env):
    """Issue 47 case 4: as root, --tarball extracted a character device 1,5 into scratch, and another
    user read from it during the run."""
    import tarfile

    target = tmp_path / "t"
    target.mkdir()
    device = ("src/zero", b"", {"type": tarfile.CHRTYPE, "devmajor": 1, "devminor": 5, "mode": 0o666})
    tarball = _tarball_with(tmp_path, device)
    proc = mountbench("run", str(target), "--preset", "tree", "--tarball", str(tarball), "--only", "extract",
                      "--repeat", "1", env=mb_env)  # fmt: skip
    assert proc.returncode == 2 and "device node" in proc.stderr and "src/zero" in proc.stderr, proc.stderr
    assert list(target.iterdir()) == []


def test_a_tarballs_set_id_bits_and_owners_are_not_extracted_and_it_says_so(tmp_path, mb_env):
    """Issue 47 case 4: a setuid shell from a tarball landed in scratch with its bit. It is extracted
    as this user's, without the bit (tar --no-same-owner --no-same-permissions), and each figure says so."""
    target = tmp_path / "t"
    target.mkdir()
    suid = ("src/sh", b"#!/bin/sh\n", {"mode": 0o4755, "uid": 1234, "gid": 1234})
    tarball = _tarball_with(tmp_path, suid)
    out = tmp_path / "run.json"
    proc = mountbench("run", str(target), "--preset", "tree", "--tarball", str(tarball), "--only", "extract",
                      "--repeat", "1", "--json", str(out), env=mb_env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    codes = {c["code"]: c["text"] for s in run["samples"] for c in s["caveats"]}
    assert "set-user-ID/set-group-ID bits of 1 entries" in codes["tarball-stripped"]
    assert "owners of 1 entries" in codes["tarball-stripped"]
    # extracted by the timed tar as a run does it: no set-ID bit, this user's
    scratch = create_scratch(Target("t", str(target)), "20260101-000000-5e70")
    from mountbench.host.contain import Fence
    from mountbench.kinds.tree import _extract
    from mountbench.kinds.trees import from_tarball

    (scratch / "x").mkdir()
    _extract(from_tarball(tarball, tmp_path), scratch / "x", Fence.of([scratch]))
    made = (scratch / "x" / "src" / "sh").stat()
    assert made.st_mode & 0o6000 == 0 and made.st_uid == os.geteuid()
