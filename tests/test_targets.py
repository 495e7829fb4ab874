import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import realmounts
from support.realmounts import requires_root
from support.runhelpers import mountbench, start_mountbench, wait_for_samples
from support.tools import needs_fio

from mountbench.errors import TargetError, UsageError
from mountbench.host import scratch as scratch_mod
from mountbench.host.targets import (
    create_scratch,
    lock_scratch,
    parse_mountinfo,
    parse_target_arg,
    remove_scratch,
    resolve_targets,
)
from mountbench.model import Target

MOUNTINFO = """\
22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
35 22 0:30 / /dev/shm rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=1024k
90 22 0:50 / /mnt/with\\040space rw,relatime - fuse.sshfs user@host:/srv rw,user_id=0,group_id=0
"""


def test_parse_mountinfo_merges_options_and_unescapes_paths():
    entries = parse_mountinfo(MOUNTINFO)
    assert [e.mount_point for e in entries] == ["/", "/dev/shm", "/mnt/with space"]
    shm = entries[1]
    assert shm.fstype == "tmpfs" and shm.source == "tmpfs"
    assert shm.options == "rw,nosuid,nodev,size=1024k"
    assert entries[2].fstype == "fuse.sshfs" and entries[2].source == "user@host:/srv"


@pytest.mark.parametrize(
    ("arg", "expected"),
    [("virtiofs=/mnt/share", ("virtiofs", "/mnt/share")), ("/mnt/a=b", (None, "/mnt/a=b")), ("/x", (None, "/x"))],
)
def test_parse_target_arg(arg, expected):
    assert parse_target_arg(arg) == expected


