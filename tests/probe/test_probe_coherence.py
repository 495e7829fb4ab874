"""measure_coherence on real pairs of views, checked against direct syscalls in the test.

- a tmpfs and a kernel bind mount of it (one filesystem seen twice: coherent);
- a host directory and its sshfs mount, with ``-o cache=no`` and with the default
  caching (attribute caching makes delays visible).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import realmounts as rm

from mountbench.errors import TargetError
from mountbench.host.scratch import PROBE_PREFIX as PREFIX
from mountbench.probe import CoherenceResult, measure_coherence
from mountbench.probe.coherence import OPERATIONS
from mountbench.probe.sandbox import KILL_GRACE_S

pytestmark = [pytest.mark.root, rm.requires_root]

METADATA_OPS = ("append", "truncate", "rename", "delete")


# -- direct oracles ---------------------------------------------------------------------------------


def direct_lock_blocks(a_file: Path, b_file: Path, kind: str) -> bool:
    """Hold an exclusive lock through A; does a second process fail to lock through B?"""
    lock: Callable[[int, int], None] = fcntl.flock if kind == "flock" else fcntl.lockf
    fd = os.open(a_file, os.O_RDWR)
    try:
        lock(fd, fcntl.LOCK_EX)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            code = 1
            try:
                other = os.open(b_file, os.O_RDWR)
                lock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    return os.waitstatus_to_exitcode(status) != 0


def direct_inotify_fires(a_dir: Path, b_dir: Path, wait: float) -> bool:
    """Watch B; create a file through A; does any event arrive within ``wait`` s?"""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    try:
        assert libc.inotify_add_watch(fd, os.fsencode(b_dir), 0x100 | 0x200) >= 0
        (a_dir / "inotify-oracle").write_bytes(b"x")
        ready, _, _ = select.select([fd], [], [], wait)
        (a_dir / "inotify-oracle").unlink()
        return bool(ready)
    finally:
        os.close(fd)


def direct_read_after_rewrite(a_dir: Path, b_dir: Path, wait: float) -> str:
    """B reads and stats a file, A rewrites it in place (longer), B stats and reads it at once.

    The order of B's calls matters on FUSE: a read() invalidates the cached atime, so a
    stat() right after a read asks the server again. This is the measurement's order.
    """
    old, new = b"o" * 1000, b"N" * 3000
    (a_dir / "stale-oracle").write_bytes(old)
    deadline = time.monotonic() + wait
    # B has seen the old version: read, then stat (as the measurement primes B).
    while not ((b_dir / "stale-oracle").read_bytes() == old and os.stat(b_dir / "stale-oracle").st_size == len(old)):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    (a_dir / "stale-oracle").write_bytes(new)
    size = os.stat(b_dir / "stale-oracle").st_size
    data = (b_dir / "stale-oracle").read_bytes()
    (a_dir / "stale-oracle").unlink()
    if (size, data) == (len(new), new):
        return "fresh"
    if (size, data) == (len(old), old):
        return "stale"
    return "torn"


def direct_stat_is_stale_after_append(a_dir: Path, b_dir: Path, wait: float) -> bool:
    (a_dir / "attr-oracle").write_bytes(b"x" * 100)
    deadline = time.monotonic() + wait
    while not (b_dir / "attr-oracle").exists() or os.stat(b_dir / "attr-oracle").st_size != 100:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with open(a_dir / "attr-oracle", "ab") as f:
        f.write(b"more")
    stale = os.stat(b_dir / "attr-oracle").st_size == 100
    (a_dir / "attr-oracle").unlink()
    return stale


def check_against_oracles(result: CoherenceResult, a: Path, b: Path, timeout: float) -> None:
    for lk in result.locks:
        f = a / f"lock-oracle-{lk.kind}"
        f.write_bytes(b"x")
        deadline = time.monotonic() + timeout
        while not (b / f.name).exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        expected = direct_lock_blocks(f, b / f.name, lk.kind)
        f.unlink()
        assert lk.blocked == (expected,) * result.repeat, lk
    fires = direct_inotify_fires(a, b, min(timeout, 1.0))
    assert (result.inotify.complete == result.repeat) == fires, result.inotify
    if not fires:
        assert not any(result.inotify.received), result.inotify
    rewrite = next(s for s in result.stale_reads if s.mode == "rewrite in place")
    assert direct_read_after_rewrite(a, b, timeout) in rewrite.outcomes, rewrite
    if direct_stat_is_stale_after_append(a, b, timeout):
        append = result.visibility_of("append").summary
        assert append.seen < append.total or (append.min_ms or 0) > 1.0, append


def no_scratch_left(root: Path) -> bool:
    return not [n for n in os.listdir(root) if n.startswith(PREFIX)]


# -- tests ------------------------------------------------------------------------------------------


def test_a_bind_mount_is_coherent(tmpfs_dir: Path) -> None:
    (tmpfs_dir / "neighbour").write_bytes(b"keep")
    before = rm.tree_snapshot(tmpfs_dir)
    with rm.bind_mount(tmpfs_dir) as view_b:
        result = measure_coherence(tmpfs_dir, view_b, repeat=2, timeout=2.0)
        check_against_oracles(result, tmpfs_dir, view_b, 2.0)
    assert result.cleanup == "removed"
    for op in OPERATIONS:
        s = result.visibility_of(op).summary
        assert s.seen == s.total == 2, op
    assert all(set(s.outcomes) == {"fresh"} for s in result.stale_reads)
    assert result.inotify.complete == 2
    assert all(lk.blocked == (True, True) for lk in result.locks)
    assert rm.tree_snapshot(tmpfs_dir) == before


def test_sshfs_caching_delays_changes(sshfs_mount: rm.FuseMount, sshfs_nocache_mount: rm.FuseMount) -> None:
    """Attribute caching: with ``cache=no`` every change shows within the timeout; with
    sshfs's default cache, metadata changes show later (or not within the timeout)."""
    nocache = measure_coherence(sshfs_nocache_mount.source, sshfs_nocache_mount.mountpoint, repeat=2, timeout=2.0)
    cached = measure_coherence(sshfs_mount.source, sshfs_mount.mountpoint, repeat=2, timeout=1.5)
    for result, mount in ((nocache, sshfs_nocache_mount), (cached, sshfs_mount)):
        assert result.cleanup == "removed"
        assert no_scratch_left(mount.source)
        check_against_oracles(result, mount.source, mount.mountpoint, result.timeout_s)

    for op in OPERATIONS:
        s = nocache.visibility_of(op).summary
        assert s.seen == s.total == 2, (op, s)
    slower = 0
    for op in METADATA_OPS:
        fast, slow = nocache.visibility_of(op).summary, cached.visibility_of(op).summary
        assert fast.median_ms is not None
        later = slow.seen < slow.total or (slow.median_ms or 0) >= fast.median_ms
        assert later, (op, fast, slow)
        slower += slow.seen < slow.total or (slow.median_ms or 0) > 2 * fast.median_ms
    assert slower >= 1, "the default cache made no change show later than cache=no"


