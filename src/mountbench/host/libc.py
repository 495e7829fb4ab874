"""The C library, loaded once per process, for the system calls Python's os module lacks
(Landlock, openat2, syncfs, prctl). Load it in the parent: never between fork and exec, where the
loader takes a lock."""

from __future__ import annotations

import functools
import sys
from typing import Any


@functools.cache
def libc() -> Any:
    """libc's own symbols, with errno kept (``ctypes.get_errno``); None off Linux or where it cannot be loaded."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        found = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    found.syscall.restype = ctypes.c_long  # syscall(2) returns a long (openat2, landlock_*)
    return found
