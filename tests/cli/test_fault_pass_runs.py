"""The cases of issue 34's fault and bad-input pass (test_fault_pass.py) that run fio or make a
device node: nothing kept is swept, nothing foreign is resumed, a hosts file that never ends and an
output device that is full are one-line errors, and a database that stops taking writes mid-run
leaves a --json export that does not say running."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

from support import realmounts
from support.runhelpers import (
    FAST,
    assert_one_line_error,
    exported,
    fixture_db,
    mountbench,
    start_mountbench,
    wait_for_samples,
)
from support.tools import needs_fio

ONE = [*FAST, "--repeat", "1", "--only", "rnd4k-q1-read"]


def test_a_kept_runs_data_survives_the_next_run_on_its_target(tmp_path, mb_env):
    needs_fio()
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    kept = mountbench("run", str(a), str(b), *ONE, "--keep", env=mb_env)
    assert kept.returncode == 0, kept.stderr
    (scratch,) = [p for p in a.iterdir() if p.name.startswith(".mountbench-")]
    files = sorted(p.name for p in scratch.iterdir())
    assert len(files) > 1  # the marker and the data
    again = mountbench("run", str(a), str(b), *ONE, env=mb_env)
    assert again.returncode == 0, again.stderr
    assert "removed a leftover scratch directory" not in again.stderr, again.stderr
    assert sorted(p.name for p in scratch.iterdir()) == files
    assert [p for p in a.iterdir() if p.name.startswith(".mountbench-")] == [scratch]  # the new run's went


def test_a_run_recorded_on_another_machine_is_not_resumed_here(tmp_path, mb_env):
    needs_fio()
    target = tmp_path / "t"
    target.mkdir()
    made = mountbench("run", str(target), *FAST, "--repeat", "2", "--only", "rnd4k-q1-read", env=mb_env)
    assert made.returncode == 0, made.stderr

    def elsewhere(run: dict) -> None:
        run["id"] = "20250101-120000-f0e1"
        run["status"] = "running"
        run["host"]["hostname"] = "othermachine"
        run["host"]["machine_id"] = "0123456789abcdef"
        run["samples"] = run["samples"][:1]

    path = exported(tmp_path, Path(mb_env["MOUNTBENCH_DB"]), elsewhere)
    other = dict(mb_env, MOUNTBENCH_DB=str(tmp_path / "other.sqlite"))
    assert mountbench("import", str(path), env=other).returncode == 0
    assert_one_line_error(mountbench("run", "--resume", "20250101-120000-f0e1", env=other), "imported")
    with sqlite3.connect(tmp_path / "other.sqlite") as conn:  # as if the database file itself was copied here
        conn.execute("UPDATE runs SET origin = ''")
    line = assert_one_line_error(mountbench("run", "--resume", "20250101-120000-f0e1", env=other), "othermachine")
    assert "resume it there" in line
    assert list(target.iterdir()) == []
    with sqlite3.connect(tmp_path / "other.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 1


def test_a_hosts_file_that_never_ends_is_refused(tmp_path, mb_env):
    needs_fio()
    realmounts.require_root()
    zero = tmp_path / "zero"
    os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    target = tmp_path / "t"
    target.mkdir()
    refused = mountbench("run", str(target), "--hosts-file", str(zero), "--dry-run", env=mb_env, timeout=60)
    assert_one_line_error(refused, str(zero), "not a regular file")


def test_standard_output_on_a_full_device_is_a_one_line_error(tmp_path, mb_env):
    realmounts.require_root()
    db = fixture_db(tmp_path)
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    with open(full, "w") as stream:
        proc = subprocess.run([sys.executable, "-m", "mountbench", "show", "last", "--db", str(db)],
                              stdout=stream, stderr=subprocess.PIPE, text=True, env=mb_env, timeout=60)  # fmt: skip
    proc.stdout = ""
    assert_one_line_error(proc, "standard output", "No space left on device")


def _fill(path: Path) -> None:
    """Write ``path`` until its filesystem has no byte left."""
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as stream:
        while True:
            try:
                stream.write(chunk)
            except OSError:
                break
    with open(path, "ab", buffering=0) as stream:  # the last partial block
        for _ in range(64):
            try:
                stream.write(b"\0" * 1024)
            except OSError:
                break


def test_the_json_of_a_run_whose_database_stopped_taking_writes_does_not_say_running(tmp_path, mb_env):
    """The database's filesystem fills up mid-run, so full that the final status cannot be written
    either: the --json export, elsewhere, says the run was interrupted, not running."""
    needs_fio()
    realmounts.require_root()
    target = tmp_path / "t"
    target.mkdir()
    json_out = tmp_path / "run.json"
    with realmounts.tmpfs("8m") as place:
        db = place / "r.sqlite"
        proc = start_mountbench("run", str(target), *FAST, "--repeat", "4", "--db", str(db), "--json", str(json_out),
                                env=mb_env)  # fmt: skip
        try:
            wait_for_samples(db, 1, timeout=120)
            _fill(place / "filler")
            _out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 2 and "cannot be written" in err, err
        (run,) = json.loads(json_out.read_text())["runs"]
        assert run["status"] == "interrupted", run["status"]
