"""Upload lag for a tree, not only one file: write a tree of small files through each cloud mount,
one mount at a time, then watch the remote's own directory until it holds every file at its size.
The probe's one-file check says "on the remote ≈ 5 s after close"; a tree shows how rclone's
upload queue drains (here ~30 files/s: 2,000 files took 67 s), and what is still only in the
mount's cache when the wait ends.

One mount at a time: written through all of them at once, the mounts share one delay proxy and
one wire, and 300 files took 26–29 s to reach the remote where one mount alone takes 14 s
(issue 49). A user has one mount; its lag is the figure."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from mountbench.probefacts import TreeLag

TREE_FILES = 300
FILE_BYTES = 2048
DIRS = 10
POLL_S = 0.1
TREE_DIR = ".mountbench-cloudlab-tree"


def _on_remote(remote: Path, names: Sequence[str]) -> int:
    count = 0
    for name in names:
        try:
            if (remote / name).stat().st_size == FILE_BYTES:
                count += 1
        except OSError:
            pass
    return count


def measure(label: str, mount_dir: Path, remote_dir: Path, timeout: float, files: int = TREE_FILES) -> TreeLag:
    """Write the tree into ``mount_dir`` (a directory of the mount), wait for ``remote_dir`` (the
    same directory on the remote) to hold it; then remove it through the mount."""
    names = [f"d{i % DIRS}/f{i:05d}" for i in range(files)]
    data = os.urandom(FILE_BYTES)
    start = time.monotonic()
    for d in range(DIRS):
        (mount_dir / f"d{d}").mkdir(parents=True, exist_ok=True)
    for name in names:
        with open(mount_dir / name, "wb") as handle:
            handle.write(data)
    closed = time.monotonic()
    at_close = _on_remote(remote_dir, names)
    lag = 0.0 if at_close == files else None
    on_remote = at_close
    while lag is None and time.monotonic() - closed < timeout:
        time.sleep(POLL_S)
        on_remote = _on_remote(remote_dir, names)
        if on_remote == files:
            lag = time.monotonic() - closed
    shutil.rmtree(mount_dir, ignore_errors=True)
    return TreeLag(label, files, closed - start, lag, at_close, on_remote, timeout, alone=True)


def measure_all(
    mounts: Sequence[tuple[str, Path, Path]], timeout: float, files: int = TREE_FILES
) -> tuple[list[TreeLag], list[str]]:
    """(label, mount root, remote root) each, one after another (the module docstring); the lags, and
    the mounts that failed (why). Each is bounded: a mount whose writes hang is left behind, said."""
    found: list[TreeLag] = []
    errors: list[str] = []
    for label, mount, remote in mounts:
        box: dict[str, TreeLag] = {}

        def one(label: str = label, mount: Path = mount, remote: Path = remote, box: dict = box) -> None:
            try:
                box[label] = measure(label, mount / TREE_DIR, remote / TREE_DIR, timeout, files)
            except OSError as exc:
                errors.append(f"{label}: the tree's upload lag could not be measured: {exc}")

        thread = threading.Thread(target=one, daemon=True, name=f"treelag-{label}")
        thread.start()
        thread.join(timeout=timeout + 300)
        if thread.is_alive():
            errors.append(f"{label}: the tree's upload lag did not finish in time")
        elif label in box:
            found.append(box[label])
    return found, errors
