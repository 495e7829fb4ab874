"""Every lab resumes (issue 52): a `mountbench lab` run killed (`kill -9`) once its first samples are
stored on the host is finished by `lab --resume` in a guest made again as the run recorded it: the
guest is handed the run as the host stored it and takes only what is left; what was stored is kept
as it was, and the killed run's guest directory is swept by the next guest."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def _mountbench(*args: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mountbench", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)  # fmt: skip


def _guest_dirs_of(pid: int) -> list[Path]:
    """The QEMU lab's work directories whose owner is ``pid`` (the guest's own record of who made it)."""
    found = []
    for path in Path(tempfile.gettempdir()).glob("mountbench-lab-*"):
        try:
            if (path / "owner").read_text().split()[0] == str(pid):
                found.append(path)
        except (OSError, IndexError):
            continue
    return found


def test_a_killed_lab_run_is_resumed_in_a_guest_made_again(lab_ready: None, tmp_path: Path, mb_env: dict[str, str]):
    db = Path(mb_env["MOUNTBENCH_DB"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "mountbench", "lab", "--mount", "guest-tmpfs", "--mount", "9p", "--preset", "quick",
         "--only", "rnd4k-q1-read", "--runtime", "0.3", "--size", "4M", "--repeat", "3", "--accel", "tcg"],
        env=mb_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    stored: list[tuple[str, str, int, float]] = []
    deadline = time.monotonic() + 900  # a boot under TCG on a busy machine: the wait decides nothing but a skip
    while len(stored) < 2:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, said = proc.communicate()
            pytest.fail(f"no two samples stored before the run ended or 900 s passed: {said[-2000:]}")
        time.sleep(0.5)
        if db.exists():
            with sqlite3.connect(db) as conn:
                stored = conn.execute("SELECT run_id, target, round, started_at FROM samples").fetchall()
    left = _guest_dirs_of(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # mountbench alone: its guest and daemons die with it (PR_SET_PDEATHSIG)
    proc.wait(timeout=60)
    run_id = stored[0][0]
    assert left, "the killed run's guest directory is left for the next guest to sweep"

    wrong = _mountbench("run", "--resume", run_id, env=mb_env, timeout=60)
    assert wrong.returncode == 2 and f"mountbench lab --resume {run_id}" in wrong.stderr, wrong.stderr

    out = tmp_path / "resumed.json"
    done = _mountbench("lab", "--resume", run_id, "--json", str(out), env=mb_env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"lab: resuming run {run_id}" in done.stderr
    (run,) = json.loads(out.read_text())["runs"]
    assert run["status"] == "complete"
    labels = [t["label"] for t in run["targets"]]
    assert len(labels) == 2
    taken = sorted((s["target"], s["round"]) for s in run["samples"] if s["ok"])
    assert taken == sorted((label, r) for label in labels for r in (0, 1, 2))
    before = {(target, rnd): at for _, target, rnd, at in stored}
    kept = {(s["target"], s["round"]): s["started_at"] for s in run["samples"]}
    assert all(kept[key] == at for key, at in before.items())  # stored before the kill, kept as it was
    assert all("host.cpu_s" in s["metrics"] and "guest.cpu_s" in s["metrics"] for s in run["samples"])
    assert run["config"]["lab"]["name"] == "qemu" and run["config"]["baseline"] == "guest-tmpfs"
    assert not any(path.exists() for path in left), "the next guest swept the killed run's directory"
