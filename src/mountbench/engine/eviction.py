"""Whether the page cache can be made cold before a sample here, asked before a run starts (the
up-front note of engine/upfront.py, `doctor`, `run --dry-run`'s checks), by the rules of caches.py,
without doing it:

- the files a buffered sample reads are evicted one by one (``posix_fadvise(DONTNEED)`` on Linux), which
  needs no root: :func:`can_evict_files`;
- a tree walk or a start-up reads inodes and directory entries no file eviction reaches: the machine's
  caches are dropped (``echo 3 > /proc/sys/vm/drop_caches``), which needs root and a writable
  ``/proc/sys`` (a container's is read-only even for its root): :func:`can_drop_machine_caches`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mountbench.host.facts import is_root

DROP_FILE = Path("/proc/sys/vm/drop_caches")


def can_evict_files() -> tuple[bool, str]:
    """(True, how) when a buffered sample's own files can be evicted here; (False, why not)."""
    if not sys.platform.startswith("linux"):
        return False, "only implemented on Linux"
    return True, "each file a sample reads, posix_fadvise(DONTNEED): no root needed"


def can_drop_machine_caches() -> tuple[bool, str]:
    """(True, how) when the machine's caches can be dropped (what tree walks and start-ups need)."""
    if not sys.platform.startswith("linux"):
        return False, "only implemented on Linux"
    if not is_root():
        return False, "not root"
    if not os.access(DROP_FILE, os.W_OK):
        return False, f"{DROP_FILE} is read-only here, as /proc/sys is in a container that is not privileged"
    return True, f"root: sync; echo 3 > {DROP_FILE}"


def can_evict() -> tuple[bool, str]:
    """(True, how) when every kind of sample can be made cold here (both of the above); (False, why not)."""
    files, why_files = can_evict_files()
    if not files:
        return False, why_files
    machine, why_machine = can_drop_machine_caches()
    return (True, why_machine) if machine else (False, why_machine)
