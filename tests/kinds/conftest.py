"""Workload kind tests: the real-mount fixtures of tests/support/realmounts.py, exposed here by name."""

from support.realmounts import (  # noqa: F401 - pytest fixtures, used by name
    bindfs_mount,
    ext4_dir,
    ssh_server,
    sshfs_mount,
    tmpfs_dir,
)
