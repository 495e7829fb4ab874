"""The child-process sandbox: answers, errors, signals, hangs (and helpers killed with it)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from mountbench.probe.sandbox import Child, reap_stragglers, run_isolated


def _double(x: int) -> int:
    return 2 * x


def _oserror() -> None:
    raise FileNotFoundError(2, "No such file or directory", "/nonexistent")


def _bug() -> None:
    raise ZeroDivisionError("a bug")


def _sigbus() -> None:
    os.kill(os.getpid(), signal.SIGBUS)
    time.sleep(5)


def _sleep_with_helper(pidfile: str) -> None:
    """Sleep, with a helper process of our own that also sleeps (both must be killed)."""
    helper = os.fork()
    if helper == 0:  # pragma: no cover - helper
        time.sleep(60)
        os._exit(0)
    Path(pidfile).write_text(f"{os.getpid()} {helper}")
    time.sleep(60)


def _big() -> str:
    return "x" * 1_000_000


def _not_json() -> object:
    return {1, 2}


def test_returns_the_value() -> None:
    out = run_isolated(_double, 21, timeout=5)
    assert (out.status, out.value) == ("ok", 42)


def test_large_answers_pass_through_the_pipe() -> None:
    out = run_isolated(_big, timeout=10)
    assert out.status == "ok" and len(out.value) == 1_000_000


def test_oserror_keeps_its_errno_name() -> None:
    out = run_isolated(_oserror, timeout=5)
    assert out.status == "oserror"
    assert out.errno == "ENOENT"


def test_a_bug_is_a_crash_with_its_traceback() -> None:
    out = run_isolated(_bug, timeout=5)
    assert out.status == "crash"
    assert "ZeroDivisionError" in out.message


def test_unserialisable_result_is_a_crash() -> None:
    out = run_isolated(_not_json, timeout=5)
    assert out.status == "crash"


def test_death_by_signal_is_reported() -> None:
    out = run_isolated(_sigbus, timeout=5)
    assert out.status == "signal"
    assert "SIGBUS" in out.message


def test_hang_is_cut_at_the_timeout_and_kills_helpers(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    t0 = time.monotonic()
    out = run_isolated(_sleep_with_helper, str(pidfile), timeout=0.5)
    elapsed = time.monotonic() - t0
    assert out.status == "hung"
    assert elapsed < 0.5 + 1.0
    child, helper = (int(x) for x in pidfile.read_text().split())
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and _alive(helper):
        time.sleep(0.02)
    assert not _alive(child)
    assert not _alive(helper), "the probe's helper process survived the timeout"
    assert reap_stragglers() == 0


def test_poll_leaves_the_child_running() -> None:
    child = Child(time.sleep, 0.4)
    assert child.poll(0.05) is None
    out = child.wait(5)
    assert out.status == "ok"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("timeout", [0.0, 0.2])
def test_tiny_timeouts_do_not_raise(timeout: float) -> None:
    out = run_isolated(time.sleep, 2, timeout=timeout)
    assert out.status == "hung"


def _die_leaving_a_helper() -> None:
    if os.fork() == 0:  # pragma: no cover - helper: keeps the answer pipe open
        time.sleep(60)
        os._exit(0)
    os.kill(os.getpid(), signal.SIGBUS)


def test_death_is_seen_even_while_a_helper_holds_the_pipe() -> None:
    t0 = time.monotonic()
    out = run_isolated(_die_leaving_a_helper, timeout=5)
    assert out.status == "signal" and "SIGBUS" in out.message
    assert time.monotonic() - t0 < 2.0
