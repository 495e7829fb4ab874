"""A run's samples all come from the storage it recorded (issue 24 §2): after SIGKILL, a
target unmounted (umount -l) or another filesystem mounted over its path makes --resume
refuse naming what changed, and a filesystem mounted over the path mid-run turns the later
samples into errors. Real loop-mounted ext4 and tmpfs mounts, as root."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support import realmounts
from support.runhelpers import mountbench, wait_for_samples
from support.tools import needs_fio

pytestmark = pytest.mark.slow

RUN = ["--runtime", "0.3", "--size", "4M", "--repeat", "6", "--only", "rnd4k-q1-*", "--seed", "1"]


@pytest.fixture(autouse=True)
def _root_and_fio():
    needs_fio()
    try:
        realmounts.require_root()
    except realmounts.Unavailable as exc:
        pytest.skip(str(exc))


def _start(target: Path, env: dict[str, str]) -> subprocess.Popen:
    """A run in its own session, so SIGKILL reaches it and its fio at once (as `kill -9 -PGID`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "mountbench", "run", str(target), *RUN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _kill_after_first_sample(proc: subprocess.Popen, db: Path) -> str:
    """SIGKILL the run and every process it started (fio runs in a process group of its own),
    and wait until none is left: none may touch the target after this."""
    try:
        wait_for_samples(db, 1, timeout=120)
    finally:
        family = [proc.pid]
        with contextlib.suppress(psutil.Error):
            family += [child.pid for child in psutil.Process(proc.pid).children(recursive=True)]
        for pid in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        psutil.wait_procs([p for p in map(_process, family) if p is not None], timeout=30)
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
    return str(run_id)


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _samples(db: Path) -> list[tuple[int, str, float]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT ok, error, started_at FROM samples ORDER BY id"))


def _refused_resume(run_id: str, env: dict[str, str], *fragments: str) -> str:
    proc = mountbench("run", "--resume", run_id, env=env)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for fragment in ("cannot be resumed", "no longer the storage it measured", *fragments):
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_resume_after_sigkill_and_umount_l_of_a_loop_ext4_is_refused(mb_env):
    db = Path(mb_env["MOUNTBENCH_DB"])
    with realmounts.ext4_loop(64) as mp:
        run_id = _kill_after_first_sample(_start(mp, mb_env), db)
        stored = _samples(db)
        assert (mp / f".mountbench-{run_id}").is_dir()  # the killed run's scratch, inside the ext4
        realmounts._check(["umount", "-l", str(mp)])
        assert list(mp.iterdir()) == []  # the bare directory underneath
        line = _refused_resume(run_id, mb_env, "device", "mount source /dev/loop")
        assert "mount it again" in line.lower()
        assert list(mp.iterdir()) == []  # nothing made on the filesystem underneath
        assert _samples(db) == stored  # no sample of the root filesystem joined the ext4's


def test_resume_onto_a_tmpfs_mounted_over_the_path_is_refused(mb_env):
    db = Path(mb_env["MOUNTBENCH_DB"])
    with realmounts.tmpfs("64m") as mp:
        run_id = _kill_after_first_sample(_start(mp, mb_env), db)
        stored = _samples(db)
        realmounts._check(["mount", "-t", "tmpfs", "-o", "size=64m", "mountbench-over", str(mp)])
        try:
            _refused_resume(run_id, mb_env, "device", "mount source mountbench-test → mountbench-over")
            assert list(mp.iterdir()) == []
        finally:
            realmounts._check(["umount", str(mp)])
        assert _samples(db) == stored
        # the same storage again: the resume goes on in the killed run's own scratch directory
        resumed = mountbench("run", "--resume", run_id, env=mb_env)
        assert resumed.returncode == 0, resumed.stderr
        assert len(_samples(db)) == 12 and all(ok for ok, _e, _t in _samples(db))
        assert list(mp.iterdir()) == []


def test_a_tmpfs_mounted_over_the_target_mid_run_turns_later_samples_into_errors(mb_env):
    db = Path(mb_env["MOUNTBENCH_DB"])
    with realmounts.tmpfs("64m") as mp:
        proc = _start(mp, mb_env)
        try:
            wait_for_samples(db, 2, timeout=120)
            realmounts._check(["mount", "-t", "tmpfs", "-o", "size=64m", "mountbench-over", str(mp)])
            mounted_at = time.time()
            _out, err = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        try:
            samples = _samples(db)
            after = [(ok, error) for ok, error, started in samples if started > mounted_at + 0.01]
            assert after, err
            changed = [not ok and "no longer mounted" in error and "mountbench-over" in error for ok, error in after]
            assert all(changed), after
            leftovers = list(mp.iterdir())  # the sample in flight may have made its directory there
            for path in leftovers:
                assert any(str(path) in error for _ok, error in after), (path, after)
        finally:
            realmounts._check(["umount", "-l", str(mp)])


def test_resume_onto_a_fresh_tmpfs_that_reuses_the_device_number_is_refused(mb_env):
    """Issue 34 §2: unmounting a tmpfs and mounting a fresh one of the same source name reuses the
    device number; the run recorded what tells the two instances apart, so the resume is refused."""
    db = Path(mb_env["MOUNTBENCH_DB"])
    with realmounts.tmpfs("64m") as mp:
        run_id = _kill_after_first_sample(_start(mp, mb_env), db)
        stored = _samples(db)
        device = os.stat(mp).st_dev
        realmounts._check(["umount", str(mp)])
        realmounts._check(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "mountbench-test", str(mp)])
        reused = os.stat(mp).st_dev == device
        line = _refused_resume(run_id, mb_env)
        assert ("another instance of the filesystem" if reused else "device") in line, line
        assert list(mp.iterdir()) == []
        assert _samples(db) == stored
