"""Stopping a child stops everything it started: fio's job processes each call setsid(), so
signalling fio's process group reaches its main process only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from support.tools import needs_fio

from mountbench.host.contain import Fence
from mountbench.host.process import die_with_parent, last_lines, run_child, spawn, stop_tree, stream, tcp_listeners


def _fio(directory: Path) -> list[str]:
    return ["fio", "--name=stoptest", f"--directory={directory}", "--rw=randread", "--bs=4k", "--size=4M",
            "--numjobs=2", "--time_based", "--runtime=60", "--ioengine=psync"]  # fmt: skip


def _running_jobs(directory: Path) -> list[int]:
    """fio processes working in ``directory`` that are still running (zombies are not)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = proc.info["cmdline"] or []
        if f"--directory={directory}" in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc.pid)
    return found


def _wait_for_jobs(directory: Path, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(_running_jobs(directory)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_running_jobs(directory)) >= count, "fio did not start its jobs"


def test_a_timed_out_fio_leaves_none_of_its_job_processes_running(tmp_path: Path) -> None:
    """The time-limit path SIGKILLs: fio's main process cannot tell its jobs to stop."""
    needs_fio()
    started = time.monotonic()
    done = run_child(_fio(tmp_path), fence=Fence.of([tmp_path]), timeout=3)
    assert done.timed_out
    assert _running_jobs(tmp_path) == []
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_stop_tree_returns_once_fio_and_its_jobs_are_gone(tmp_path: Path, first: signal.Signals) -> None:
    needs_fio()
    proc = subprocess.Popen(_fio(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        _wait_for_jobs(tmp_path, 3)  # the main process and two jobs
        stop_tree(proc, first)
        assert proc.returncode is not None
        assert _running_jobs(tmp_path) == []
    finally:
        if proc.poll() is None:
            proc.kill()


def test_ctrl_c_in_run_child_stops_the_jobs_before_it_propagates(tmp_path: Path) -> None:
    """A KeyboardInterrupt while waiting: fio gets SIGINT, and run_child raises only once the
    jobs are gone (what `mountbench run` relies on when Ctrl-C ends a run)."""
    needs_fio()
    main = threading.main_thread().ident
    assert main is not None

    def interrupt() -> None:
        _wait_for_jobs(tmp_path, 3)
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run_child(_fio(tmp_path), fence=Fence.of([tmp_path]), timeout=60)
    assert _running_jobs(tmp_path) == []


def test_last_lines_quotes_the_last_distinct_lines_of_what_a_tool_said() -> None:
    said = "tar: a: Cannot open\n\n  tar: b: Cannot open  \ntar: b: Cannot open\ntar: Exiting with failure status\n"
    assert last_lines(said) == "tar: Exiting with failure status"
    assert last_lines(said, 2) == "tar: b: Cannot open; tar: Exiting with failure status"
    assert last_lines("x" * 500) == "x" * 300 and last_lines("y" * 500, limit=10) == "y" * 10
    assert last_lines(" \n") == "no message" and last_lines("", empty="") == ""


def test_tcp_listeners_finds_a_listening_socket_by_address_port_and_inode() -> None:
    import os
    import socket

    with socket.socket(socket.AF_INET6) as v6, socket.socket() as v4:
        v4.bind(("127.0.0.1", 0))
        v6.bind(("::1", 0))
        assert not any(port == v4.getsockname()[1] for _, port, _ in tcp_listeners())  # bound, not listening
        v4.listen()
        v6.listen()
        ours = {("127.0.0.1", v4.getsockname()[1], str(os.fstat(v4.fileno()).st_ino)),
                ("::1", v6.getsockname()[1], str(os.fstat(v6.fileno()).st_ino))}  # fmt: skip
        assert ours <= set(tcp_listeners())
        assert ours <= set(tcp_listeners(f"/proc/{os.getpid()}/net"))  # our own namespace, by pid


def _exit_code_of_forked(body) -> int:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(body())
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_child_whose_parent_died_before_its_death_signal_was_set_ends_at_once() -> None:
    """PR_SET_PDEATHSIG set once the parent is gone sends nothing; the child checks its parent
    after setting it and ends (a kill -9 of a cloud-lab run as its probe workers started left
    one running). A child of the noted parent lives on."""
    set_in_child = die_with_parent(signal.SIGKILL)  # notes this process as the parent

    def child() -> int:
        set_in_child()
        return 0

    assert _exit_code_of_forked(child) == 0
    # a grandchild's parent is not the noted one, as an orphan's is not (reparented to init)
    assert _exit_code_of_forked(lambda: _exit_code_of_forked(child)) == 1


def test_a_childs_two_streams_reach_the_progress_line_by_line_never_cut(tmp_path: Path) -> None:
    """Issue 49: the first container round's progress line began with a cut table border and U+FFFD
    ("container: ┏━━…━�run … complete"): stdout (block-buffered, its table leaving in 8 KiB chunks cut
    inside a character) and stderr (a line at a time) shared one pipe and were decoded by chunks. A real
    child writes exactly that; every line arrives whole, stdout's and stderr's apart."""
    child = tmp_path / "child.py"
    # as a relay passes them on (conmon reads a container's stdout 8 KiB at a time; a block-buffered stdout
    # leaves in such blocks): the table's first block ends inside a character, then a stderr line
    child.write_text(
        "import os\n"
        "table = ('━' * 4000 + '\\n').encode()\n"
        "os.write(1, table[:8192])\n"
        "os.write(2, b'run 1 complete: 1 samples stored, 0 failed\\n')\n"
        "os.write(1, table[8192:])\n"
        "os.write(1, b'not utf-8: \\xff\\n')\n"
    )
    lines: list[str] = []
    proc = spawn([sys.executable, str(child)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stream(proc, lines.append)
    assert proc.wait() == 0
    whole = [line for line in lines if not line.startswith("not utf-8")]
    assert "\ufffd" not in "".join(whole), "a line was cut or mixed with the other stream's"
    assert sorted(lines) == sorted(["━" * 4000, "run 1 complete: 1 samples stored, 0 failed", "not utf-8: \ufffd"])
