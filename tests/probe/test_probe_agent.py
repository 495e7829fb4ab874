"""The probe agent and RemoteSide over a real channel, without a VM: the agent runs as a
separate process reading requests from a FIFO and answering on its stdout, as it does in
the lab guest (its /dev/ttyS1 and console). The split coherence checks then run with one
view on each side of that channel."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mountbench.host.scratch import PROBE_PREFIX
from mountbench.probe.agent import AgentError, AgentLink, RemoteSide
from mountbench.probe.coherence import OPERATIONS, STEPS, View, measure_views
from mountbench.probe.sides import LocalSide


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[RemoteSide]:
    fifo = tmp_path / "channel"
    os.mkfifo(fifo)
    agent = subprocess.Popen(
        [sys.executable, "-m", "mountbench.probe.agent", "--channel", str(fifo), "--idle", "60"],
        stdout=subprocess.PIPE,
        text=True,
    )
    writer = open(fifo, "w")  # noqa: SIM115 - open while the agent runs; blocks until the agent opened it

    def send(line: str) -> None:
        writer.write(line + "\n")
        writer.flush()

    link = AgentLink(send)
    noise: list[str] = []

    def pump() -> None:
        assert agent.stdout is not None
        for line in agent.stdout:
            if not link.feed(line.rstrip("\n")):
                noise.append(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        link.wait_hello(30)
        side = RemoteSide(link, "agent")
        yield side
        side.exit()
        assert agent.wait(10) == 0
    finally:
        writer.close()
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        reader.join(5)
    assert not noise, noise


def test_the_clock_is_matched_to_within_half_a_round_trip(remote: RemoteSide) -> None:
    resolution = remote.sync_clock()
    assert 0 <= resolution < 0.05
    # the agent's monotonic clock is this machine's own here: the offset found is within it
    assert abs(remote.to_local(1000.0) - 1000.0) <= resolution + 0.005


def test_steps_run_in_the_agent_and_errors_come_back(remote: RemoteSide, tmp_path: Path) -> None:
    done = remote.run("ping", str(tmp_path), timeout=5)
    assert (done.status, done.value) == ("ok", True)
    missing = remote.run("ping", str(tmp_path / "nowhere"), timeout=5)
    assert (missing.status, missing.errno) == ("oserror", "ENOENT")
    with pytest.raises(AgentError, match="unknown probe step 'rm_rf'"):
        remote.run("rm_rf", "/", timeout=5)


def test_a_directory_seen_from_both_sides_of_the_channel_is_coherent(remote: RemoteSide, tmp_path: Path) -> None:
    """One local directory, one view through the agent: every change shows, reads are fresh,
    locks block both ways; the delays carry the clock match's resolution."""
    remote.sync_clock()
    shared = tmp_path / "shared"
    shared.mkdir()
    local = LocalSide(STEPS, "host")
    here, there = View(local, str(shared), "here"), View(remote, str(shared), "there")
    for a, b, scratch_in in ((here, there, "a"), (there, here, "b")):
        result = measure_views(a, b, repeat=1, timeout=2.0, scratch_in=scratch_in)  # type: ignore[arg-type]
        assert (result.view_a, result.view_b) == (a.label, b.label)
        for op in OPERATIONS:
            assert result.visibility_of(op).summary.seen == 1, (op, result.visibility_of(op))
        assert all(s.outcomes == ("fresh",) for s in result.stale_reads)
        assert result.inotify.complete == 1
        assert all(lk.blocked == (True,) for lk in result.locks), result.locks
        assert result.clock_resolution_ms is not None and result.clock_resolution_ms < 50
        assert result.cleanup == "removed" and result.error is None
    assert not [n for n in os.listdir(shared) if n.startswith(PROBE_PREFIX)]
