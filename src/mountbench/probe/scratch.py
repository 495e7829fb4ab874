"""The probe's scratch directory: ``<target>/.mountbench-probe-<random>/`` with a marker.

These functions touch the target filesystem, so callers run them in a child
process (:func:`mountbench.probe.sandbox.run_isolated`). Removal deletes the scratch
directory only if its marker holds the token written at creation, so nothing the
probe did not create is ever removed.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import stat
import time
from pathlib import Path
from typing import Any

from mountbench.probe.fsinfo import statvfs_dict

PREFIX = ".mountbench-probe-"
MARKER = ".mountbench-probe-marker"


def new_name() -> str:
    """A fresh scratch directory name (chosen by the parent, so it is known even if a child hangs)."""
    return PREFIX + secrets.token_hex(6)


def new_token() -> str:
    return secrets.token_hex(16)


def create(target: str, name: str, token: str) -> dict[str, Any]:
    """Create the scratch directory and its marker; return facts about the target.

    Returns the target's real path, the scratch path and the target's statvfs figures.
    """
    real = os.path.realpath(target)
    if not stat.S_ISDIR(os.stat(real).st_mode):  # os.stat raises ENOENT if missing
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", real)
    scratch = os.path.join(real, name)
    os.mkdir(scratch, 0o755)
    marker = {"tool": "mountbench probe", "token": token, "pid": os.getpid(), "created": time.time()}
    fd = os.open(os.path.join(scratch, MARKER), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, json.dumps(marker).encode())
    finally:
        os.close(fd)
    return {"realpath": real, "scratch": scratch, "statvfs": statvfs_dict(os.statvfs(real))}


def marker_token(scratch: str) -> str | None:
    try:
        with open(os.path.join(scratch, MARKER), "rb") as f:
            return str(json.loads(f.read().decode()).get("token"))
    except (OSError, ValueError):
        return None


def remove(scratch: str, token: str) -> str:
    """Remove the scratch directory if its marker holds ``token``; say what was done.

    Without a marker (creation failed half-way), only an empty directory is removed.
    """
    if not os.path.lexists(scratch):
        return "absent"
    if not os.path.basename(scratch.rstrip("/")).startswith(PREFIX):
        raise ValueError(f"refusing to remove {scratch}: not a probe scratch directory")
    found = marker_token(scratch)
    if found is None:
        os.rmdir(scratch)  # fails (ENOTEMPTY) unless empty: then we leave it
        return "removed"
    if found != token:
        raise PermissionError(1, "marker token does not match; not ours", scratch)
    for attempt in range(3):
        try:
            shutil.rmtree(scratch)
        except FileNotFoundError:
            pass
        except OSError:
            # FUSE filesystems may create .fuse_hidden* files while unlinking open
            # files; they vanish once closed. Retry briefly.
            if attempt == 2:
                raise
            time.sleep(0.1)
        if not os.path.lexists(scratch):
            break
    return "removed"


def responsive(scratch: str) -> bool:
    """Does the filesystem still answer? Creating and removing a directory must reach the
    server (a stat could be answered from an attribute cache)."""
    ping = os.path.join(scratch, f"ping-{secrets.token_hex(4)}")
    os.mkdir(ping)
    os.rmdir(ping)
    return True


def existing(target: str) -> list[str]:
    """Scratch directories left in ``target`` by earlier probes (for `--clean`-like tooling)."""
    return sorted(str(p) for p in Path(target).glob(PREFIX + "*") if p.is_dir())
