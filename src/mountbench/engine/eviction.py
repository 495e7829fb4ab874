"""Whether the page cache can be evicted before a sample here, asked before a run starts (the
up-front note of engine/privileges.py, `doctor`, `run --dry-run`'s checks).

Today's answer is caches.py's rule, without doing it: ``echo 3 > /proc/sys/vm/drop_caches``,
which needs root and a writable ``/proc/sys`` (a container's is read-only even for its root).
Kept apart from caches.py so that a change of how caches are evicted (per file, without root)
changes this one function with it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mountbench.host.facts import is_root

DROP_FILE = Path("/proc/sys/vm/drop_caches")


def can_evict() -> tuple[bool, str]:
    """(True, how) when caches.before_sample can evict the page cache here; (False, why not)."""
    if not sys.platform.startswith("linux"):
        return False, "only implemented on Linux"
    if not is_root():
        return False, "not root"
    if not os.access(DROP_FILE, os.W_OK):
        return False, f"{DROP_FILE} is read-only here, as /proc/sys is in a container that is not privileged"
    return True, f"root: sync; echo 3 > {DROP_FILE}"
