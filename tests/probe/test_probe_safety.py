"""Safety: hung probes end as "hung" in time, failures stay contained, and nothing outside
the scratch directory is touched, whatever happens. Also: "needs root" when not root."""

from __future__ import annotations

import errno
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from support import realmounts as rm

from mountbench.host import scratch
from mountbench.host.scratch import PROBE_PREFIX as PREFIX
from mountbench.host.scratch import Marker, Owner
from mountbench.probe import ChildCrashed, probe_target, remove_scratch, render_markdown
from mountbench.probe.capabilities import Capability, ProbeContext, helper, step
from mountbench.probe.catalogue import by_id
from mountbench.probe.sandbox import KILL_GRACE_S, reap_stragglers, run_isolated
from mountbench.probefacts import YES, Finding

pytestmark = [pytest.mark.root, rm.requires_root]


def is_ours(name: str) -> bool:
    """Scratch directories the probe may leave (decoys planted by the tests are not)."""
    return name.startswith(PREFIX) and name not in (PREFIX + "marker", PREFIX + "decoy")


def plant_neighbours(root: Path) -> None:
    (root / "keep.txt").write_bytes(b"keep me\n" * 10)
    (root / "sub").mkdir()
    (root / "sub" / "deep.bin").write_bytes(os.urandom(3000))
    (root / (PREFIX + "decoy")).mkdir()  # looks like a scratch dir but has no marker
    (root / (PREFIX + "decoy") / "data").write_bytes(b"not ours")
    os.symlink("keep.txt", root / "link")


def leftovers(root: Path) -> list[str]:
    return sorted(n for n in os.listdir(root) if is_ours(n))


# -- injected probes ---------------------------------------------------------------------------


def quick(ctx: ProbeContext) -> Finding:
    (ctx.work / "f").write_bytes(b"x")
    return Finding(YES, "quick")


def sleeper(ctx: ProbeContext) -> Finding:
    (ctx.work / "half-done").write_bytes(b"x" * 100)
    time.sleep(120)
    return Finding(YES, "never")


def refuser(ctx: ProbeContext) -> Finding:
    with step("an operation the filesystem refuses"):
        raise PermissionError(errno.EPERM, "Operation not permitted")


def helper_fails(ctx: ProbeContext) -> Finding:
    """The capability's own call is never reached: a helper step before it is refused."""
    with helper("create the test file in a missing directory"):
        (ctx.work / "missing" / "f").write_bytes(b"x")
    with step("the capability's own call"):
        os.stat(ctx.work)
    return Finding(YES, "unreachable")


def raw_oserror(ctx: ProbeContext) -> Finding:
    os.rmdir(ctx.work / "does-not-exist")
    return Finding(YES, "unreachable")


def segfault(ctx: ProbeContext) -> Finding:
    (ctx.work / "before-crash").write_bytes(b"x")
    os.kill(os.getpid(), signal.SIGSEGV)
    return Finding(YES, "unreachable")


def litter(ctx: ProbeContext) -> Finding:
    for i in range(50):
        (ctx.work / f"d{i}").mkdir()
        (ctx.work / f"d{i}" / "f").write_bytes(b"x")
    os.symlink("/etc/hostname", ctx.work / "link-outside")  # removal must not follow it
    return Finding(YES, "littered")


def buggy(ctx: ProbeContext) -> Finding:
    (ctx.work / "f").write_bytes(b"x")
    raise ValueError("a bug in a probe")


def freeze_then_stat(freeze: Callable[[], None], ctx: ProbeContext) -> Finding:
    freeze()  # returns once every thread of the FUSE daemon is stopped
    os.stat(ctx.work / "anything")  # a FUSE request nobody will answer
    return Finding(YES, "unreachable")


def cap(name: str, fn: object) -> Capability:
    return Capability(name, name, fn)  # type: ignore[arg-type]


# -- tests ----------------------------------------------------------------------------------------


def test_injected_hang_is_reported_in_time_and_probing_goes_on(tmpfs_dir: Path) -> None:
    plant_neighbours(tmpfs_dir)
    before = rm.tree_snapshot(tmpfs_dir)
    t0 = time.monotonic()
    tp = probe_target(tmpfs_dir, timeout=1.0, capabilities=[cap("sleeper", sleeper), cap("after", quick)])
    elapsed = time.monotonic() - t0
    assert tp.result("sleeper").verdict == "hung"
    assert tp.result("sleeper").duration_ms < 1000 + 1000
    assert tp.result("after").verdict == "yes"  # the target still answers: go on
    assert elapsed < 4.0
    assert tp.cleanup == "removed"
    assert leftovers(tmpfs_dir) == []
    assert rm.tree_snapshot(tmpfs_dir) == before


