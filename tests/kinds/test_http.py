"""http workloads with the real nginx and wrk on real mounts: what they measure, that
nginx listens on loopback only and is always stopped, and how faults look."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support.runhelpers import load_export, mountbench, plant_neighbours, snapshot, start_mountbench
from support.tools import needs_fio

from mountbench.host.targets import create_scratch, inspect_target, remove_scratch
from mountbench.kinds.engines import nginx as nginx_mod
from mountbench.kinds.http import KIND, file_names, http_workload
from mountbench.model import RunSettings, Target, TargetContext, WorkloadFailed

pytestmark = pytest.mark.slow

SMALL = ["32k", "256k", "1m"]  # a file set that lays out fast


@pytest.fixture(autouse=True)
def _tools():
    needs_fio()
    if shutil.which("wrk") is None or shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin") is None:
        pytest.skip("nginx and wrk are not installed (apt-get install nginx-light wrk)")


def servers_of_this_test() -> list[psutil.Process]:
    """nginx and wrk processes started under mountbench work directories (ours)."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.info["name"] in ("nginx", "wrk") and "mountbench-" in cmdline:
            found.append(proc)
    return found


def nginx_processes() -> set[int]:
    return {p.pid for p in servers_of_this_test() if p.info["name"] == "nginx"}


