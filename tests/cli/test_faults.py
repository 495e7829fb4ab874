"""Faults and refusals around the store and outputs: a refused command writes nothing
(no database either), a full database stops a run cleanly and it resumes, damaged
imports are refused naming the sample, and hints name what really helps."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import FAST, mountbench, snapshot
from support.tools import needs_fio

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def one_line_error(proc, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_a_read_only_database_place_is_refused_before_anything_runs(tmp_path, mb_env):
    realmounts.require_root()
    target = tmp_path / "t"
    target.mkdir()
    with realmounts.tmpfs("1m") as ro:
        realmounts._check(["mount", "-o", "remount,ro", str(ro)])
        one_line_error(mountbench("run", str(target), *FAST, "--db", str(ro / "r.sqlite"), env=mb_env), "read-only")
        export = tmp_path / "x.json"
        export.write_text("{}")
        one_line_error(mountbench("import", str(export), "--db", str(ro / "r.sqlite"), env=mb_env))
    assert list(target.iterdir()) == []


def test_an_unwritable_json_path_is_refused_before_the_first_sample(tmp_path, mb_env):
    realmounts.require_root()
    target = tmp_path / "t"
    target.mkdir()
    db = Path(mb_env["MOUNTBENCH_DB"])
    one_line_error(mountbench("run", str(target), *FAST, "--json", str(tmp_path / "no" / "r.json"), env=mb_env),
                   "does not exist")  # fmt: skip
    with realmounts.tmpfs("1m") as ro:
        realmounts._check(["mount", "-o", "remount,ro", str(ro)])
        one_line_error(mountbench("run", str(target), *FAST, "--json", str(ro / "r.json"), env=mb_env), "--json")
    assert not db.exists() and list(target.iterdir()) == []


def test_refused_commands_create_no_database(tmp_path, mb_env):
    realmounts.require_root()
    db = Path(mb_env["MOUNTBENCH_DB"])
    one_line_error(mountbench("show", "nosuchrun", env=mb_env), "nothing stored")
    one_line_error(mountbench("report", env=mb_env), "nothing stored")
    with realmounts.tmpfs("8m") as ro:
        realmounts._check(["mount", "-o", "remount,ro", str(ro)])
        one_line_error(mountbench("run", str(ro), *FAST, env=mb_env), "not writable")
    assert not db.exists()
    listed = mountbench("list", env=mb_env)
    assert listed.returncode == 0 and "no runs stored yet" in listed.stdout and not db.exists()


def test_a_full_database_stops_the_run_cleanly_and_it_resumes(tmp_path, mb_env):
    realmounts.require_root()
    target = tmp_path / "t"
    target.mkdir()
    with realmounts.tmpfs("300k") as small:
        db = small / "r.sqlite"
        proc = mountbench("run", str(target), *FAST, "--repeat", "3", "--db", str(db), env=mb_env)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        line = proc.stderr.strip().splitlines()[-1]  # after the progress lines, one line says what happened
        assert line.startswith("mountbench: error: ") and "cannot be written" in line, line
        run_id = line.split("--resume ")[1].strip()
        assert list(target.iterdir()) == []  # scratch removed on the way out
        with sqlite3.connect(db) as conn:
            stored = conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
        assert 0 < stored < 18
        listed = mountbench("list", "--db", str(db), env=mb_env)
        assert "interrupted" in listed.stdout, listed.stdout
        realmounts._check(["mount", "-o", "remount,size=64m", str(small)])
        resumed = mountbench("run", "--resume", run_id, "--db", str(db), env=mb_env)
        assert resumed.returncode == 0, resumed.stderr
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 18
            assert conn.execute("SELECT status FROM runs").fetchone()[0] == "complete"


def _export_with(tmp_path: Path, mb_env: dict, change) -> Path:
    target = tmp_path / "t"
    target.mkdir(exist_ok=True)
    proc = mountbench("run", str(target), *FAST, "--repeat", "1", "--only", "rnd4k-q1-read", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "export.json"
    assert mountbench("export", "last", "--out", str(path), env=mb_env).returncode == 0
    document = json.loads(path.read_text())
    change(document["runs"][0])
    path.write_text(json.dumps(document))
    return path


def test_an_import_with_a_nan_metric_is_refused_naming_the_sample(tmp_path, mb_env):
    def poison(run: dict) -> None:
        run["samples"][0]["metrics"]["read.iops"] = float("nan")

    path = _export_with(tmp_path, mb_env, poison)
    other = dict(mb_env, MOUNTBENCH_DB=str(tmp_path / "other.sqlite"))
    one_line_error(mountbench("import", str(path), env=other), "read.iops is nan", "round 1")
    assert not (tmp_path / "other.sqlite").exists()


def test_an_import_with_a_sample_twice_is_refused(tmp_path, mb_env):
    def duplicate(run: dict) -> None:
        run["samples"].append(dict(run["samples"][0]))

    path = _export_with(tmp_path, mb_env, duplicate)
    other = dict(mb_env, MOUNTBENCH_DB=str(tmp_path / "other.sqlite"))
    one_line_error(mountbench("import", str(path), env=other), "appears twice")


def test_not_enough_space_for_a_tree_names_what_shrinks_it(mb_env):
    realmounts.require_root()
    with realmounts.tmpfs("2m") as small:
        before = snapshot(small)
        proc = mountbench("run", str(small), "--preset", "tree", "--only", "extract", "--size", "1M", env=mb_env)
        line = one_line_error(proc, "not enough space", "--tree tiny")
        assert "--size to shrink the fio" not in line  # --size does not shrink a tree
        assert snapshot(small) == before


def test_a_target_unmounted_under_the_run_says_where_its_data_is(tmp_path, mb_env):
    from support.runhelpers import start_mountbench, wait_for_samples

    realmounts.require_root()
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    realmounts._check(["mount", "-t", "tmpfs", "-o", "size=64m", "mountbench-test", str(mount_point)])
    db = Path(mb_env["MOUNTBENCH_DB"])
    proc = start_mountbench(
        "run", str(mount_point), "--runtime", "0.3", "--size", "4M", "--repeat", "4", "--only", "rnd4k-q1-*",
        "--seed", "1", env=mb_env,
    )  # fmt: skip
    try:
        wait_for_samples(db, 1)
        realmounts._check(["umount", "-l", str(mount_point)])
        _out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    with sqlite3.connect(db) as conn:
        errors = [e for (e,) in conn.execute("SELECT error FROM samples WHERE ok = 0")]
    assert errors, err
    assert all("no longer mounted" in e and ".mountbench-" in e for e in errors), errors
    assert any(e.startswith("not run;") for e in errors), errors  # later samples do not even start
    # the sample in flight when the target went may make its directory under the mount point (fio
    # creates a missing directory=); then the user is told to delete it
    left = list(mount_point.iterdir())
    if left:
        assert any("also delete" in e and str(left[0]) in e for e in errors), errors
        import shutil

        shutil.rmtree(left[0])


# --- issue 24: nothing a user owns is overwritten, nothing mixed or damaged is stored as good --------


def _char_device(tmp_path: Path, name: str, major: int, minor: int) -> Path:
    """A device node made inside the test's own directory, never the system's /dev."""
    import os
    import stat

    realmounts.require_root()
    path = tmp_path / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    return path


def _stored_db(tmp_path: Path) -> Path:
    """A results database holding one run (the stored schema-4 fixture, upgraded)."""
    import shutil

    from mountbench.store import Store

    db = tmp_path / "db" / "same.db"
    db.parent.mkdir()
    shutil.copyfile(Path(__file__).parents[1] / "data" / "store" / "schema-v4.sqlite", db)
    Store(db).list_runs()
    return db


def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_outputs_never_replace_the_database_a_device_or_a_symlink(tmp_path, mb_env):
    """§1: --json onto the database, report --out /dev/null, export --out /dev/full."""
    import os
    import stat

    db = _stored_db(tmp_path)
    before = _digest(db)
    target = tmp_path / "t"
    target.mkdir()
    one_line_error(mountbench("run", str(target), *FAST, "--db", str(db), "--json", str(db), env=mb_env),
                   "--json", "is the results database")  # fmt: skip
    assert _digest(db) == before and list(target.iterdir()) == []
    null, full = _char_device(tmp_path, "null", 1, 3), _char_device(tmp_path, "full", 1, 7)
    one_line_error(mountbench("report", "--db", str(db), "--out", str(null), env=mb_env), "character device")
    one_line_error(mountbench("export", "last", "--db", str(db), "--out", str(full), env=mb_env), "character device")
    one_line_error(mountbench("export", "last", "--db", str(db), "--out", str(db), env=mb_env), "results database")
    one_line_error(mountbench("report", "--db", str(db), "--out", str(tmp_path), env=mb_env), "is a directory")
    assert stat.S_ISCHR(os.lstat(null).st_mode) and stat.S_ISCHR(os.lstat(full).st_mode)
    assert _digest(db) == before
    # a symlink is written through and stays a link; - is standard output
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    exported = mountbench("export", "last", "--db", str(db), "--out", str(link), env=mb_env)
    assert exported.returncode == 0, exported.stderr
    assert link.is_symlink() and json.loads(real.read_text())["format"] == "mountbench-runs"
    to_stdout = mountbench("export", "last", "--db", str(db), "--out", "-", env=mb_env)
    assert to_stdout.returncode == 0 and json.loads(to_stdout.stdout)["runs"][0]["id"] == "20250101-120000-abcd"


def test_a_run_writes_its_json_through_a_symlink(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "run.json"
    link.symlink_to(real)
    proc = mountbench("run", str(target), *FAST, "--repeat", "1", "--only", "rnd4k-q1-read", "--json", str(link),
                      env=mb_env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and len(json.loads(real.read_text())["runs"][0]["samples"]) == 1


def test_inputs_that_never_end_are_refused_in_one_line(tmp_path, mb_env):
    """§5: --job, import and report --from of /dev/zero (a device made here) no longer read forever."""
    zero = _char_device(tmp_path, "zero", 1, 5)
    target = tmp_path / "t"
    target.mkdir()
    one_line_error(mountbench("run", str(target), "--job", str(zero), "--dry-run", env=mb_env), "not a regular file")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50_000 + "]" * 50_000)
    one_line_error(mountbench("import", str(deep), env=mb_env), "nested too deeply")
    huge = tmp_path / "huge.json"
    huge.write_text('{"format": "mountbench-runs", "n": ' + "1" * 5000 + "}")
    one_line_error(mountbench("report", "--from", str(huge), env=mb_env), "not a readable JSON file")
    assert not Path(mb_env["MOUNTBENCH_DB"]).exists()


def test_an_import_of_damaged_samples_stores_nothing(tmp_path, mb_env):
    """§3, as the user met it: "ok": "false", a negative bandwidth, round -3, a foreign target, id ../../etc/x."""
    db = _stored_db(tmp_path)
    good = tmp_path / "good.json"
    assert mountbench("export", "last", "--db", str(db), "--out", str(good), env=mb_env).returncode == 0
    other = dict(mb_env, MOUNTBENCH_DB=str(tmp_path / "other.sqlite"))
    cases = [
        (lambda run: run["samples"][0].update(ok="false"), "ok is a string 'false'"),
        (lambda run: run["samples"][0].update(metrics={"read.bw": -5}), "read.bw is -5, below zero"),
        (lambda run: run["samples"][0].update(round=-3), "round -3"),
        (lambda run: run["samples"][0].update(target="nosuch"), "not one of the run's targets"),
        (lambda run: run.update(id="../../etc/x"), "is not a run id"),
    ]
    for change, fragment in cases:
        document = json.loads(good.read_text())
        change(document["runs"][0])
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(document))
        one_line_error(mountbench("import", str(bad), env=other), fragment)
    assert not (tmp_path / "other.sqlite").exists()


def _failing_job(tmp_path: Path, name: str = "bad") -> Path:
    """A job fio accepts with --parse-only but whose every run fails: a CPU this machine lacks."""
    import os

    job = tmp_path / f"{name}.fio"
    job.write_text(f"[{name}]\nrw=read\nsize=1M\ncpus_allowed={os.cpu_count()}\n")
    return job


def test_a_run_whose_every_sample_failed_exits_1_and_lists_as_failed(tmp_path, mb_env):
    """§7 (issue case 8)."""
    target = tmp_path / "t"
    target.mkdir()
    proc = mountbench("run", str(target), "--job", str(_failing_job(tmp_path)), "--repeat", "2", env=mb_env)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert "2 samples stored, 2 failed" in lines[-2], lines
    assert lines[-1].startswith("mountbench: error: every sample of run") and "Traceback" not in proc.stderr
    listed = mountbench("list", env=mb_env)
    assert " failed " in listed.stdout, listed.stdout
    assert list(target.iterdir()) == []
    run_id = lines[-1].split("every sample of run ")[1].split()[0]
    one_line_error(mountbench("run", "--resume", run_id, env=mb_env), "is failed; nothing to resume")


def test_a_run_where_some_samples_failed_exits_0_counting_them(tmp_path, mb_env):
    job = tmp_path / "mixed.fio"
    # stonewall: fio runs [good] after [bad], and they share no files: two workloads
    job.write_text(_failing_job(tmp_path).read_text() + "\n[good]\nstonewall\nrw=read\nsize=1M\nruntime=0.3\n")
    target = tmp_path / "t"
    target.mkdir()
    proc = mountbench("run", str(target), "--job", str(job), "--repeat", "1", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert "complete: 2 samples stored, 1 failed" in proc.stderr.strip().splitlines()[-1]
    help_text = mountbench("run", "--help", env=mb_env).stdout
    assert "every sample" in help_text and "failed" in help_text
