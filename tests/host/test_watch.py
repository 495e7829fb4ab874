"""watch.py (and procfs.py): the host cost of processes around a sample, measured on real processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from mountbench.errors import UsageError
from mountbench.host.procfs import descendants, parse_stat, process_table
from mountbench.host.watch import Cost, Role, WatchSpec, Window, resolve_watch
from mountbench.model import HOST_COST_PARTIAL, Outcome

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {seconds}: pass\n"


def burner(tmp_path: Path, seconds: float) -> str:
    """A shell command line: a child that spends ``seconds`` of CPU, then exits."""
    script = tmp_path / "burn.py"
    script.write_text(BURN.format(seconds=seconds))
    return f"{sys.executable} {script}"


def cpu_of(pid: int) -> float:
    stat = parse_stat(Path(f"/proc/{pid}/stat").read_text())
    return stat.user + stat.sys + stat.child_user + stat.child_sys


def tree_of(pid: int):
    return lambda table: dict.fromkeys(descendants(table, [pid], set()), Role())


def wait_gone(pid: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_parse_stat_names_with_spaces_and_parentheses() -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    fields = ["S", "42"] + ["0"] * 9 + [str(3 * ticks), str(ticks), str(2 * ticks), "0"] + ["0"] * 30
    stat = parse_stat(f"1234 (tmux: server (1)) {' '.join(fields)}")
    assert stat.comm == "tmux: server (1)" and stat.ppid == 42
    assert (stat.user, stat.sys, stat.child_user, stat.child_sys) == (3.0, 1.0, 2.0, 0.0)


def test_cost_metrics_are_named_and_per_gib_needs_bytes() -> None:
    cost = Cost(cpu_user_s=1.5, cpu_sys_s=0.5, uss_peak=10 << 20, ctx_voluntary=7, ctx_involuntary=2, processes=3)
    metrics = cost.metrics("host", moved_bytes=2 * 1024**3)
    assert metrics["host.cpu_s"] == 2.0 and metrics["host.cpu_s_per_gib"] == 1.0
    assert metrics["host.uss_peak"] == 10 << 20 and metrics["host.ctx_voluntary"] == 7
    assert "host.cpu_s_per_gib" not in cost.metrics("host", moved_bytes=0)
    no_memory = Cost(1.0, 0.0, None, 0, 0, 1)
    assert "host.uss_peak" not in no_memory.metrics("nginx")


def test_a_child_born_during_the_window_counts_even_after_it_exited(tmp_path: Path) -> None:
    parent = subprocess.Popen(["sh", "-c", f"sleep 0.3; {burner(tmp_path, 0.4)}; exec sleep 60"])
    try:
        window = Window(tree_of(parent.pid)).start()
        deadline = time.monotonic() + 60
        while cpu_of(parent.pid) < 0.4 and time.monotonic() < deadline:  # the burner has been reaped by then
            time.sleep(0.05)
        cost = window.stop()
    finally:
        parent.kill()
        parent.wait()
    # all of the burner's CPU (reaped by a measured parent), not counted twice
    assert cost.cpu_s >= 0.4 - 0.005  # user + sys in clock ticks: 0.11 + 0.29 is 0.39999999999999997
    assert cost.cpu_s < 0.4 + 2.0
    assert cost.processes >= 2


def test_cpu_spent_before_the_window_is_not_counted() -> None:
    proc = subprocess.Popen([sys.executable, "-c", BURN.format(seconds=0.3) + "time.sleep(60)\n"])
    try:
        deadline = time.monotonic() + 60
        while cpu_of(proc.pid) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)
        window = Window(tree_of(proc.pid)).start()
        time.sleep(0.3)
        cost = window.stop()
    finally:
        proc.kill()
        proc.wait()
    assert cost.cpu_s < 0.1  # it only sleeps now


def test_peak_memory_and_context_switches_of_a_real_process() -> None:
    code = "import time\nblock = bytearray(48 << 20)\nfor i in range(0, len(block), 4096): block[i] = 1\n"
    code += "for _ in range(50): time.sleep(0.005)\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        window = Window(tree_of(proc.pid)).start()
        time.sleep(1.5)
        cost = window.stop()
    finally:
        proc.kill()
        proc.wait()
    assert cost.uss_peak is not None and cost.uss_peak >= 40 << 20
    assert cost.ctx_voluntary >= 20  # every sleep gives up the CPU


def test_excluded_threads_are_left_out_like_qemu_vcpus() -> None:
    """Two busy threads, one named as QEMU names a vCPU: measuring the same process with and
    without the exclusion differs by that thread's CPU."""
    code = (
        "import ctypes, threading, time\n"
        "def spin(name):\n"
        "    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)\n"
        "    end = time.monotonic() + 60\n"
        "    while time.monotonic() < end: pass\n"
        "for name in ('CPU 0/TCG', 'io-thread'):\n"
        "    threading.Thread(target=spin, args=(name,), daemon=True).start()\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.3)
        everything = Window(lambda t: {proc.pid: Role()}).start()
        without_vcpu = Window(lambda t: {proc.pid: Role(exclude_threads="CPU ", memory=False)}).start()
        time.sleep(1.5)
        lean = without_vcpu.stop()
        full = everything.stop()
    finally:
        proc.kill()
        proc.wait()
    assert full.cpu_s > 0.2
    assert lean.cpu_s < full.cpu_s * 0.8
    assert lean.uss_peak is None  # its memory does not count


@dataclass
class Detached:
    """A process that is not a child of this one (mountbench never watches its own children)."""

    pid: int

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        wait_gone(self.pid)


@pytest.fixture
def named_sleeper(tmp_path: Path):
    """A sleep process with a name no other process has (a copy of sleep), detached."""
    name = f"mbw{os.getpid() % 100000}"
    binary = tmp_path / name
    shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
    out = subprocess.run(["sh", "-c", f"{binary} 60 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True)
    proc = Detached(int(out.stdout))
    yield name, proc
    proc.stop()


def test_resolve_watch_refuses_what_is_not_running(named_sleeper) -> None:
    name, proc = named_sleeper
    assert resolve_watch([]) is None
    assert resolve_watch([name, str(proc.pid)]) is not None
    with pytest.raises(UsageError, match="no process named mbw-nothing-here is running"):
        resolve_watch(["mbw-nothing-here"])
    free_pid = max(process_table()) + 100000
    with pytest.raises(UsageError, match=f"--watch {free_pid}: no process has that PID"):
        resolve_watch([str(free_pid)])
    with pytest.raises(UsageError, match="mountbench itself"):
        resolve_watch([str(os.getpid())])
    child = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(UsageError, match="one of its children"):
            resolve_watch([str(child.pid)])
    finally:
        child.kill()
        child.wait()
    for bad in ("", "0", "/usr/bin/sshfs"):
        with pytest.raises(UsageError):
            WatchSpec.parse(bad)


def test_a_watch_tied_to_a_target_measures_only_around_its_samples(named_sleeper) -> None:
    """--watch sshfs=NAME: the daemon serving one mount is not what another mount costs."""
    name, proc = named_sleeper
    spec = WatchSpec.parse(f"sshfs={proc.pid}")
    assert (spec.target, spec.pid, spec.text) == ("sshfs", proc.pid, f"sshfs={proc.pid}")
    watch = resolve_watch([f"sshfs={name}"])
    assert watch is not None
    assert watch.start("tmpfs") is None  # no watch applies: the tmpfs sample gets no host.* figure
    window = watch.start("sshfs")
    assert window is not None
    time.sleep(0.15)
    assert window.stop().cost is not None
    watch.check_targets(["tmpfs", "sshfs"])
    with pytest.raises(UsageError, match="'sshfs' is not a target label; choose one of: tmpfs, disk"):
        watch.check_targets(["tmpfs", "disk"])
    for bad in ("sshfs=", "=sshfs"):
        with pytest.raises(UsageError, match="--watch LABEL=sshfs"):
            WatchSpec.parse(bad)


def test_a_watched_process_that_exits_mid_sample_gets_a_caveat(named_sleeper) -> None:
    name, proc = named_sleeper
    watch = resolve_watch([name])
    assert watch is not None
    window = watch.start()
    time.sleep(0.3)
    proc.stop()
    measured = window.stop()
    assert measured.cost is not None  # it ran for part of the sample
    texts = [c.text for c in measured.caveats]
    assert any(f"{name} (pid {proc.pid}) only until it exited" in t for t in texts), texts
    assert all(c.code == HOST_COST_PARTIAL for c in measured.caveats)
    # the next sample: not running at all, so no figure, only the caveat
    second = watch.start()
    time.sleep(0.15)
    missed = second.stop()
    assert missed.cost is None
    assert any("not running during this sample" in c.text for c in missed.caveats)
    outcome = missed.applied_to(Outcome({"read.bytes": 1.0}, ""))
    assert "host.cpu_s" not in outcome.metrics and outcome.caveats == missed.caveats


def test_applied_to_adds_host_metrics_with_cpu_per_gib(named_sleeper) -> None:
    name, _proc = named_sleeper
    watch = resolve_watch([name])
    assert watch is not None
    window = watch.start()
    time.sleep(0.2)
    outcome = window.stop().applied_to(Outcome({"read.bytes": float(1024**3), "read.bw": 1.0}, "raw"))
    assert outcome.metrics["read.bw"] == 1.0 and outcome.raw == "raw"
    assert outcome.metrics["host.cpu_s"] >= 0 and "host.cpu_s_per_gib" in outcome.metrics
    assert outcome.metrics["host.uss_peak"] > 0


def test_the_lab_measures_qemu_without_its_vcpus_and_memory() -> None:
    from mountbench.host.cost import QEMU_ROLE, roles_finder

    find = roles_finder(lambda: {"qemu": [10], "virtiofsd": [11, 12], "sshd": [13]})
    roles = find({})
    assert roles[10] == QEMU_ROLE and QEMU_ROLE.exclude_threads == "CPU " and not QEMU_ROLE.memory
    assert roles[11] == roles[12] == roles[13] == Role()
