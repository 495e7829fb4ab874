"""NFS in the lab and coherence across the VM boundary, in a real TCG guest (one boot each).

- `mountbench lab --mount nfs ... --probe` end to end: nfs-ganesha on the host's loopback,
  the guest's kernel NFS client mounting it over user networking, a short fio job and a
  tree extract on it with nfs-ganesha's CPU and memory measured, then the probe (the
  mount's capabilities in the guest, coherence both ways) stored with the run and the
  pick-two section in the report;
- the probe on 9p cache=none and cache=loose: with no cache, every change made on either
  side shows promptly on the other; with the loose cache, changes made on the host do
  not show in the guest (or the guest reads the old file), as v9fs documents.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import psutil
import pytest
from support import listeners
from support.labhelpers import assert_all_gone, lab_root, require_lab

from mountbench.host.scratch import PROBE_PREFIX
from mountbench.labs.qemu import Guest, parse_mount_spec
from mountbench.labs.qemu.guestprobe import ProbeOptions, probe_guest
from mountbench.probe.coherence import OPERATIONS

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def mountbench(*args: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mountbench", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@pytest.fixture
def nfs_lab_ready() -> None:
    require_lab(["nfs"])


def test_nfs_mount_runs_fio_and_a_tree_extract_and_is_probed(
    nfs_lab_ready: None, tmp_path: Path, mb_env: dict[str, str]
) -> None:
    out = tmp_path / "lab.json"
    running = subprocess.Popen(
        [sys.executable, "-m", "mountbench", "lab", "--mount", "nfs", "--preset", "quick", "--only", "rnd4k-q1-read",
         "--preset", "tree", "--tree", "tiny", "--only", "extract", "--runtime", "0.3", "--size", "4M", "--repeat",
         "1", "--accel", "tcg", "--probe", "--probe-repeat", "1", "--probe-timeout", "1.5", "--json", str(out)],
        env=mb_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        found, tried = _listeners_tried_as_nobody(running)
        stdout, stderr = running.communicate(timeout=900)
    finally:
        if running.poll() is None:
            running.kill()
    proc = subprocess.CompletedProcess(running.args, running.returncode, stdout, stderr)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # while it ran, no other user reached what it started: nfs-ganesha in the lab's own network
    # namespace (nothing listens on its port here), QEMU's command channel and virtiofsd's socket
    # in the lab's 0700 directory
    ganesha = [item for item in found if item.command.startswith(("ganesha", "nfs-ganesha"))]
    assert ganesha and all(item.kind.startswith("tcp") for item in ganesha), found
    assert any(item.kind == "unix" and item.where.endswith("/control.sock") for item in found), found
    assert tried and all(outcome in ("ConnectionRefusedError", "PermissionError") for outcome in tried.values()), tried
    (run,) = json.loads(out.read_text())["runs"]
    # the guest's kernel client mounted the host's nfs-ganesha over user networking
    (target,) = run["targets"]
    assert target["label"] == "nfs vers=4.1"
    info = target["info"]
    assert info["fstype"] == "nfs4" and "vers=4.1" in info["mount_options"] and "addr=10.0.2.2" in info["mount_options"]
    (mount,) = run["config"]["lab"]["mounts"]
    assert mount["served_by"].startswith("nfs-ganesha (VFS) 127.0.0.1:")
    samples = {s["workload"]: s for s in run["samples"]}
    assert set(samples) == {"rnd4k-q1-read", "extract"}
    assert all(s["ok"] for s in samples.values()), [s["error"] for s in samples.values()]
    assert samples["rnd4k-q1-read"]["metrics"]["read.iops"] > 0
    assert samples["extract"]["metrics"]["wall"] > 0
    for sample in samples.values():  # nfs-ganesha is a serving process, measured like virtiofsd
        assert sample["metrics"]["host.cpu_s"] > 0
        assert sample["metrics"]["host.uss_peak"] > 1 << 20
        codes = {c["code"] for c in sample["caveats"]}
        assert {"emulated", "host-cache"} <= codes, codes

    # lab --probe: capabilities in the guest, coherence both ways, stored with the run
    probe = run["config"]["lab"]["probe"]
    assert not probe["errors"], probe["errors"]
    (probed,) = probe["mounts"]
    assert probed["shared"] and probed["capabilities"]["fs"]["fstype"] == "nfs4"
    verdicts = {r["capability"]: r["verdict"] for r in probed["capabilities"]["results"]}
    assert verdicts["symlink"] == "yes" and verdicts["hardlink"] == "yes"
    for way, (a, b) in (
        ("to_guest", ("host", "nfs vers=4.1 in the guest")),
        ("to_host", ("nfs vers=4.1 in the guest", "host")),
    ):
        result = probed[way]
        assert (result["view_a"], result["view_b"]) == (a, b) and result["cleanup"] == "removed"
        assert result["clock_resolution_ms"] is not None and result["error"] is None
        assert len(result["visibility"]) == len(OPERATIONS)
    # NFSv4.1 byte-range (fcntl) locks reach the server, which takes them on the host: they
    # block across the boundary both ways. The guest's flock becomes such a lock too, which a
    # BSD flock on the host does not conflict with: flock does not cross.
    locks = {(way, lk["kind"]): lk["blocked"] for way in ("to_guest", "to_host") for lk in probed[way]["locks"]}
    assert locks == {
        ("to_guest", "fcntl"): [True],
        ("to_host", "fcntl"): [True],
        ("to_guest", "flock"): [False],
        ("to_host", "flock"): [False],
    }
    # the guest's writes reach the host at close (close-to-open), so the host sees them at once
    assert all(v["delays_ms"] != [None] for v in probed["to_host"]["visibility"])
    assert probe["reference"]["fs"]["fstype"] == "tmpfs" and probe["reference_coherence"] is not None

    # the report's pick-two section, as the user gets it
    report = mountbench("report", "--format", "json", env=mb_env, timeout=120)
    assert report.returncode == 0, report.stderr
    picked = {r["measure"]: r for r in json.loads(report.stdout)["pick_two"]}
    assert picked["tree"]["verdict"] == "good" and picked["write"]["verdict"] == "not measured"
    assert picked["locks"]["verdict"] == "fair" and picked["locks"]["text"].startswith("only some block: flock: no")
    assert "Pick two, measured" in proc.stdout


def test_probe_across_the_vm_boundary_9p_without_and_with_the_loose_cache(lab_ready: None) -> None:
    specs = [parse_mount_spec("9p"), parse_mount_spec("9p:cache=loose")]
    lines: list[str] = []
    with Guest(specs, accel="tcg", root=lab_root()) as guest:
        probed = probe_guest(guest, ProbeOptions(repeat=1, timeout_s=1.5), lines.append)
        # the coherence checks removed their scratch directories from the host's directories
        # (a capability probe's may stay if removing it hung in the emulated guest: it says so)
        for m, found in zip(guest.mounts, probed.mounts, strict=True):
            host_dir = guest.host_dir(m.slug)
            assert host_dir is not None
            left = {n for n in os.listdir(host_dir) if n.startswith(PROBE_PREFIX)}
            caps = found.capabilities
            allowed = set() if caps is None or caps.cleanup == "removed" else {Path(caps.scratch or "").name}
            assert left <= allowed, (m.slug, left, allowed)
        # the agent left the control channel as it found it: the guest takes commands again
        after: list[str] = []
        assert guest.run_in_guest("echo still-here", on_line=after.append, timeout=120) == 0
        assert "still-here" in after
        pids, lab_dir = guest.all_pids(), guest.lab_dir
    assert_all_gone(pids, lab_dir)
    assert not probed.errors, (probed.errors, lines[-20:])
    none, loose = probed.mounts
    assert none.capabilities is not None and none.capabilities.fs.fstype == "9p"
    assert loose.capabilities is not None and "loose" in (loose.capabilities.fs.options or "")

    # no cache: every change shows on the other side, both ways, and reads are fresh
    for result in (none.to_guest, none.to_host):
        assert result is not None and result.cleanup == "removed", result
        for op in OPERATIONS:
            assert result.visibility_of(op).summary.seen == 1, (result.view_a, op, result.visibility_of(op))
        assert all(s.outcomes == ("fresh",) for s in result.stale_reads), result.stale_reads
    # loose: the guest keeps what it cached; changes made on the host do not show in time
    assert loose.to_guest is not None
    late = [op for op in OPERATIONS if loose.to_guest.visibility_of(op).summary.seen == 0]
    stale = [s.mode for s in loose.to_guest.stale_reads if s.outcomes != ("fresh",)]
    assert late or stale, loose.to_guest
    # the clocks were matched over the control channel, and the reference is the guest's own tmpfs
    assert none.to_guest is not None and none.to_guest.clock_resolution_ms is not None
    assert probed.reference_coherence is not None and probed.reference_coherence.clock_resolution_ms is None
    assert probed.reference is not None and probed.reference.fs.fstype == "tmpfs"


def _listeners_tried_as_nobody(proc: subprocess.Popen) -> tuple[list[listeners.Listener], dict]:
    """Once the lab's nfs-ganesha (in its namespace) and QEMU listen: every socket the lab's
    processes listen on, and what `nobody` on this machine got trying each."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        with suppress(psutil.NoSuchProcess):
            pids = [child.pid for child in psutil.Process(proc.pid).children(recursive=True)]
            found = listeners.listening(pids)
            ganesha = any(item.command.startswith(("ganesha", "nfs-ganesha")) for item in found)
            qemu = any(item.where.endswith("/control.sock") for item in found)  # QEMU starts after ganesha
            if ganesha and qemu:
                return found, listeners.attempt_as("nobody", found)
        time.sleep(0.5)
    raise AssertionError(f"nfs-ganesha and QEMU never both listened (lab exit {proc.poll()})")
