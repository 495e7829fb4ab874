"""What is done about the page cache before a sample, and the caveat when nothing can be."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mountbench import model
from mountbench.host.facts import is_root
from mountbench.model import Caveat

_DROP_FILE = Path("/proc/sys/vm/drop_caches")
SYNC_TIMEOUT_S = 120.0


def before_sample(mode: str, buffered: bool, uncached_why: str = "direct I/O") -> tuple[str, tuple[Caveat, ...]]:
    """Drop caches when the mode asks for it; return what was done and any caveat.

    auto: drop before buffered (cache-sensitive) workloads; always: before every
    sample; never: not at all. ``uncached_why`` says why a workload that is not
    ``buffered`` needs no drop (direct I/O, or a tree action meant to run warm).
    """
    wanted = mode == "always" or (mode == "auto" and buffered)
    if not wanted:
        if mode == "never" and buffered:
            return "not dropped (--drop-caches never)", (
                Caveat(model.CACHE_NOT_DROPPED, "caches not dropped between samples (--drop-caches never)"),
            )
        return f"not needed ({uncached_why})" if not buffered else "not dropped", ()
    ok, detail = drop_page_cache()
    if ok:
        return "dropped (sync; echo 3 > /proc/sys/vm/drop_caches)", ()
    caveat = Caveat(model.CACHE_NOT_DROPPED, f"caches not dropped between samples: {detail}")
    return f"not dropped: {detail}", (caveat,) if buffered else ()


def drop_page_cache() -> tuple[bool, str]:
    if not sys.platform.startswith("linux"):
        return False, "only implemented on Linux"
    if not is_root():
        return False, "not root (run as root to drop caches)"
    # sync(2) in a child with a time limit: a hung network mount must not hang mountbench
    try:
        child = subprocess.Popen(["sync"], stdin=subprocess.DEVNULL)
    except OSError:
        os.sync()
    else:
        try:
            child.wait(timeout=SYNC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            child.kill()  # not waited for: a sync stuck in the kernel cannot die until the mount answers
            return False, f"sync did not finish within {SYNC_TIMEOUT_S:.0f} s (is a mount hung?)"
    try:
        _DROP_FILE.write_text("3\n")
    except OSError as exc:
        return False, f"{_DROP_FILE}: {exc.strerror}"
    return True, "dropped"
