"""Is everything a mount shows on its remote? The files seen through a cloud mount that its
remote's own directory does not hold at their size yet: what the mount still has to upload
that anyone can still ask for. (A pending upload of a file no longer in the mount, such as
one rclone lost track of when its directory was renamed before the upload, is not among them:
nothing waits for it.)"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def not_on_remote(mount_dir: Path, remote_dir: Path) -> list[str]:
    """Every regular file under ``mount_dir`` (the mount) missing from ``remote_dir`` (the same
    directory as the remote stores it) or there at another size, relative and sorted. Files that
    go while it looks do not count."""
    missing = []
    for root, _dirs, files in os.walk(mount_dir):
        for name in files:
            seen = Path(root) / name
            relative = seen.relative_to(mount_dir)
            try:
                found = seen.lstat()
            except OSError:  # removed meanwhile
                continue
            if not stat.S_ISREG(found.st_mode):
                continue
            size = found.st_size
            try:
                held = (remote_dir / relative).stat().st_size
            except OSError:
                held = None
            if held != size:
                missing.append(str(relative))
    return sorted(missing)
