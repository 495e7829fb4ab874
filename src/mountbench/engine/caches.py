"""What is done about the page cache before a sample, and the caveat when nothing can be.

Caches are made cold as narrowly as the sample allows: the files a sample reads (its runner
names them: kinds/runner.py ``cached_files``) are evicted one by one, each opened beneath the
target's scratch directory, synced, then dropped from the page cache with
``posix_fadvise(POSIX_FADV_DONTNEED)``; nothing else on the machine loses its cache, and no root
is needed. Only where that cannot make the sample cold (a tree walk reads inodes and directory
entries, which no file eviction reaches; a workload whose files mountbench cannot name) are the
machine's caches dropped (``sync; echo 3 > /proc/sys/vm/drop_caches``, root only). Each sample
records which was done.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from mountbench import model
from mountbench.host.facts import is_root
from mountbench.host.process import kill, spawn
from mountbench.host.scratch import OutsideScratch, open_beneath
from mountbench.model import Caveat

_DROP_FILE = Path("/proc/sys/vm/drop_caches")
SYNC_TIMEOUT_S = 120.0
EVICTED = "evicted"  # how a sample's cache action starts when its files were evicted one by one
DROPPED = "dropped (sync; echo 3 > /proc/sys/vm/drop_caches)"


def before_sample(
    mode: str,
    buffered: bool,
    uncached_why: str = "direct I/O",
    files: Sequence[Path] | None = None,
    scratch: Path | None = None,
) -> tuple[str, tuple[Caveat, ...]]:
    """Make the sample's caches cold when the mode asks for it; return what was done and any caveat.

    auto: before buffered (cache-sensitive) workloads; always: before every sample; never: not
    at all. ``uncached_why`` says why a workload that is not ``buffered`` needs nothing (direct
    I/O, or a tree action meant to run warm). ``files``: the files the sample reads, beneath
    ``scratch`` (evicted one by one); None: the machine's caches are dropped instead.
    """
    wanted = mode == "always" or (mode == "auto" and buffered)
    if not wanted:
        if mode == "never" and buffered:
            return "not dropped (--drop-caches never)", (
                Caveat(model.CACHE_NOT_DROPPED, "caches not dropped between samples (--drop-caches never)"),
            )
        return f"not needed ({uncached_why})" if not buffered else "not dropped", ()
    if files is not None and scratch is not None:
        evicted, detail = evict_files(files, scratch)
        if evicted is not None:
            return (
                f"{EVICTED} {evicted} file{'s' if evicted != 1 else ''} from the page cache (fsync, "
                "posix_fadvise DONTNEED; the machine's other caches untouched)"
            ), ()
        why = detail  # a file could not be evicted: the machine's caches, as before
    else:
        why = ""
    ok, detail = drop_page_cache()
    if ok:
        return DROPPED, ()
    detail = f"{why}; {detail}" if why else detail
    caveat = Caveat(model.CACHE_NOT_DROPPED, f"caches not dropped between samples: {detail}")
    return f"not dropped: {detail}", (caveat,) if buffered else ()


def evict_files(files: Sequence[Path], scratch: Path) -> tuple[int | None, str]:
    """Evict each file (resolved beneath ``scratch``) from the page cache: fsync, then
    posix_fadvise(DONTNEED) over all of it. (count evicted, '') or (None, why not). A file not
    there yet (a sample that lays out its own) has nothing cached: it counts as done."""
    if not hasattr(os, "posix_fadvise"):
        return None, f"posix_fadvise is not available on {sys.platform}"
    count = 0
    for path in files:
        try:
            fd = open_beneath(scratch, path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        except (OutsideScratch, OSError) as exc:
            return None, f"cannot open {path.name} to evict it ({getattr(exc, 'strerror', None) or exc})"
        try:
            os.fsync(fd)  # dirty pages cannot be dropped
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            count += 1
        except OSError as exc:
            return None, f"cannot evict {path.name} ({exc.strerror or exc})"
        finally:
            os.close(fd)
    return count, ""


def drop_page_cache() -> tuple[bool, str]:
    if not sys.platform.startswith("linux"):
        return False, "only implemented on Linux"
    if not is_root():
        return False, "not root (run as root to drop caches)"
    # sync(2) in a child with a time limit: a hung network mount must not hang mountbench
    try:
        child = spawn(["sync"], session=False, death_signal=None, stdin=subprocess.DEVNULL)
    except OSError:
        os.sync()
    else:
        try:
            child.wait(timeout=SYNC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill(child)  # not waited for: a sync stuck in the kernel cannot die until the mount answers
            return False, f"sync did not finish within {SYNC_TIMEOUT_S:.0f} s (is a mount hung?)"
    try:
        _DROP_FILE.write_text("3\n")
    except OSError as exc:
        return False, f"{_DROP_FILE}: {exc.strerror}"
    return True, "dropped"
