"""`mountbench containers` end to end with real Podman (rootful, runc): a sample on every mount
kind and the host, the overlay rename verdict, coherence through the bind mount, and nothing
left after a normal end, after Ctrl-C, and after kill -9 once the next run has swept.

Each run is one short workload, one round, a 4 MiB file: what is tested is the lab, not speed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("podman_ready")]
QUICK = ("--only", "rnd4k-q1-read", "--repeat", "1", "--runtime", "0.3", "--size", "4M")
KINDS = ("bind", "volume", "layer", "tmpfs", "overlay")


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "MOUNTBENCH_DB": str(tmp_path / "db.sqlite"),
            "COLUMNS": "160"}  # fmt: skip


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mountbench", "containers", *args]


def _root(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "mountbench" / "containers"


def _mounted_under(path: Path) -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [line.split()[4] for line in lines if line.split()[4].startswith(str(path))]


def _processes_under(path: Path) -> list[str]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(path) in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(f"{proc.pid} {cmdline[:120]}")
    return found


def assert_nothing_left(tmp_path: Path) -> None:
    """No lab directory (so no storage, container, volume or image: they lived in it), no mount
    under it and no process naming it (conmon, the container's sleep, fio)."""
    root = _root(tmp_path)
    assert not root.exists() or list(root.iterdir()) == []
    assert _mounted_under(tmp_path) == []
    assert _processes_under(tmp_path) == []


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(_command(*QUICK, *args), env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip


def _wait_for(proc: subprocess.Popen[str], words: str, limit_s: float = 120.0) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + limit_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if words in line:
            return seen
    raise AssertionError(f"{words!r} never came:\n{''.join(seen)}")


def test_every_mount_kind_gives_a_sample_and_the_probe_sees_overlay_exdev_and_bind_coherence(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = subprocess.run(_command(*QUICK, "--json", str(out)), env=_env(tmp_path), capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = json.loads(out.read_text())["runs"]
    ok = {(s["target"], s["workload"]) for s in run["samples"] if s["ok"]}
    assert ok == {(target, "rnd4k-q1-read") for target in ("host", *KINDS)}
    assert run["config"]["baseline"] == "host"
    facts = run["config"]["lab"]
    assert facts["image"]["id"] and facts["rootless"] is False and facts["storage_driver"] == "overlay"
    mounts = {m["name"]: m for m in facts["mounts"]}
    assert {mounts[k]["fstype"] for k in ("layer", "overlay")} == {"overlay"}
    assert mounts["tmpfs"]["fstype"] == "tmpfs"
    # probe/'s own capability probe, run by its agent inside the container, on every mount
    probed = {m["label"]: m for m in facts["probe"]["mounts"]}
    assert set(probed) == set(KINDS) and not facts["probe"]["errors"], facts["probe"]["errors"]
    verdicts = {k: {r["capability"]: r for r in probed[k]["capabilities"]["results"]} for k in KINDS}
    # a directory from below (the image, the lower directory) cannot be renamed on overlayfs
    assert verdicts["layer"]["lower_dir_rename"]["errno"] == "EXDEV"
    assert verdicts["overlay"]["lower_dir_rename"]["errno"] == "EXDEV"
    assert all(verdicts[k]["rename_dir"]["verdict"] == "yes" for k in KINDS)
    assert facts["probe"]["reference"]["fs"]["fstype"] == "tmpfs"  # the container's own /dev/shm
    # the bind mount, the host's directory itself, measured across both ways: every change seen at once
    for way in ("to_guest", "to_host"):
        result = probed["bind"][way]
        assert result is not None and result["error"] is None, result
        assert all(None not in v["delays_ms"] and max(v["delays_ms"]) < 5000 for v in result["visibility"]), result
    assert all(probed[k]["to_guest"] is None for k in KINDS if k != "bind")  # not the host's own directory
    assert "EXDEV" in done.stdout  # the mounts table says it too
    # the rounds' progress lines arrive whole (issue 49: "container: ┏━━…━�run … complete")
    said = done.stdout + done.stderr
    assert "\ufffd" not in said and "container: ┏" not in said and "host: ┏" not in said
    assert_nothing_left(tmp_path)


def _container_pidns(left: Path) -> str:
    """The PID namespace of the lab's container under ``left``: its first process's, a child of its conmon."""
    for proc in psutil.process_iter(["name", "cmdline"]):
        if proc.info["name"] == "conmon" and str(left) in " ".join(proc.info["cmdline"] or []):
            for child in proc.children():
                with contextlib.suppress(OSError):
                    return os.readlink(f"/proc/{child.pid}/ns/pid")
    raise AssertionError(f"no container of {left} is running")


def _in_pidns(namespace: str) -> list[str]:
    found = []
    for proc in psutil.process_iter(["name", "status"]):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{proc.pid}/ns/pid") == namespace and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(f"{proc.pid} {proc.info['name']}")
    return found


def test_kill_9_ends_the_container_and_its_fio_the_next_run_sweeps_it_and_ctrl_c_leaves_nothing(tmp_path: Path) -> None:
    """Issue 49: after `kill -9` of `mountbench containers` the round inside the container ran fio on for up
    to a minute. Its container now ends with it: no fio of that run (nothing in its PID namespace) is left
    within seconds. Then the next run sweeps the directory, and a Ctrl-C in its container round leaves
    nothing either (two lab starts instead of three: the tests stay short)."""
    killed = subprocess.Popen(
        _command("--no-probe", "--mount", "tmpfs", "--only", "rnd4k-q1-read", "--repeat", "3", "--runtime", "20",
                 "--size", "4M"),
        env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    _wait_for(killed, "round 1/3 on the container")
    (left,) = list(_root(tmp_path).iterdir())
    namespace = _container_pidns(left)
    deadline = time.monotonic() + 60
    while not [p for p in _in_pidns(namespace) if p.endswith(" fio")]:
        assert time.monotonic() < deadline, f"no fio ran in the container: {_in_pidns(namespace)}"
        time.sleep(0.1)
    os.kill(killed.pid, signal.SIGKILL)  # mountbench alone, as `kill -9 PID` does
    killed.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _in_pidns(namespace) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _in_pidns(namespace) == [], "the container's processes (its fio) outlived the killed run"
    assert left.exists(), "the killed run's directory is left for the next run to sweep"
    proc = _start(tmp_path, "--no-probe", "--mount", "tmpfs")
    seen = "".join(_wait_for(proc, "on the container"))
    assert f"cleaned what a killed container-lab run left: {left}" in seen.replace("\n", "")
    assert not left.exists() and _processes_under(left) == [] and _mounted_under(left) == []
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, rest
    assert_nothing_left(tmp_path)


def _raw_events(fd: int) -> list[tuple[int, str]]:
    """(mask, name) of every inotify event queued on ``fd`` (the probe's reader names only its own kinds)."""
    import struct

    try:
        data = os.read(fd, 1 << 20)
    except BlockingIOError:
        return []
    found, offset = [], 0
    while offset + 16 <= len(data):
        _wd, mask, _cookie, length = struct.unpack_from("iIII", data, offset)
        found.append((mask, os.fsdecode(data[offset + 16 : offset + 16 + length].rstrip(b"\0"))))
        offset += 16 + length
    return found


def test_a_job_file_runs_in_the_container_and_podman_leaves_the_machines_own_state_alone(tmp_path: Path) -> None:
    """Issue 47: `containers --job` failed in the container (the job file's host path is not there:
    it is copied into the lab's results folder now), and `podman import` opened the machine's
    /var/lib/containers/cache/blob-info-cache-v1.boltdb and /etc/cni/net.d/cni.lock. inotify on those
    directories sees every open of the machine's files (a private view's stand-in is another inode)."""
    from mountbench.probe.inotify import Watch

    in_open, in_modify, in_close_write, in_create = 0x20, 0x2, 0x8, 0x100
    watched = [
        Path(p) for p in ("/var/lib/containers/cache", "/var/lib/containers", "/etc/cni/net.d") if Path(p).is_dir()
    ]
    job = tmp_path / "mine.fio"
    job.write_text("[mine]\nrw=randread\nbs=4k\nsize=4m\nioengine=psync\n")
    watches = [Watch(path, in_open | in_modify | in_close_write | in_create) for path in watched]
    try:
        done = subprocess.run(_command("--job", str(job), "--repeat", "1", "--runtime", "0.3", "--mount", "tmpfs",
                                       "--no-probe"), env=_env(tmp_path), capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        seen = {str(path): _raw_events(watch.fd) for path, watch in zip(watched, watches, strict=True)}
    finally:
        for watch in watches:
            watch.close()
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "round 1/1 on the container" in said and "container · tmpfs · mine: ok" in said, said
    assert all(not events for events in seen.values()), seen
    assert_nothing_left(tmp_path)


def test_a_killed_run_is_resumed_on_a_lab_made_again(tmp_path: Path) -> None:
    """Every lab resumes (issue 52): `kill -9` once the first round is stored on both sides;
    `containers --resume` makes the lab again (the same mount types, Podman and runtime), keeps what
    was stored and takes only the sides' rounds that were not."""
    import sqlite3

    db = tmp_path / "db.sqlite"
    killed = subprocess.Popen(
        _command("--no-probe", "--mount", "tmpfs", "--only", "rnd4k-q1-read", "--repeat", "3", "--runtime", "1",
                 "--size", "4M"),
        env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    _wait_for(killed, "round 2/3 on the container")  # round 1 finished on both sides: stored
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT run_id, target, round, started_at FROM samples").fetchall()
    assert {(target, rnd) for _, target, rnd, _ in stored} == {("host", 0), ("tmpfs", 0)}, stored
    run_id = stored[0][0]
    out = tmp_path / "resumed.json"
    done = subprocess.run(_command("--resume", run_id, "--json", str(out)), env=_env(tmp_path), capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"resuming run {run_id}: 4 side round(s) of 6 left" in done.stderr, done.stderr
    (run,) = json.loads(out.read_text())["runs"]
    assert run["status"] == "complete" and run["config"]["repeat"] == 3
    taken = sorted((s["target"], s["round"]) for s in run["samples"] if s["ok"])
    assert taken == sorted((t, r) for t in ("host", "tmpfs") for r in (0, 1, 2))
    before = {(target, rnd): at for _, target, rnd, at in stored}
    assert all(s["started_at"] == before[(s["target"], s["round"])] for s in run["samples"] if s["round"] == 0)
    assert_nothing_left(tmp_path)
