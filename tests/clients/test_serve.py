"""mountbench serve: fio's server on loopback by default, the agent next to it, a clean stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support.tools import needs_fio

from mountbench.clients import agent
from mountbench.clients.addresses import ClientSpec

pytestmark = pytest.mark.slow


def two_free_ports() -> int:
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
        with socket.socket() as b:
            try:
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two consecutive free ports")


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mountbench", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            with socket.create_connection(("127.0.0.1", port + 1), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("serve did not start")


def test_serve_listens_on_loopback_only_answers_and_stops_cleanly(tmp_path):
    needs_fio()
    port = two_free_ports()
    proc = start("--port", str(port))
    try:
        wait_listening(port, proc)
        fio_pids = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        listening = {
            (c.laddr.ip, c.laddr.port)
            for c in psutil.net_connections("tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr.port in (port, port + 1)
        }
        assert listening == {("127.0.0.1", port), ("127.0.0.1", port + 1)}
        job = tmp_path / "null.fio"
        job.write_text("[n]\nioengine=null\nsize=4k\n")
        done = subprocess.run(["fio", f"--client=127.0.0.1,{port}", str(job)], capture_output=True, text=True,
                              timeout=60)  # fmt: skip
        assert "hostname=" in done.stdout and "err= 0" in done.stdout, done.stdout + done.stderr
        facts = agent.query_facts(ClientSpec("127.0.0.1", port), [str(tmp_path)])
        assert facts is not None and facts["paths"][str(tmp_path)]["fstype"] not in ("", "unknown")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"server listening on 127.0.0.1:{port}" in err and "fio-" in err and "(loopback)" in err
    # loopback keeps the network out, not this machine's other users: it says so, and what to prefer
    assert "every user of this machine can run fio jobs here, and commands through them" in " ".join(err.split())
    assert "prefer 'mountbench run --client ssh://HOST'" in " ".join(err.split())
    assert err.strip().endswith("stopped")
    assert not [pid for pid in fio_pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]


def test_a_taken_port_is_a_one_line_error():
    needs_fio()
    port = two_free_ports()
    with socket.create_server(("127.0.0.1", port + 1)):
        proc = start("--port", str(port))
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert len(err.strip().splitlines()) == 1 and "choose another --port" in err


def test_a_port_another_fio_server_listens_on_is_refused_before_anything_says_listening():
    """fio sets SO_REUSEPORT: a second fio server of this user would bind the same port and
    share its connections silently. serve refuses the port in one line and never says it listens."""
    needs_fio()
    port = two_free_ports()
    other = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in psutil.net_connections("tcp")):
            assert time.monotonic() < deadline and other.poll() is None
            time.sleep(0.05)
        proc = start("--port", str(port))
        _, err = proc.communicate(timeout=60)
    finally:
        other.kill()
        other.wait(timeout=10)
    assert proc.returncode == 2, err
    (line,) = err.strip().splitlines()
    assert f"fio's server cannot listen on 127.0.0.1:{port}" in line and "choose another --port" in line
    assert "listening" not in err


def test_serve_stops_when_another_fio_server_shares_its_port_later():
    """A fio server started after serve's, on its port (SO_REUSEPORT: same user), would take
    some of its connections: serve notices within seconds, says why and stops."""
    needs_fio()
    port = two_free_ports()
    proc = start("--port", str(port))
    other = None
    try:
        wait_listening(port, proc)
        other = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        _, err = proc.communicate(timeout=30)
    finally:
        for each in (proc, other):
            if each is not None and each.poll() is None:
                each.kill()
    assert proc.returncode != 0
    said = " ".join(err.split())
    assert f"another process now listens on 127.0.0.1:{port} too" in said and "stopped so that none does" in said


def test_an_agent_that_is_not_the_clients_is_not_believed():
    """Port + 1 answers, but for another fio port: no facts (the client counts as plain fio)."""
    served = agent.Agent(fio_port=1, fio_version="fio-3.33")
    server = agent.serve_agent(served, "127.0.0.1", 0)
    try:
        client = ClientSpec("127.0.0.1", server.server_address[1] - 1)
        assert agent.query_facts(client, []) is None
        with pytest.raises(agent.AgentError, match="belongs to the fio server on 1"):
            agent.call(client, {"op": "facts"})
        served.fio_port = client.port
        assert agent.query_facts(client, [])["fio_version"] == "fio-3.33"
        with pytest.raises(agent.AgentError, match="unknown op 'rm'"):
            agent.call(client, {"op": "rm", "path": "/"})
    finally:
        server.shutdown()
        server.server_close()


def test_the_probe_session_runs_steps_only_in_probe_scratch_directories(tmp_path):
    """serve's side channel carries probe/agent.py's protocol; anyone on the network may
    reach it, so a step outside a ``.mountbench-probe-*`` directory is refused before it runs."""
    from mountbench.clients.remoteprobe import connected
    from mountbench.host.scratch import PROBE_PREFIX
    from mountbench.probe.agent import AgentError

    served = agent.Agent(fio_port=1, fio_version="fio-3.33")
    server = agent.serve_agent(served, "127.0.0.1", 0)
    served.fio_port = server.server_address[1] - 1
    try:
        with connected(ClientSpec("127.0.0.1", served.fio_port)) as side:
            assert side.resolution_s < 0.05
            victim = tmp_path / "vis-append-0"
            victim.write_text("keep")
            for step, args in (("vis_setup", [str(tmp_path), "append", 0]),
                               ("remove_probe_scratch", [str(tmp_path / f"{PROBE_PREFIX}x"), None]),
                               ("create_scratch_step", [str(tmp_path), "../x", "{}"]),
                               ("capabilities_to_file", [str(tmp_path), 1.0, str(tmp_path / "out")])):  # fmt: skip
                with pytest.raises(AgentError, match=r"not a probe scratch directory|token|plain|unknown probe step"):
                    side.run(step, *args, timeout=5)
            assert victim.read_text() == "keep" and sorted(p.name for p in tmp_path.iterdir()) == ["vis-append-0"]
            scratch = tmp_path / f"{PROBE_PREFIX}0123"
            scratch.mkdir()
            done = side.run("vis_setup", str(scratch), "append", 0, timeout=5)
            assert done.status == "ok" and (scratch / "vis-append-0").stat().st_size == 4096
            refused = side.run("vis_setup", str(scratch), "../../x", 0, timeout=5)
            assert refused.status == "crash" and "unknown operation" in refused.message
    finally:
        server.shutdown()
        server.server_close()


def test_serves_own_directory_goes_with_it_and_a_killed_serves_with_the_next(tmp_path):
    """fio's server runs in a directory of serve's own (the start barrier's script, what
    exec_prerun writes): removed on a clean stop; after a SIGKILL, by the next serve; a
    directory of the same name that holds no barrier script, or whose process lives, stays."""
    needs_fio()
    env = {**os.environ, "TMPDIR": str(tmp_path)}

    def serve_once(kill: bool) -> Path:
        port = two_free_ports()
        proc = subprocess.Popen([sys.executable, "-m", "mountbench", "serve", "--port", str(port)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            wait_listening(port, proc)
            (home,) = tmp_path.glob(f"mountbench-serve-{proc.pid}-*")
            facts = agent.query_facts(ClientSpec("127.0.0.1", port), [])
            assert facts is not None and facts["barrier_script"] == str(home / "barrier.sh")
            assert (home / "barrier.sh").is_file() and agent.clock_facts(ClientSpec("127.0.0.1", port))
            proc.send_signal(signal.SIGKILL if kill else signal.SIGINT)
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        return home

    assert not serve_once(kill=False).exists()
    foreign = tmp_path / "mountbench-serve-1-notours"  # pid 1 lives; and it holds no barrier script
    foreign.mkdir()
    killed = serve_once(kill=True)
    assert killed.exists()  # nothing could remove it
    serve_once(kill=False)
    assert not killed.exists() and foreign.exists()
