"""Probe tests: make tests/realmounts.py importable and expose its fixtures here."""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from realmounts import (  # noqa: E402, F401 - pytest fixtures, used by name
    bindfs_mount,
    ext4_dir,
    ssh_server,
    sshfs_mount,
    sshfs_nocache_mount,
    tmpfs_dir,
)