def test_failures_are_contained_and_cleaned_up(tmpfs_dir: Path) -> None:
    plant_neighbours(tmpfs_dir)
    before = rm.tree_snapshot(tmpfs_dir)
    caps = [
        cap("refuser", refuser),
        cap("helper", helper_fails),
        cap("raw", raw_oserror),
        cap("segv", segfault),
        cap("litter", litter),
    ]
    tp = probe_target(tmpfs_dir, timeout=5.0, capabilities=caps)
    assert (tp.result("refuser").verdict, tp.result("refuser").errno) == ("no", "EPERM")
    assert tp.result("refuser").step == "an operation the filesystem refuses"
    assert "refuses" in tp.result("refuser").detail
    # a failing helper step is "differs" naming the step, never "no"
    failed_helper = tp.result("helper")
    assert (failed_helper.verdict, failed_helper.errno) == ("differs", "ENOENT")
    assert failed_helper.step == "create the test file in a missing directory"
    assert "create the test file in a missing directory" in failed_helper.detail
    # an unlabelled call that fails cannot be said to be the capability's: "differs", said so
    assert (tp.result("raw").verdict, tp.result("raw").errno) == ("differs", "ENOENT")
    assert "without a label" in tp.result("raw").detail
    assert tp.result("segv").verdict == "no" and "SIGSEGV" in tp.result("segv").detail
    assert tp.result("litter").verdict == "yes"
    assert tp.cleanup == "removed"
    assert leftovers(tmpfs_dir) == []
    assert rm.tree_snapshot(tmpfs_dir) == before
    assert Path("/etc/hostname").exists()


def test_a_bug_in_a_probe_raises_after_cleaning_up(tmpfs_dir: Path) -> None:
    plant_neighbours(tmpfs_dir)
    before = rm.tree_snapshot(tmpfs_dir)
    with pytest.raises(ChildCrashed, match="a bug in a probe"):
        probe_target(tmpfs_dir, capabilities=[cap("ok", quick), cap("buggy", buggy)])
    assert leftovers(tmpfs_dir) == []
    assert rm.tree_snapshot(tmpfs_dir) == before


