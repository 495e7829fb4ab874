"""A probe that could not probe says why in one line and exits 2 (issue 34, case 6).

Before, `mountbench probe /proc`, a read-only tmpfs, or a target a run is measuring printed a
matrix of "–" under "No data loss or corruption found." and exited 0. Each case here is a real
target; nothing is stored, and the target is left as it was.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import realmounts as rm
from support.runhelpers import assert_one_line_error, mountbench

pytestmark = [pytest.mark.root, rm.requires_root]


def _refused(proc: subprocess.CompletedProcess[str], path: Path | str, *said: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"mountbench: error: cannot probe {path}: "), lines[0]
    for text in said:
        assert text in lines[0], lines[0]
    assert "No data loss" not in proc.stdout and "–" not in proc.stdout


def _stored_probes(mb_env: dict[str, str]) -> int:
    db = Path(mb_env["MOUNTBENCH_DB"]) if "MOUNTBENCH_DB" in mb_env else None
    if db is None or not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        try:
            return int(con.execute("select count(*) from probes").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def test_proc_is_refused_with_its_reason(mb_env: dict[str, str]) -> None:
    proc = mountbench("probe", "/proc", "--no-reference", env=mb_env)
    # issue 47: a pseudo filesystem is refused as a target (as run refuses it) before anything is tried there
    assert_one_line_error(proc, "target /proc is on proc", "stores nothing")
    assert _stored_probes(mb_env) == 0


def test_a_read_only_tmpfs_is_refused_and_untouched(mb_env: dict[str, str]) -> None:
    with rm.tmpfs("8m") as mp:
        (mp / "keep.txt").write_bytes(b"keep")
        subprocess.run(["mount", "-o", "remount,ro", str(mp)], check=True)
        before = rm.tree_snapshot(mp)
        proc = mountbench("probe", str(mp), env=mb_env)
        _refused(proc, mp, "Read-only file system (EROFS)")
        assert rm.tree_snapshot(mp) == before
        subprocess.run(["mount", "-o", "remount,rw", str(mp)], check=True)
    assert _stored_probes(mb_env) == 0


def test_a_target_a_run_is_measuring_is_refused(mb_env: dict[str, str]) -> None:
    """A live run's scratch directory, locked as a run locks it, by another real process."""
    code = (
        "import sys, time\n"
        "from mountbench.model import Target\n"
        "from mountbench.host import targets\n"
        "s = targets.create_scratch(Target('t', sys.argv[1]), sys.argv[2])\n"
        "fd = targets.lock_scratch(s, sys.argv[2])\n"
        "print('working', flush=True)\n"
        "time.sleep(120)\n"
    )
    with rm.tmpfs("8m") as mp:
        run = subprocess.Popen(
            [sys.executable, "-c", code, str(mp), "20260101-000000-aaaa"], stdout=subprocess.PIPE, text=True
        )
        try:
            assert run.stdout is not None and run.stdout.readline().strip() == "working"
            proc = mountbench("probe", str(mp), "--no-reference", env=mb_env)
        finally:
            run.kill()
            run.wait()
        _refused(proc, mp, "in use by run 20260101-000000-aaaa", "when that run has finished")
        assert [p.name for p in mp.iterdir()] == [".mountbench-20260101-000000-aaaa"]
    assert _stored_probes(mb_env) == 0


def test_a_usable_target_still_probes(mb_env: dict[str, str]) -> None:
    with rm.tmpfs("8m") as mp:
        proc = mountbench("probe", str(mp), "--no-reference", env=mb_env)
        assert proc.returncode == 0, proc.stderr
        assert os.listdir(mp) == []
    assert "No data loss or corruption found." in proc.stdout
