"""Run the real mountbench command in a child process, as a user would."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support import realmounts

FAST = ["--runtime", "0.3", "--size", "4M"]


def mountbench(*args: str, env: dict[str, str] | None = None, timeout: float = 300, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "mountbench", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=cwd,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    """Bad input's answer: exit 2, one line on stderr holding every fragment, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def start_mountbench(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "mountbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def snapshot(directory: Path) -> dict[str, str]:
    """Every entry under ``directory`` with a digest of its content and its mtime."""
    result = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = Path(root) / name
            stat = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            result[str(path.relative_to(directory))] = f"{digest}:{stat.st_mtime_ns}:{stat.st_mode:o}"
    return result


def plant_neighbours(directory: Path) -> dict[str, str]:
    """Files and a directory next to where the scratch directory will go."""
    (directory / "precious.txt").write_text("do not touch\n")
    (directory / ".mountbench-not-ours").mkdir()
    (directory / ".mountbench-not-ours" / "data").write_text("someone else's\n")
    (directory / "sub").mkdir()
    (directory / "sub" / "deep.bin").write_bytes(os.urandom(1000))
    return snapshot(directory)


def wait_for_samples(db: Path, count: int, timeout: float = 60) -> None:
    import sqlite3

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=5) as conn:
                    if conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] >= count:
                        return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.1)
    raise TimeoutError(f"fewer than {count} samples stored after {timeout} s")


def load_export(path: Path) -> dict:
    return json.loads(path.read_text())


@contextmanager
def ramfs() -> Iterator[Path]:
    """A ramfs mount: a filesystem that refuses O_DIRECT (EINVAL) on current kernels."""
    realmounts.require_root()
    with realmounts._mountpoint("ramfs") as mp:
        realmounts._check(["mount", "-t", "ramfs", "-o", "mode=0755", "mountbench-test", str(mp)])
        try:
            yield mp
        finally:
            realmounts._unmount(mp)
