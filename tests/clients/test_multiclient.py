"""run --client against real fio servers: three network namespaces on this machine (two
`mountbench serve`, one plain `fio --server`) sharing one tmpfs, the controller in the
root namespace."""

from __future__ import annotations

import json
import math
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
from support import netns
from support.runhelpers import mountbench, plant_neighbours, snapshot, start_mountbench, wait_for_samples

from mountbench.clients.results import FEWER_CLIENTS
from mountbench.fio.parse import load_fio_json
from mountbench.records.export import FORMAT_VERSION
from mountbench.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.root]

QUICK = ["--only", "rnd4k-q1-read", "--size", "8M"]


def target_dir(clients, name: str) -> Path:
    path = clients.shared / name
    path.mkdir()
    return path


def load(clients, run_id: str = "last", *, raw: bool = False):
    with Store(Path(clients.env["MOUNTBENCH_DB"])) as store:
        return store.load_run(run_id, with_raw=raw)


def kth_smallest(bins: dict[int, int], pct: str) -> float:
    values = sorted(bins.items())
    k = math.ceil(Fraction(pct) * sum(bins.values()) / 100)
    seen = 0
    for value, count in values:
        seen += count
        if seen >= k:
            return value / 1e9
    raise AssertionError("ran out of values")


@dataclass(frozen=True)
class ScalingRun:
    target: Path
    before: dict
    done: subprocess.CompletedProcess
    run_id: str
    export: Path