def test_unusable_target_skips_everything(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    tp = probe_target(missing, timeout=2.0)
    assert tp.error and "ENOENT" in tp.error
    assert {r.verdict for r in tp.results} == {"skipped"}
    assert not missing.exists()


def test_frozen_fuse_server_before_probing(sshfs_mount: rm.FuseMount) -> None:
    """The FUSE daemon is stopped: creating the scratch directory hangs; nothing else runs."""
    host = sshfs_mount.source
    plant_neighbours(host)
    before = rm.tree_snapshot(host)
    with sshfs_mount.frozen():
        t0 = time.monotonic()
        tp = probe_target(sshfs_mount.mountpoint, timeout=1.0)
        elapsed = time.monotonic() - t0
    assert elapsed < 1.0 + KILL_GRACE_S + 2.0
    assert tp.error and "hung" in tp.error
    assert {r.verdict for r in tp.results} == {"skipped"}
    # Whatever reached the server (at most an empty scratch directory) can be removed.
    for name in leftovers(host):
        assert remove_scratch(sshfs_mount.mountpoint / name) == "removed"
    assert leftovers(host) == []
    assert rm.tree_snapshot(host) == before
    assert _reaped()


def test_fuse_server_freezing_mid_probe(sshfs_mount: rm.FuseMount) -> None:
    """A probe hangs on a mount that stops answering: "hung", the rest skipped, the scratch
    directory reported as left behind and removable once the server is back."""
    host = sshfs_mount.source
    plant_neighbours(host)
    before = rm.tree_snapshot(host)
    caps = [
        by_id("symlink"),
        cap("freezer", functools.partial(freeze_then_stat, sshfs_mount.freeze)),
        by_id("chmod"),
    ]
    os.listdir(sshfs_mount.mountpoint)  # warm the connection: a first access can take ~0.5 s
    timeout = 1.5
    t0 = time.monotonic()
    try:
        tp = probe_target(sshfs_mount.mountpoint, timeout=timeout, capabilities=caps)
    finally:
        elapsed = time.monotonic() - t0
        sshfs_mount.thaw()
    assert tp.result("symlink").verdict == "yes"
    assert tp.result("freezer").verdict == "hung"
    assert tp.result("chmod").verdict == "skipped"
    assert "stopped answering" in tp.result("chmod").detail
    assert tp.cleanup.startswith("left ")
    # probe + ping + one removal attempt (1 s each), each possibly followed by a kill grace
    # (a request already taken by the server cannot be abandoned), plus slack
    assert elapsed < 3 * (timeout + KILL_GRACE_S) + 2.0
    assert tp.scratch is not None
    assert remove_scratch(tp.scratch) == "removed"
    assert leftovers(host) == []
    assert rm.tree_snapshot(host) == before
    assert _reaped()


def _reaped() -> bool:
    deadline = time.monotonic() + 5
    while reap_stragglers() and time.monotonic() < deadline:
        time.sleep(0.05)
    return reap_stragglers() == 0


def _probe_as_nobody(path: str) -> dict:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    caps = [by_id("chown_uid"), by_id("chown_gid"), by_id("chmod"), by_id("symlink")]
    return probe_target(Path(path), timeout=5.0, capabilities=caps).to_dict()


def test_chown_says_needs_root_when_not_root(tmpfs_dir: Path) -> None:
    os.chmod(tmpfs_dir, 0o777)
    plant_neighbours(tmpfs_dir)
    before = rm.tree_snapshot(tmpfs_dir)
    out = run_isolated(_probe_as_nobody, str(tmpfs_dir), timeout=30)
    assert out.status == "ok", out.message
    verdicts = {r["capability"]: r["verdict"] for r in out.value["results"]}
    assert verdicts == {
        "chown_uid": "needs root",
        "chown_gid": "needs root",
        "chmod": "yes",
        "symlink": "yes",
    }
    assert out.value["cleanup"] == "removed"
    assert rm.tree_snapshot(tmpfs_dir) == before


def _processes_mentioning(text: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"]) if any(text in part for part in p.info["cmdline"] or ())]


def test_a_sigkilled_probe_leaves_scratch_that_the_next_probe_removes(tmpfs_dir: Path, tmp_path: Path) -> None:
    """`mountbench probe` killed with SIGKILL leaves its scratch directory; the next probe of
    the target removes it (its owner is gone) and says so, as it does a killed run's directory
    (issue 24 §6; a resume lays that run's files out again). A live probe's directory and
    directories without our marker stay."""
    plant_neighbours(tmpfs_dir)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone_owner = Owner.of(gone.pid)
    gone.wait()
    try:
        scratch.create(tmpfs_dir, PREFIX + "live", Marker("probe", "t", Owner.of(sleeper.pid)))
        before = rm.tree_snapshot(tmpfs_dir)
        dead_run = scratch.create(tmpfs_dir, ".mountbench-20260101-000000-dead", Marker("run", "r", gone_owner))
        probe = subprocess.Popen(
            [sys.executable, "-m", "mountbench", "probe", str(tmpfs_dir), "--db", str(tmp_path / "db.sqlite")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while not any(p.is_dir() for d in _fresh_scratch(tmpfs_dir) for p in d.iterdir()):  # mid-probe
            assert probe.poll() is None and time.monotonic() < deadline, "the probe ended before it could be killed"
            time.sleep(0.002)
        probe.send_signal(signal.SIGKILL)  # the probe process only: its children must die with it
        probe.wait()
        (left,) = _fresh_scratch(tmpfs_dir)
        deadline = time.monotonic() + 5
        while _processes_mentioning(str(tmpfs_dir)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_mentioning(str(tmpfs_dir)) == []  # no probe runs on in the directory

        tp = probe_target(tmpfs_dir, timeout=5.0, capabilities=[cap("ok", quick)])
        assert len(tp.swept) == 1 and str(left) in tp.swept[0] and "is gone" in tp.swept[0]
        assert not left.exists()
        assert not dead_run.exists()  # the first probe, as it began, removed the killed run's directory
        assert rm.tree_snapshot(tmpfs_dir) == before  # the live probe's, the run's, the decoy: untouched
        assert any(str(left) in line for line in render_markdown(tp).splitlines())
        again = probe_target(tmpfs_dir, timeout=5.0, capabilities=[cap("ok", quick)])
        assert again.swept == ()
    finally:
        sleeper.kill()
        sleeper.wait()


def _fresh_scratch(root: Path) -> list[Path]:
    return [p for p in root.iterdir() if is_ours(p.name) and p.name != PREFIX + "live"]