def test_resolve_targets_errors(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(TargetError, match="does not exist"):
        resolve_targets([str(tmp_path / "missing")])
    with pytest.raises(TargetError, match="not a directory"):
        resolve_targets([str(f)])
    with pytest.raises(UsageError, match="given twice"):
        resolve_targets([str(tmp_path), f"x={tmp_path}"])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(UsageError, match="labelled 'same'"):
        resolve_targets([f"same={tmp_path / 'a'}", f"same={tmp_path / 'b'}"])


def test_default_label_is_fstype_and_path(tmp_path):
    (target,) = resolve_targets([str(tmp_path)])
    assert target.label.endswith(f":{tmp_path}")


# -- one run per target at a time (issue 12 §4) ----------------------------------------------------


def _hold_scratch(target: Path, run_id: str) -> subprocess.Popen[str]:
    """Another real process that readies a run's scratch directory, as a run does, and works."""
    code = (
        "import sys, time\n"
        "from mountbench.model import Target\n"
        "from mountbench.host import targets\n"
        "s = targets.create_scratch(Target('t', sys.argv[1]), sys.argv[2])\n"
        "fd = targets.lock_scratch(s, sys.argv[2])\n"
        "print('working', fd is not None, flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(target), run_id], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().split() == ["working", "True"]
    return proc


@pytest.mark.root
@requires_root
def test_a_target_in_use_by_another_live_run_is_refused_until_it_is_gone() -> None:
    with realmounts.tmpfs("16m") as target:
        other = _hold_scratch(target, "20260101-000000-aaaa")
        try:
            with pytest.raises(TargetError) as refused:
                create_scratch(Target("t", str(target)), "20260101-000000-bbbb")
            message = str(refused.value)
            assert "\n" not in message
            assert "run 20260101-000000-aaaa" in message and "wait for run 20260101-000000-aaaa to finish" in message
            assert sorted(p.name for p in target.iterdir()) == [".mountbench-20260101-000000-aaaa"]
        finally:
            other.kill()
            other.wait()
        # its process is gone: the target is free, and the killed run's directory stays for --resume
        mine = create_scratch(Target("t", str(target)), "20260101-000000-bbbb")
        fd = lock_scratch(mine, "20260101-000000-bbbb")
        assert fd is not None
        os.close(fd)
        assert remove_scratch(mine, "20260101-000000-bbbb")
        assert sorted(p.name for p in target.iterdir()) == [".mountbench-20260101-000000-aaaa"]


@pytest.mark.root
@requires_root
def test_a_target_with_a_live_probe_is_refused() -> None:
    with realmounts.tmpfs("16m") as target:
        scratch_mod.create(
            target, ".mountbench-probe-0001", scratch_mod.Marker("probe", "tok", scratch_mod.Owner.current())
        )
        with pytest.raises(TargetError, match="in use by a mountbench probe"):
            create_scratch(Target("t", str(target)), "20260101-000000-cccc")


@pytest.mark.root
@pytest.mark.slow
@requires_root
def test_two_runs_on_one_tmpfs_the_second_is_refused_with_the_first_ones_id(tmp_path, mb_env) -> None:
    """Two real mountbench runs on one real tmpfs: the second says which run holds it, and
    what to do; the first is not disturbed."""
    needs_fio()
    db = Path(mb_env["MOUNTBENCH_DB"])
    with realmounts.tmpfs("64m") as target:
        first = start_mountbench("run", str(target), "--repeat", "2", "--runtime", "0.5", "--size", "4M", env=mb_env)
        try:
            wait_for_samples(db, 1)
            with sqlite3.connect(db) as conn:
                (first_id,) = conn.execute("SELECT id FROM runs").fetchone()
            env2 = {**mb_env, "MOUNTBENCH_DB": str(tmp_path / "second.sqlite")}
            second = mountbench("run", str(target), "--repeat", "1", "--runtime", "0.3", "--size", "4M", env=env2)
            assert second.returncode == 2, second.stderr
            assert len(second.stderr.strip().splitlines()) == 1, second.stderr
            assert f"in use by run {first_id}" in second.stderr
            assert f"wait for run {first_id} to finish or stop it" in second.stderr
            assert [p.name for p in target.iterdir() if p.name.startswith(".mountbench-")] == [
                f".mountbench-{first_id}"
            ]
            _, stderr = first.communicate(timeout=300)
        finally:
            if first.poll() is None:
                first.kill()
                first.communicate()
        assert first.returncode == 0, stderr
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT status FROM runs").fetchone()[0] == "complete"
        assert [p for p in target.iterdir() if p.name.startswith(".mountbench-")] == []


def test_scratch_of_a_run_is_ours_only_with_our_marker(tmp_path: Path) -> None:
    target = Target("t", str(tmp_path))
    mine = create_scratch(target, "20260101-000000-aaaa")
    (mine / "work.bin").write_bytes(b"x")
    assert not remove_scratch(mine, "20260101-000000-bbbb")  # another run's id: not ours
    assert (mine / "work.bin").exists()
    other = tmp_path / ".mountbench-20260101-000000-cccc"
    other.mkdir()
    (other / "data").write_text("not made by mountbench")
    with pytest.raises(TargetError, match="was not made by mountbench run"):
        create_scratch(target, "20260101-000000-cccc")
    assert (other / "data").exists()
    assert remove_scratch(mine, "20260101-000000-aaaa") and not mine.exists()


def test_a_vanished_target_is_never_recreated(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    with pytest.raises(TargetError, match="not writable"):
        create_scratch(Target("t", str(gone)), "20260101-000000-aaaa")
    assert not gone.exists()


def test_a_run_from_before_shared_markers_is_resumed_and_claimed(tmp_path: Path) -> None:
    """Scratch directories of earlier versions hold the bare run id: still ours; a resume
    locks it and rewrites the marker to name its new owner."""
    old = tmp_path / ".mountbench-20250101-000000-old1"
    old.mkdir()
    (old / scratch_mod.MARKER).write_text("20250101-000000-old1\n")
    (old / "kept.bin").write_bytes(b"resume me")
    target = Target("t", str(tmp_path))
    assert create_scratch(target, "20250101-000000-old1") == old
    fd = lock_scratch(old, "20250101-000000-old1")
    assert fd is not None
    try:
        marker = scratch_mod.read_marker(old)
        assert marker is not None and marker.id == "20250101-000000-old1"
        assert marker.owner is not None and marker.owner.pid == os.getpid()
        assert (old / "kept.bin").read_bytes() == b"resume me"
    finally:
        os.close(fd)
