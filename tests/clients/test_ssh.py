"""run --client ssh://…: real sshd instances in network namespaces made here (key-based,
an ssh config and known_hosts in the test's directory, given to mountbench through
$MOUNTBENCH_SSH_CONFIG), a shared tmpfs they all see, and nothing started on them by hand:
mountbench logs in, starts fio's server, tunnels it and stops it. The fourth namespace's
sshd puts a wrapper first on its sessions' PATH that says it is another fio version."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from support import listeners, netns, realmounts, sshd
from support.runhelpers import mountbench, plant_neighbours, snapshot, start_mountbench, wait_for_samples

from mountbench.clients.results import ACTIVE, FEWER_CLIENTS, START_OFFSET
from mountbench.clients.sshremote import CHECK_S
from mountbench.fio.parse import load_fio_json
from mountbench.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.root]

QUICK = ["--only", "rnd4k-q1-read", "--size", "8M"]
WRONG_FIO = "fio-3.1"


@dataclass
class Lab:
    shared: Path
    namespaces: list[netns.NetNs]
    ssh: sshd.SshSetup
    env: dict[str, str]
    cache: Path  # the clients' ${XDG_CACHE_HOME}: where mountbench keeps its remote run directories

    @property
    def args(self) -> list[str]:
        return [f"--client=ssh://{s.name}" for s in self.ssh.servers[:3]]

    def target(self, name: str) -> Path:
        path = self.shared / name
        path.mkdir()
        return path

    def load(self, run_id: str = "last", *, raw: bool = False):
        with Store(Path(self.env["MOUNTBENCH_DB"])) as store:
            return store.load_run(run_id, with_raw=raw)

    def samples_so_far(self) -> int:
        with Store(Path(self.env["MOUNTBENCH_DB"])) as store:
            return sum(len(store.load_run(r["id"]).samples) for r in store.list_runs())

    def ours_running(self) -> list[str]:
        """Processes of ours: anything carrying the remote-run marker, and ssh clients using
        this test's config (the sshd listeners excepted)."""
        found = [f"marked pid {pid}" for pid in sshd.processes_with_marker()]
        listeners = {s.proc.pid for s in self.ssh.servers}
        for proc in psutil.process_iter(["pid", "cmdline"]):
            cmdline = " ".join(proc.info["cmdline"] or [])
            if str(self.ssh.config) in cmdline and proc.info["pid"] not in listeners:
                found.append(f"{proc.info['pid']}: {cmdline[:120]}")
        return found

    def settled(self) -> list[str]:
        sshd.wait_until(lambda: not self.ours_running(), timeout=20)
        return self.ours_running()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("ssh")
    cache = base / "cache"
    cache.mkdir()
    wrapper = base / "wrongfio"
    wrapper.mkdir()
    (wrapper / "fio").write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo {WRONG_FIO}; exit 0; fi\nexec fio "$@"\n'
    )
    (wrapper / "fio").chmod(0o755)
    path = "/usr/local/bin:/usr/bin:/bin"
    env_of = {i: {"XDG_CACHE_HOME": str(cache), "PATH": path} for i in range(3)}
    env_of[3] = {"XDG_CACHE_HOME": str(cache), "PATH": f"{wrapper}:{path}"}
    with ExitStack() as stack:
        try:
            shared = stack.enter_context(realmounts.tmpfs("256m"))
            namespaces = stack.enter_context(netns.clients(4))
            setup = sshd.setup(base / "keys", namespaces, env_of)
        except realmounts.Unavailable as exc:
            pytest.skip(f"ssh client namespaces cannot be made here: {exc}")
        stack.callback(sshd.stop, setup.servers)
        env = dict(os.environ, MOUNTBENCH_DB=str(base / "results.sqlite"), MOUNTBENCH_SSH_CONFIG=str(setup.config),
                   COLUMNS="200")  # tables wide enough that a cell's words stay on one line  # fmt: skip
        yield Lab(shared, namespaces, setup, env, cache)
    assert netns.leftovers() == []


@pytest.fixture
def ready(lab: Lab) -> Lab:
    for index, server in enumerate(lab.ssh.servers):
        if not server.alive():
            sshd.restart(lab.ssh, index)
    return lab