@pytest.fixture(scope="module")
def scaling_run(clients, tmp_path_factory) -> ScalingRun:
    """One run with 1 and 3 clients, shared by the tests that read it."""
    clients.ensure_running()
    target = target_dir(clients, "main")
    before = plant_neighbours(target)
    export = tmp_path_factory.mktemp("scaling") / "run.json"
    done = mountbench(
        "run", *clients.args, f"share={target}", *QUICK, "--runtime", "0.5", "--repeat", "1",
        "--clients", "1,3", "--per-client", "--json", str(export),
        env=clients.env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return ScalingRun(target, before, done, load(clients).id, export)


def test_three_clients_aggregate_scaling_facts_and_nothing_left(running, scaling_run):
    target, before, done = scaling_run.target, scaling_run.before, scaling_run.done
    assert "Scaling with clients" in done.stdout and "vs linear" in done.stdout
    assert "Per client: RND 4K Q1 read, 3 clients" in done.stdout
    assert snapshot(target) == before, "something was left in (or taken from) the shared directory"

    run = load(running, scaling_run.run_id, raw=True)
    assert run.status == "complete"
    assert {w.name for w in run.workloads} == {"rnd4k-q1-read-c1", "rnd4k-q1-read-c3"}
    assert [w.description.sweep.number for w in run.workloads] == [1.0, 3.0]
    labels = [s.address for s in running.servers]  # fio's default port: the label is the address
    for sample in run.samples:
        assert sample.ok, sample.error
        n = 1 if sample.workload.endswith("-c1") else 3
        assert [c.client for c in sample.clients] == labels[:n]
        for metric in ("read.iops", "read.bw", "read.bytes"):
            assert sample.metrics[metric] == pytest.approx(sum(c.metrics[metric] for c in sample.clients))
        # percentiles by hand from the clients' json+ bins in the stored raw output
        document = load_fio_json(sample.raw)
        merged: dict[int, int] = {}
        for entry in document["client_stats"]:
            if entry["jobname"] == "All clients":
                continue
            for value, count in entry["read"]["lat_ns"]["bins"].items():
                merged[int(value)] = merged.get(int(value), 0) + count
        for pct in ("50.000000", "99.000000", "99.900000"):
            assert sample.metrics[f"read.lat_p{float(pct):g}"] == pytest.approx(kth_smallest(merged, pct))

    facts = run.host["clients"]
    served, plain = facts[labels[0]], facts[labels[2]]
    assert served["server"] == "mountbench serve" and served["kernel"] not in ("", "unknown")
    assert served["paths"][str(target)]["fstype"] == "tmpfs"
    assert plain["server"] == "fio --server" and plain["kernel"] == "unknown"
    assert plain["paths"][str(target)]["fstype"] == "unknown"
    assert all(f["fio_version"] == run.host["fio_version"] for f in facts.values())

    exported = json.loads(scaling_run.export.read_text())
    assert exported["version"] == FORMAT_VERSION
    assert len(exported["runs"][0]["samples"][0]["clients"]) in (1, 3)


def test_reports_show_scaling_and_per_client_columns(running, scaling_run, tmp_path):
    md = tmp_path / "r.md"
    done = mountbench("report", scaling_run.run_id, "--out", str(md), "--per-client", env=running.env)
    assert done.returncode == 0, done.stderr
    text = md.read_text()
    assert "## Clients" in text and "### Scaling: RND 4K Q1 read" in text and "| vs linear |" in text
    assert "### Per client" in text and "### Client machines" in text
    assert list(tmp_path.glob("r-scaling-1-*.png"))
    html = tmp_path / "r.html"
    assert mountbench("report", scaling_run.run_id, "--out", str(html), env=running.env).returncode == 0
    assert 'id="clients"' in html.read_text() and "Slowest client" in html.read_text()


def test_refused_connection_is_one_line_naming_the_client(running):
    address = running.servers[0].address
    done = mountbench("run", f"--client={address}:9999", f"share={running.shared}", *QUICK, env=running.env)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"client {address}:9999 refused the connection" in lines[0] and "mountbench serve" in lines[0]
    assert not list(running.shared.glob(".mountbench-*"))


def test_a_port_where_no_fio_server_listens_is_one_line(running):
    """Something else listens there (it accepts and hangs up): fio's probe gets no answer."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                conn.close()
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        done = mountbench("run", f"--client=127.0.0.1:{port}", f"share={running.shared}", *QUICK, env=running.env)
    finally:
        stop.set()
        thread.join()
        listener.close()
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"client 127.0.0.1:{port} answered on port {port} but no compatible fio server identified itself" in lines[0]


def test_a_server_killed_mid_run_fails_its_samples_by_name_and_the_run_finishes(running):
    target = target_dir(running, "killed")
    before = plant_neighbours(target)
    db = Path(running.env["MOUNTBENCH_DB"])
    with Store(db) as store:
        already = sum(len(store.load_run(r["id"]).samples) for r in store.list_runs())
    proc = start_mountbench("run", *running.args, f"share={target}", *QUICK, "--runtime", "2", "--repeat", "2",
                            env=running.env)  # fmt: skip
    try:
        wait_for_samples(db, already + 1, timeout=120)
        time.sleep(1.0)  # the second sample is under way
        victim = running.servers[1]
        victim.kill()
        _out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    run = load(running)
    assert run.status == "complete"
    failed = [s for s in run.samples if not s.ok]
    assert run.samples[0].ok and failed, [s.error for s in run.samples]
    # the words depend on the phase the kill hit (most often: its job was running); the client is named
    (first,) = failed
    assert first.error.startswith(f"client {victim.address} "), first.error
    assert "was lost mid-sample" in first.error or "became unreachable mid-sample" in first.error, first.error
    assert any(c.error for c in first.clients)
    assert snapshot(target) == before
    running.restart(1)


def test_ctrl_c_stops_every_clients_job_leaves_no_scratch_and_resume_finishes(running):
    target = target_dir(running, "interrupted")
    before = plant_neighbours(target)
    idle = running.group_pids()
    db = Path(running.env["MOUNTBENCH_DB"])
    with Store(db) as store:
        already = sum(len(store.load_run(r["id"]).samples) for r in store.list_runs())
    proc = start_mountbench("run", *running.args, f"share={target}", *QUICK, "--runtime", "3", "--repeat", "2",
                            env=running.env)  # fmt: skip
    try:
        wait_for_samples(db, already + 1, timeout=120)
        time.sleep(1.5)  # inside the second sample's timed run
        assert running.group_pids() - idle, "the clients' fio jobs should be running"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        stopped_in = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert stopped_in < 20
    assert "--resume" in err
    deadline = time.monotonic() + 10
    while running.group_pids() - idle and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not running.group_pids() - idle, "a client's fio job outlived the interrupt"
    assert snapshot(target) == before, "scratch left on the clients' shared directory"
    run = load(running)
    assert run.status == "interrupted" and len(run.samples) == 1

    done = mountbench("run", "--resume", run.id, env=running.env)
    assert done.returncode == 0, done.stderr
    run = load(running, run.id)
    assert run.status == "complete" and len(run.samples) == 2 and all(s.ok for s in run.samples)
    assert snapshot(target) == before


def test_dry_run_shows_each_clients_job_and_writes_nothing(running):
    target = target_dir(running, "dry")
    before = plant_neighbours(target)
    done = mountbench("run", *running.args, f"share={target}", *QUICK, "--dry-run", env=running.env)
    assert done.returncode == 0, done.stderr
    for server in running.servers:
        assert f"# --client={server.address},{server.port}" in done.stdout
    assert snapshot(target) == before


def test_probe_view_across_two_clients_through_serve(running):
    target = target_dir(running, "coherence")
    before = plant_neighbours(target)
    a, b = running.servers[0], running.servers[1]
    done = mountbench("probe", "--view", f"{target}@{a.address}={target}@{b.address}", "--repeat", "2",
                      "--timeout", "2", "--format", "json", env=running.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["coherence"]
    assert result["view_a"] == f"{target}@{a.address}" and result["view_b"] == f"{target}@{b.address}"
    assert result["cleanup"] == "removed" and result["error"] is None
    for check in result["visibility"]:  # one kernel under both namespaces: every change shows
        assert len(check["delays_ms"]) == 2 and None not in check["delays_ms"], check
    assert all(o == "fresh" for s in result["stale_reads"] for o in s["outcomes"])
    assert all(set(r) >= {"create", "delete"} for r in result["inotify"]["received"])
    assert all(lock["blocked"] == [True, True] for lock in result["locks"])
    assert 0 < result["clock_resolution_ms"] < 1000  # each client's clock matched to the controller's
    assert snapshot(target) == before


def test_a_client_gone_mid_probe_is_an_error_in_the_result_and_a_leaves_nothing(running):
    target = target_dir(running, "coherence-gone")
    before = plant_neighbours(target)
    a, b = running.servers[0], running.servers[1]
    proc = start_mountbench("probe", "--view", f"{target}@{a.address}={target}@{b.address}", "--repeat", "50",
                            "--timeout", "1", "--format", "json", env=running.env)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not [p for p in target.iterdir() if p.name.startswith(".mountbench-probe-")]:
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.5)  # the checks are under way
        b.kill()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (out, err)
    (result,) = json.loads(out)["coherence"]
    assert "stopped answering" in result["error"] and result["cleanup"] == "removed"
    assert snapshot(target) == before
    running.restart(1)


def test_probe_view_needs_serve_on_both_clients_and_one_directory(running):
    target = target_dir(running, "coherence-bad")
    a, plain = running.servers[0], running.servers[2]
    done = mountbench("probe", "--view", f"{target}@{a.address}={target}@{plain.address}", env=running.env)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "no `mountbench serve` answers" in done.stderr
    other = target_dir(running, "coherence-other")
    b = running.servers[1]
    done = mountbench("probe", "--view", f"{target}@{a.address}={other}@{b.address}", "--timeout", "1",
                      env=running.env)  # fmt: skip
    assert done.returncode == 2 and "views of the same directory?" in done.stderr
    assert not list(target.iterdir()) and not list(other.iterdir())


def test_a_client_with_another_fio_version_is_refused_with_both_versions(running, tmp_path):
    """Needs a second fio build: MOUNTBENCH_OTHER_FIO=/path/to/fio (another major.minor)."""
    import os

    other = os.environ.get("MOUNTBENCH_OTHER_FIO")
    if not other:
        pytest.skip("set MOUNTBENCH_OTHER_FIO to a fio of another version to run this")
    version = subprocess.run([other, "--version"], capture_output=True, text=True).stdout.strip()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "fio").symlink_to(other)
    plain = running.namespaces[2]
    plain._start(plain.command(other, f"--server=ip:{plain.address},9765"), 9765)
    served = running.namespaces[0].serve(port=9765, env=dict(running.env, PATH=f"{bindir}:{os.environ['PATH']}"))
    ours = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    done = mountbench("run", f"--client={plain.address}:9765", f"share={running.shared}", *QUICK, env=running.env)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"client {plain.address}:9765 speaks fio's client/server protocol" in done.stderr
    done = mountbench("run", f"--client={served.address}:9765", f"share={running.shared}", *QUICK, env=running.env)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"client {served.address}:9765 runs {version} but this controller runs {ours}" in done.stderr


def test_a_client_unreachable_mid_run_is_named_and_the_run_goes_on(running):
    """Its route goes (No route to host) in the middle of the second sample; its server keeps running."""
    target = target_dir(running, "unreachable")
    before = plant_neighbours(target)
    db = Path(running.env["MOUNTBENCH_DB"])
    with Store(db) as store:
        already = sum(len(store.load_run(r["id"]).samples) for r in store.list_runs())
    ns = running.namespaces[2]
    proc = start_mountbench("run", *running.args, f"share={target}", *QUICK, "--runtime", "2", "--repeat", "3",
                            env=running.env)  # fmt: skip
    returncode, err, took = netns.run_cut_off_mid_sample(
        proc, ns, lambda: wait_for_samples(db, already + 1, timeout=120)
    )
    assert returncode == 0, err
    assert took < 90, "an unreachable client must not hang the run until the time limit"
    run = load(running)
    failed = [s for s in run.samples if not s.ok]
    assert failed and run.samples[0].ok
    (during,) = failed
    assert during.error.startswith(f"client {ns.address} "), during.error
    assert "was lost mid-sample" in during.error or "became unreachable mid-sample" in during.error, during.error
    after = run.samples[run.samples.index(during) + 1 :]
    assert after, "the run goes on after the lost client"
    for sample in after:  # the next samples run on the other clients, and say so
        assert sample.ok and ns.address not in [c.client for c in sample.clients], sample.error
        assert any(c.code == FEWER_CLIENTS and f"ran on 2 of 3 clients: {ns.address}" in c.text for c in sample.caveats)
    assert snapshot(target) == before


def test_unique_filename_0_puts_every_client_on_one_shared_file(running, tmp_path):
    target = target_dir(running, "shared-file")
    before = plant_neighbours(target)
    job = tmp_path / "shared.fio"
    job.write_text("[together]\nrw=randread\nbs=4k\nsize=4m\nruntime=300ms\ntime_based=1\nioengine=psync\n"
                   "filename=one.dat\nunique_filename=0\n")  # fmt: skip
    dry = mountbench("run", *running.args[:2], f"share={target}", "--job", str(job), "--dry-run", env=running.env)
    assert dry.returncode == 0, dry.stderr
    directories = [line for line in dry.stdout.splitlines() if line.startswith("directory=")]
    assert len(directories) == 2 and len(set(directories)) == 1 and directories[0].endswith("/shared")
    done = mountbench("run", *running.args[:2], f"share={target}", "--job", str(job), "--repeat", "1",
                      env=running.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = load(running)
    (sample,) = run.samples
    assert sample.ok and len(sample.clients) == 2
    assert "sharing one file set" in run.workloads[0].description.summary
    assert snapshot(target) == before


def test_serve_clients_start_together_at_a_barrier_and_a_plain_server_gets_none(running, scaling_run):
    """`mountbench serve` clients get the start barrier the ssh:// clients have (a script in
    serve's own directory, their clock measured through the agent); a set with a plain fio
    server gets none (it would start as soon as it got its job, the others held back)."""
    served = running.servers[:2]
    target = target_dir(running, "barrier")
    before = plant_neighbours(target)
    done = mountbench("run", *[f"--client={s.client}" for s in served], f"share={target}", *QUICK,
                      "--runtime", "0.5", "--repeat", "2", env=running.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = load(running, raw=True)
    for label in (s.address for s in served):
        facts = run.host["clients"][label]
        assert facts["barrier_script"].endswith("/barrier.sh")
        assert abs(facts["clock_offset_ms"]) <= facts["clock_uncertainty_ms"] + 1  # one kernel, one clock
    for sample in run.samples:
        assert sample.ok, sample.error
        jobs = [e for e in load_fio_json(sample.raw)["client_stats"] if e["jobname"] != "All clients"]
        instants = {int(e["job options"]["exec_prerun"].rsplit(" ", 1)[-1]) for e in jobs}
        assert len(jobs) == 2 and max(instants) - min(instants) < 5e6, instants
    assert snapshot(target) == before
    # the scaling run had a plain fio server among its clients: no barrier on any of them
    mixed = load(running, scaling_run.run_id, raw=True)
    assert all("exec_prerun" not in e.get("job options", {})
               for s in mixed.samples for e in load_fio_json(s.raw)["client_stats"])  # fmt: skip
