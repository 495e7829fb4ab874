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


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    """Bad input's answer: exit 2, one line on stderr holding every fragment, no traceback, no
    "internal error". The line."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def runs_begun_since(since: float, *places: Path) -> list[str]:
    """Runs stored in a results database (``places``: database files, or directories searched for
    ``*.sqlite``) that began at or after ``since`` (time.time()): what a command that is refused,
    a dry run or a listing must never leave (a run stores itself before its first sample; an
    imported run keeps the time it began)."""
    import sqlite3

    found = []
    for place in places:
        for db in sorted(place.rglob("*.sqlite")) if place.is_dir() else [place] if place.exists() else []:
            try:
                with sqlite3.connect(db) as conn:
                    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                    if "runs" in tables:
                        rows = conn.execute("SELECT id FROM runs WHERE created_at >= ?", (since - 1.0,)).fetchall()
                        found += [f"{db}: {run_id}" for (run_id,) in rows]
            except sqlite3.DatabaseError:  # a test's damaged or garbage database holds no run
                continue
    return found


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


FIXTURE_DB = Path(__file__).parents[1] / "data" / "store" / "schema-v4.sqlite"


def fixture_db(tmp_path: Path) -> Path:
    """A results database holding one complete run (the stored schema-4 fixture, upgraded)."""
    db = tmp_path / "fixture.sqlite"
    db.write_bytes(FIXTURE_DB.read_bytes())
    assert mountbench("list", "--db", str(db)).returncode == 0
    return db


def exported(tmp_path: Path, db: Path, change, name: str = "changed.json") -> Path:
    """The database's last run exported, changed by ``change`` (a function of the run's dict),
    written to a new file."""
    path = tmp_path / "export.json"
    assert mountbench("export", "last", "--db", str(db), "--out", str(path)).returncode == 0
    document = json.loads(path.read_text())
    change(document["runs"][0])
    changed = tmp_path / name
    changed.write_text(json.dumps(document))
    return changed


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