def test_views_of_different_directories_are_refused(tmpfs_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="same directory"):
        measure_coherence(tmpfs_dir, tmp_path, repeat=1, timeout=0.5)
    assert no_scratch_left(tmpfs_dir)


def test_a_frozen_view_does_not_hang_the_caller(sshfs_nocache_mount: rm.FuseMount) -> None:
    t0 = time.monotonic()
    with sshfs_nocache_mount.frozen(), pytest.raises(TargetError):
        measure_coherence(sshfs_nocache_mount.source, sshfs_nocache_mount.mountpoint, repeat=1, timeout=1.0)
    assert time.monotonic() - t0 < 1.0 + 2.0 + 3.0
    assert no_scratch_left(sshfs_nocache_mount.source)


def test_a_view_freezing_mid_measurement_stops_it_in_time(sshfs_nocache_mount: rm.FuseMount) -> None:
    """B's server stops after the measurement began: one check hangs, the rest are not
    run, the scratch directory (through A) is removed, and the bound holds."""
    os.listdir(sshfs_nocache_mount.mountpoint)  # warm the connection: the first access is slow
    timer = threading.Timer(1.5, sshfs_nocache_mount.freeze)  # in the first repetition's checks
    timer.start()
    t0 = time.monotonic()
    try:
        result = measure_coherence(sshfs_nocache_mount.source, sshfs_nocache_mount.mountpoint, repeat=3, timeout=1.0)
    finally:
        timer.cancel()
        sshfs_nocache_mount.thaw()
    elapsed = time.monotonic() - t0
    budget = 3 * 1.0 + 2.0
    assert elapsed < 1.5 + budget + 1.0 + 2 * KILL_GRACE_S + 3.0  # freeze + hung check + ping + graces
    assert result.error and "stopped answering" in result.error
    assert sum(v.hung for v in result.visibility) + result.stale_reads[0].outcomes.count("hung") >= 1
    assert all(v.summary.total == 3 for v in result.visibility)  # every repetition accounted for
    assert result.cleanup == "removed"
    assert no_scratch_left(sshfs_nocache_mount.source)