def test_three_ssh_clients_from_nothing_started_by_hand_and_nothing_left(ready):
    target = ready.target("main")
    before = plant_neighbours(target)
    assert not ready.ours_running()
    done = mountbench("run", *ready.args, f"share={target}", *QUICK, "--runtime", "1", "--repeat", "2",
                      "--per-client", env=ready.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Start skew" in done.stdout
    run = ready.load(raw=True)
    labels = ["ssh://ns1", "ssh://ns2", "ssh://ns3"]
    assert run.status == "complete" and len(run.samples) == 2
    for sample in run.samples:
        assert sample.ok, sample.error
        assert [c.client for c in sample.clients] == labels
        assert sample.metrics["read.iops"] == pytest.approx(sum(c.metrics["read.iops"] for c in sample.clients))
        starts = [c.metrics[START_OFFSET] for c in sample.clients]
        assert min(starts) == 0 and max(starts) < 1.0, starts  # each client's own clock, offsets removed
        assert all(0.5 < c.metrics[ACTIVE] < 1.5 for c in sample.clients)
        barriers = [e["job options"].get("exec_prerun", "").rsplit(" ", 1)[-1]
                    for e in load_fio_json(sample.raw)["client_stats"] if e["jobname"] != "All clients"]  # fmt: skip
        instants = [int(b) for b in barriers]  # one per client, moved by its clock offset: two may be equal
        assert len(instants) == 3 and max(instants) - min(instants) < 5e6, instants
    facts = run.host["clients"]
    assert set(facts) == set(labels)
    for label in labels:
        f = facts[label]
        assert f["server"] == "fio --server over ssh" and f["fio_version"] == run.host["fio_version"]
        assert f["kernel"] == os.uname().release and f["cpu_count"] == os.cpu_count()
        assert f["paths"][str(target)]["fstype"] == "tmpfs"
        assert abs(f["clock_offset_ms"]) <= f["clock_uncertainty_ms"] + 1  # one kernel, one clock
        assert f["fio_server"].startswith("unix socket ")  # no TCP port: a private socket, through the SSH tunnel
    assert snapshot(target) == before
    assert ready.settled() == [], "something mountbench started is still running"
    assert not list((ready.cache / "mountbench" / "remote").iterdir()), "a remote run directory was left"


def test_a_client_with_another_fio_is_refused_in_one_line_and_nothing_is_left(ready):
    target = ready.target("wrongfio")
    done = mountbench("run", "--client=ssh://ns1", "--client=ssh://ns4", f"share={target}", *QUICK, env=ready.env)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"client ssh://ns4 runs {WRONG_FIO} but this controller runs fio-" in lines[0]
    assert "ns1" not in lines[0]
    assert ready.settled() == []
    assert not list(target.iterdir())


def test_a_host_dropping_mid_run_fails_its_sample_by_name_and_the_rest_run_on(ready):
    target = ready.target("drop")
    before = plant_neighbours(target)
    db = Path(ready.env["MOUNTBENCH_DB"])
    already = ready.samples_so_far()
    proc = start_mountbench("run", *ready.args, f"share={target}", *QUICK, "--runtime", "2", "--repeat", "3",
                            env=ready.env)  # fmt: skip
    try:
        wait_for_samples(db, already + 1, timeout=120)
        time.sleep(1.0)  # the second sample is under way
        ready.ssh.servers[1].kill()  # ns2's sshd, its sessions and the fio server they started
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    run = ready.load()
    assert run.status == "complete" and len(run.samples) == 3
    first, during, after = run.samples
    assert first.ok and len(first.clients) == 3
    assert not during.ok and during.error.startswith("client ssh://ns2 "), during.error
    assert after.ok, after.error
    assert [c.client for c in after.clients] == ["ssh://ns1", "ssh://ns3"]
    (fewer,) = [c for c in after.caveats if c.code == FEWER_CLIENTS]
    assert "ran on 2 of 3 clients: ssh://ns2" in fewer.text
    # the cell is marked in the run's own report
    assert "1 of 3 on fewer clients than asked" in " ".join(out.replace("│", " ").split())
    assert snapshot(target) == before
    assert ready.settled() == []


def test_killed_controller_leaves_nothing_and_leftovers_are_ended_by_their_marker(ready):
    target = ready.target("killed")
    db = Path(ready.env["MOUNTBENCH_DB"])
    already = ready.samples_so_far()
    proc = start_mountbench("run", *ready.args[:2], f"share={target}", *QUICK, "--runtime", "3", "--repeat", "3",
                            env=ready.env)  # fmt: skip
    try:
        wait_for_samples(db, already + 1, timeout=120)
        assert sshd.processes_with_marker(), "the clients' fio servers should be running"
        controls = list(Path("/tmp").glob(f"mb-ssh-{proc.pid}-*"))
        assert controls, "the run's ssh control directory"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    # the kernel ends the local ssh processes (PDEATHSIG); each remote watcher sees its session
    # close and ends the processes carrying its marker
    assert ready.settled() == []

    # a leftover whose watcher was killed too: a real fio server carrying an old run's marker
    old = ready.cache / "mountbench" / "remote" / "20000101-000000-deadbeef-0"
    old.mkdir(parents=True)
    (old / "watcher.pid").write_text("999999999\n")
    ns = ready.namespaces[0]
    leftover = subprocess.Popen(ns.command("fio", "--server=ip:127.0.0.1,8799"), cwd=old, start_new_session=True,
                                env=dict(os.environ, MOUNTBENCH_REMOTE_RUN=old.name),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        assert sshd.wait_until(lambda: leftover.pid in sshd.processes_with_marker(f"MOUNTBENCH_REMOTE_RUN={old.name}"))
        done = mountbench("run", *ready.args[:1], f"share={target}", *QUICK, "--runtime", "0.5", "--repeat", "1",
                          env=ready.env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        said = " ".join(done.stderr.split())  # notes wrap at the terminal's width
        assert "ended 1 process(es) left by an earlier run (20000101-000000-deadbeef-0)" in said
        assert not any(c.exists() for c in controls), "the killed run's control directory is swept"
        assert leftover.wait(timeout=10) is not None and not old.exists()
    finally:
        if leftover.poll() is None:
            leftover.kill()
    assert ready.settled() == []


def test_ctrl_c_stops_every_remote_server_and_resume_starts_them_again(ready, tmp_path):
    target = ready.target("interrupted")
    before = plant_neighbours(target)
    hosts = tmp_path / "hosts"
    hosts.write_text("# the three namespaces\nns1\nns2\nssh://ns3\n")
    db = Path(ready.env["MOUNTBENCH_DB"])
    already = ready.samples_so_far()
    proc = start_mountbench("run", "--hosts-file", str(hosts), f"share={target}", *QUICK, "--runtime", "3",
                            "--repeat", "2", env=ready.env)  # fmt: skip
    try:
        wait_for_samples(db, already + 1, timeout=120)
        time.sleep(1.5)  # inside the second sample
        assert sshd.processes_with_marker()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert ready.settled() == []
    run = ready.load()
    assert run.status == "interrupted" and len(run.samples) == 1
    assert [c.client for c in run.samples[0].clients] == ["ssh://ns1", "ssh://ns2", "ssh://ns3"]

    done = mountbench("run", "--resume", run.id, env=ready.env)
    assert done.returncode == 0, done.stderr
    run = ready.load(run.id)
    assert run.status == "complete" and len(run.samples) == 2 and all(s.ok for s in run.samples)
    assert snapshot(target) == before
    assert ready.settled() == []


def test_dry_run_starts_nothing_on_the_clients(ready):
    target = ready.target("dry")
    done = mountbench("run", *ready.args, f"share={target}", *QUICK, "--dry-run", env=ready.env)
    assert done.returncode == 0, done.stderr
    assert "# --client=ssh://ns1 (through its SSH tunnel)" in done.stdout
    assert ready.ours_running() == [] and not list(target.iterdir())


def test_a_host_cut_off_mid_run_is_lost_by_its_ssh_keepalive_and_the_rest_run_on(ready):
    """Its route goes (No route to host) in the second sample; its sshd and fio keep running.
    The SSH connection's keepalives fail within ~6 s; the watcher there stops fio's server
    when the heartbeats stop."""
    target = ready.target("cutoff")
    before = plant_neighbours(target)
    db = Path(ready.env["MOUNTBENCH_DB"])
    already = ready.samples_so_far()
    ns = ready.namespaces[2]
    proc = start_mountbench("run", *ready.args, f"share={target}", *QUICK, "--runtime", "2", "--repeat", "3",
                            env=ready.env)  # fmt: skip
    returncode, err, took = netns.run_cut_off_mid_sample(
        proc, ns, lambda: wait_for_samples(db, already + 1, timeout=120)
    )
    assert returncode == 0, err
    assert took < 90
    run = ready.load()
    (during,) = [s for s in run.samples if not s.ok]
    assert during.error.startswith("client ssh://ns3 "), during.error
    after = run.samples[run.samples.index(during) + 1 :]
    assert after and all(s.ok and [c.client for c in s.clients] == ["ssh://ns1", "ssh://ns2"] for s in after)
    assert snapshot(target) == before
    # ns3's sshd does not know its client is gone (no data was in flight): the watcher there
    # stops fio's server once it has heard no heartbeat for CHECK_S
    sshd.wait_until(lambda: not ready.ours_running(), timeout=2 * CHECK_S + 10)
    assert ready.ours_running() == []


def _run_processes(proc: subprocess.Popen) -> set[int]:
    """The run's processes: mountbench and what it started here (its ssh processes), and on
    the clients everything carrying its markers (fio's server, its jobs, the watchers)."""
    with suppress(psutil.NoSuchProcess):
        here = {proc.pid, *(child.pid for child in psutil.Process(proc.pid).children(recursive=True))}
    there = set(sshd.processes_with_marker()) | set(sshd.processes_with_marker("MOUNTBENCH_REMOTE_WATCH="))
    return here | there


def test_no_other_user_can_reach_anything_an_ssh_run_listens_on(ready):
    """As `nobody`, during a real run on two clients: every socket the run's processes listen
    on (here and on the clients) refuses the connection, and none of them is a TCP or UDP port.
    The old hole, fio's server on the client's loopback port 8765, is tried too."""
    target = ready.target("nobody")
    db = Path(ready.env["MOUNTBENCH_DB"])
    already = ready.samples_so_far()
    proc = start_mountbench("run", *ready.args[:2], f"share={target}", *QUICK, "--runtime", "2", "--repeat", "2",
                            env=ready.env)  # fmt: skip
    try:
        wait_for_samples(db, already + 1, timeout=120)
        found = listeners.listening(_run_processes(proc))
        tried = listeners.attempt_as("nobody", found)
        old_hole = listeners.Listener("tcp", "127.0.0.1:8765", 0, "fio")
        in_client = listeners.attempt_as("nobody", [old_hole], ready.namespaces[0].command())
        _out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert [item for item in found if item.kind != "unix"] == [], "no TCP or UDP port, here or on a client"
    paths = [item.where for item in found]
    assert sum(p.endswith("/fio.sock") for p in paths) == 2, paths  # each client's fio server
    assert sum(p.endswith(".fio") for p in paths) == 2, paths  # their SSH tunnels' ends here
    # ssh's control sockets (/proc names them as bound: ssh binds NAME.sock.RANDOM, then links NAME.sock)
    assert sum("/mb-ssh-" in p and ".sock" in p for p in paths) == 2, paths
    assert tried and all(outcome == "PermissionError" for outcome in tried.values()), tried
    assert list(in_client.values()) == ["ConnectionRefusedError"]
    assert ready.settled() == []


def test_two_ssh_runs_and_serve_on_one_client_never_run_each_others_jobs(ready):
    """Two runs with --client ssh://ns1 and a run through `mountbench serve` on ns1 (on fio's
    port 8765, which fio's servers once shared through SO_REUSEPORT), all at once: every fio
    process that opens a run's files carries that run's own marker (serve's carry none)."""
    ns = ready.namespaces[0]
    serve = ns.serve(env=ready.env)
    labels = ("a", "b", "s")
    targets = {label: ready.target(f"together-{label}") for label in labels}
    common = [*QUICK, "--runtime", "1", "--repeat", "3"]
    seen: set[tuple[str, str]] = set()  # (target label, the fio process's marker or "")
    procs = {}
    try:
        for label in labels:
            client = "--client=ssh://ns1" if label != "s" else f"--client={serve.client}"
            procs[label] = start_mountbench("run", client, f"{label}={targets[label]}", *common, env=ready.env)
        deadline = time.monotonic() + 240
        while any(p.poll() is None for p in procs.values()) and time.monotonic() < deadline:
            seen |= _fio_files_by_marker(targets)
            time.sleep(0.02)
        results = {label: p.communicate(timeout=60) for label, p in procs.items()}
        # and ns1 as an ssh:// client and as its serve at once is one machine given twice
        twice = mountbench("run", "--client=ssh://ns1", f"--client={serve.client}", f"a={targets['a']}", *QUICK,
                           env=ready.env)  # fmt: skip
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        serve.kill(signal.SIGTERM)
        ns.servers.remove(serve)
    for label, p in procs.items():
        assert p.returncode == 0, results[label][1]
    (line,) = twice.stderr.strip().splitlines()
    assert twice.returncode == 2 and "are one machine" in line and "ssh://ns1" in line and ns.address in line, line
    with Store(Path(ready.env["MOUNTBENCH_DB"])) as store:
        runs = [store.load_run(r["id"]) for r in store.list_runs()]
    by_label = {run.targets[0].target.label: run for run in runs if run.targets[0].target.path in
                {str(t) for t in targets.values()}}  # fmt: skip
    for label in labels:
        run = by_label[label]
        assert run.status == "complete" and len(run.samples) == 3 and all(s.ok for s in run.samples)
    tokens = {label: by_label[label].host["clients"]["ssh://ns1"]["run_token"] for label in ("a", "b")}
    assert tokens["a"] != tokens["b"]
    for label in labels:
        markers = {marker for where, marker in seen if where == label}
        assert markers == ({tokens[label]} if label in tokens else {""}), (label, markers)
    assert ready.settled() == []


def _fio_files_by_marker(targets: dict[str, Path]) -> set[tuple[str, str]]:
    """(target label, marker) for each fio process now holding a file under one of ``targets``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            if (entry / "comm").read_text().strip() != "fio":
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
            marker = next((v.split(b"=", 1)[1].decode() for v in environ if v.startswith(b"MOUNTBENCH_REMOTE_RUN=")),
                          "")  # fmt: skip
            for fd in (entry / "fd").iterdir():
                with suppress(OSError):
                    link = os.readlink(fd)
                    for label, path in targets.items():
                        if link.startswith(f"{path}/"):
                            found.add((label, marker))
    return found


def test_one_machine_under_two_spellings_is_refused_by_its_identity(ready):
    target = ready.target("twice")
    done = mountbench("run", "--client=ssh://ns1", "--client=ssh://ns1:22", "--client=ssh://ns2", f"share={target}",
                      *QUICK, env=ready.env)  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert (
        "clients ssh://ns1 and ssh://ns1:22 are one machine (machine-id " in line and "give each machine once" in line
    )
    assert ready.settled() == [] and not list(target.iterdir())


def test_the_ssh_hint_reproduces_the_failing_login(ready):
    """A login that fails names the command that reproduces it: the port and the config file."""
    target = ready.target("hint")
    done = mountbench("run", "--client=ssh://me@ns1:2222", f"share={target}", *QUICK, env=ready.env)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "Connection refused" in line
    assert f"check 'ssh -F {ready.ssh.config} -o BatchMode=yes -p 2222 me@ns1 true' works" in line, line


def test_an_sshd_that_forwards_no_unix_socket_is_a_one_line_error(ready):
    """fio's server is reached through a unix-socket forward; an sshd that refuses those
    (AllowStreamLocalForwarding no) stops the run before anything runs, saying what to allow."""
    target = ready.target("noforward")
    config = ready.ssh.servers[0].config
    text = config.read_text()
    try:
        config.write_text(text + "AllowStreamLocalForwarding no\n")
        sshd.restart(ready.ssh, 0)
        done = mountbench("run", "--client=ssh://ns1", f"share={target}", *QUICK, env=ready.env)
    finally:
        config.write_text(text)
        sshd.restart(ready.ssh, 0)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "client ssh://ns1: no fio server identified itself through its SSH tunnel" in line
    assert "AllowStreamLocalForwarding" in line
    assert ready.settled() == [] and not list(target.iterdir())