def test_http_preset_on_tmpfs_and_ext4(tmp_path: Path, mb_env: dict[str, str], tmpfs_dir: Path, ext4_dir: Path):
    before = plant_neighbours(ext4_dir)
    already = nginx_processes()
    out = tmp_path / "run.json"
    proc = mountbench(
        "run", f"ram={tmpfs_dir}", f"disk={ext4_dir}", "--preset", "http", "--runtime", "1", "--repeat", "1",
        "--json", str(out), env=mb_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert snapshot(ext4_dir) == before  # only the scratch directory was written, and it is gone
    assert nginx_processes() <= already  # every nginx this run started is stopped
    (run,) = load_export(out)["runs"]
    assert {w["name"] for w in run["workloads"]} == {"http-sendfile", "http-no-sendfile"}
    assert len(run["samples"]) == 4 and all(s["ok"] for s in run["samples"]), run["samples"]
    for sample in run["samples"]:
        m = sample["metrics"]
        assert m["http.requests_per_s"] > 0 and m["http.bw"] > 0 and m["http.errors"] == 0
        assert 0 < m["http.lat_p50"] <= m["http.lat_p90"] <= m["http.lat_p99"]
        assert m["nginx.cpu_s"] > 0 and m["nginx.uss_peak"] > 0 and m["nginx.cpu_s_per_gib"] > 0
        # the file set nginx serves, evicted one by one (issue 47: never the whole machine's caches; no root)
        assert re.match(r"evicted \d+ files from the page cache", sample["cache_action"]), sample["cache_action"]
    options = {w["name"]: w["description"]["summary"] for w in run["workloads"]}
    assert "sendfile=on" in options["http-sendfile"] and "sendfile=off" in options["http-no-sendfile"]
    assert "http requests/s" in proc.stdout and "nginx CPU time" in proc.stdout
    with sqlite3.connect(mb_env["MOUNTBENCH_DB"]) as db:  # wrk's own report is kept with each sample
        raws = [row[0] for row in db.execute("SELECT raw FROM samples")]
    assert len(raws) == 4 and all("MOUNTBENCH-WRK" in r and "Latency Distribution" in r for r in raws)


@pytest.fixture
def http_target(tmpfs_dir: Path, tmp_path: Path):
    """A real target context (scratch directory on tmpfs) and settings, removed afterwards."""
    target = Target("ram", str(tmpfs_dir))
    scratch = create_scratch(target, "20260101-000000-test")
    ctx = TargetContext(target, inspect_target(target, scratch), scratch)
    workdir = tmp_path / "work"
    workdir.mkdir()
    yield ctx, RunSettings(workdir=workdir)
    remove_scratch(scratch, "20260101-000000-test")


def _runner_and_prepared(ctx, settings, **settings_override):
    workload = http_workload("h", "h", "preset:test", {"files": SMALL, "duration": 1, **settings_override})
    runner = KIND.make_runner(None)  # type: ignore[arg-type]
    runner.check([workload])
    return runner, runner.prepare(workload, ctx, settings)


def test_nginx_listens_on_loopback_only_and_is_always_stopped(http_target) -> None:
    ctx, settings = http_target
    runner, prepared = _runner_and_prepared(ctx, settings)
    runner.setup(prepared, ctx, settings)
    server = runner._servers["ram"]
    pids = [server.proc.pid, *(c.pid for c in psutil.Process(server.proc.pid).children(recursive=True))]
    assert len(pids) >= 2  # master and worker
    listening = [c for pid in pids for c in psutil.Process(pid).net_connections("inet") if c.status == "LISTEN"]
    assert listening and all(c.laddr.ip == "127.0.0.1" for c in listening), listening
    # any user of this machine reaches the port, but only the run holds the path prefix that gets a file
    name = file_names(prepared.payload["sizes"])[0]
    if os.geteuid() == 0:  # runuser
        assert _get_as("nobody", server.port, f"/{name}") == 404
        assert _get_as("nobody", server.port, f"/{server.secret}/{name}") == 200  # (had it been leaked)
    assert server.secret not in " ".join(" ".join(psutil.Process(pid).cmdline()) for pid in pids)
    config = server.workdir / "nginx.conf"
    assert config.stat().st_mode & 0o777 == 0o600 and server.secret in config.read_text()
    outcome = runner.run(prepared, ctx, settings)
    assert outcome.metrics["http.requests"] > 0
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie" for pid in pids)
    # interrupted between setup and run (Ctrl-C while caches drop): cleanup stops it
    runner.setup(prepared, ctx, settings)
    master = runner._servers["ram"].proc
    runner.cleanup(ctx)
    assert master.poll() is not None


def test_nginx_that_cannot_start_fails_with_its_own_message(tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    (workdir / "nginx.pid").mkdir(parents=True)  # nginx cannot write its pid file there
    with pytest.raises(nginx_mod.NginxFailed, match=r"nginx did not start: .*nginx\.pid.*Is a directory"):
        nginx_mod.start_nginx(nginx_mod.find_nginx(), tmp_path, workdir, sendfile=True, workers=1)


def test_a_bad_root_fails_the_cell_with_nginx_message(http_target) -> None:
    ctx, settings = http_target
    runner, prepared = _runner_and_prepared(ctx, settings)
    runner.setup(prepared, ctx, settings)
    runner.cleanup(ctx)
    root: Path = prepared.payload["root"]
    first = root / file_names(prepared.payload["sizes"])[0]
    first.unlink()  # the file set is marked complete, but a file has gone
    with pytest.raises(WorkloadFailed, match=r"could not serve 01-32k\.bin .*HTTP 404.*No such file or directory"):
        runner.setup(prepared, ctx, settings)
    assert "ram" not in runner._servers  # and its nginx was stopped


def test_a_port_in_use_is_left_for_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    busy = taken.getsockname()[1]
    ports = iter([busy])
    real = nginx_mod.free_port
    monkeypatch.setattr(nginx_mod, "free_port", lambda: next(ports, None) or real())
    (tmp_path / "www").mkdir()
    try:
        server = nginx_mod.start_nginx(
            nginx_mod.find_nginx(), tmp_path / "www", tmp_path / "work", sendfile=True, workers=1
        )
        try:
            assert server.port != busy
        finally:
            server.stop()
    finally:
        taken.close()


def test_ctrl_c_stops_nginx_and_wrk(tmp_path: Path, mb_env: dict[str, str], tmpfs_dir: Path) -> None:
    proc = start_mountbench(
        "run", str(tmpfs_dir), "--preset", "http", "--only", "http-sendfile", "--runtime", "60", "--repeat", "1",
        env=mb_env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        children: list[psutil.Process] = []
        while time.monotonic() < deadline:
            children = psutil.Process(proc.pid).children(recursive=True)
            if any(c.name() == "wrk" for c in children):
                break
            time.sleep(0.1)
        assert any(c.name() == "wrk" for c in children), "wrk never started"
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    assert not alive, [c.name() for c in alive]


def test_missing_wrk_is_a_one_line_error(tmp_path: Path, mb_env: dict[str, str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fio").symlink_to(shutil.which("fio"))  # fio is there, wrk is not
    env = {**mb_env, "PATH": str(bin_dir)}
    target = tmp_path / "t"
    target.mkdir()
    proc = mountbench("run", str(target), "--preset", "http", env=env)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "wrk" in proc.stderr and "apt-get install nginx-light wrk" in proc.stderr
    assert not list(target.iterdir())  # nothing written


def test_missing_nginx_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from mountbench.errors import ToolMissing

    monkeypatch.setattr(nginx_mod.shutil, "which", lambda *a, **k: None)
    with pytest.raises(ToolMissing, match=r"nginx is needed .* apt-get install nginx-light wrk"):
        nginx_mod.find_nginx()


def test_http_on_sshfs_is_served_through_fuse(tmp_path: Path, mb_env: dict[str, str], sshfs_mount) -> None:
    """Workers run as the user who mounted (root): a FUSE mount refuses every other user."""
    out = tmp_path / "run.json"
    proc = mountbench(
        "run", f"sshfs={sshfs_mount.mountpoint}", "--preset", "http", "--only", "http-no-sendfile",
        "--runtime", "1", "--repeat", "1", "--json", str(out), env=mb_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (sample,) = load_export(out)["runs"][0]["samples"]
    assert sample["ok"], sample["error"]
    assert sample["metrics"]["http.requests"] > 0 and sample["metrics"]["http.errors"] == 0
    assert not list(Path(sshfs_mount.source).iterdir())  # the scratch directory is gone from the server too


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("nginx and wrk tests run on Linux")


def _get_as(user: str, port: int, path: str) -> int:
    """The HTTP status another user of this machine gets for ``path``."""
    script = (
        "import http.client, sys\n"
        "c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=10)\n"
        "c.request('GET', sys.argv[2]); print(c.getresponse().status)"
    )
    done = subprocess.run(["runuser", "-u", user, "--", "/usr/bin/python3", "-I", "-c", script, str(port), path],
                          capture_output=True, text=True, timeout=30, cwd="/")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return int(done.stdout)
