"""Schema versions and the step-by-step migrations between them.

``PRAGMA user_version`` holds the version. Each entry of MIGRATIONS upgrades
from its index to index + 1; never edit a released step, append a new one.

History:
  1  runs, targets, workloads, samples
  2  probes: capability matrices and coherence measurements (mountbench probe)
  3  runs.owner: the process working on a run, so a run whose process is gone reads as interrupted
  4  samples.series: values over each sample's time (fio's bandwidth and IOPS logs)
  5  samples.clients: per-client results of samples taken on several machines (run --client)
  6  runs.origin: where a run came from ('' for one made here; what `mountbench import` read it
     from): an imported run is a record, never resumed; calibrations: how much a filesystem's results
     move between runs (mountbench calibrate), per filesystem
"""

from __future__ import annotations

import functools
import sqlite3

MIGRATIONS: list[str] = [
    # 0 -> 1
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        finished_at REAL,
        status TEXT NOT NULL,
        command TEXT NOT NULL,
        config TEXT NOT NULL,
        host TEXT NOT NULL
    );
    CREATE TABLE targets (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        label TEXT NOT NULL,
        path TEXT NOT NULL,
        info TEXT,
        PRIMARY KEY (run_id, label)
    );
    CREATE TABLE workloads (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        workload TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE samples (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        workload TEXT NOT NULL,
        round INTEGER NOT NULL,
        ok INTEGER NOT NULL,
        metrics TEXT NOT NULL,
        caveats TEXT NOT NULL,
        error TEXT NOT NULL,
        started_at REAL NOT NULL,
        wall_s REAL NOT NULL,
        cache_action TEXT NOT NULL,
        raw TEXT NOT NULL,
        UNIQUE (run_id, target, workload, round)
    );
    CREATE INDEX samples_run ON samples(run_id);
    """,
    # 1 -> 2
    """
    CREATE TABLE probes (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        command TEXT NOT NULL,
        host TEXT NOT NULL,
        results TEXT NOT NULL
    );
    """,
    # 2 -> 3
    """
    ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
    """,
    # 3 -> 4
    """
    ALTER TABLE samples ADD COLUMN series TEXT NOT NULL DEFAULT '{}';
    """,
    # 4 -> 5
    """
    ALTER TABLE samples ADD COLUMN clients TEXT NOT NULL DEFAULT '[]';
    """,
    # 5 -> 6
    """
    ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT '';
    CREATE TABLE calibrations (
        key TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        path TEXT NOT NULL,
        runs TEXT NOT NULL,
        record TEXT NOT NULL
    );
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


def tables_of(connection: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    """Each table of a database (SQLite's own aside) and its columns, in order."""
    names = [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]  # fmt: skip
    return {name: tuple(row[1] for row in connection.execute(f'PRAGMA table_info("{name}")')) for name in names}


@functools.cache
def expected_tables(version: int) -> dict[str, tuple[str, ...]]:
    """The tables a mountbench database of ``version`` has: the migrations up to it, applied."""
    memory = sqlite3.connect(":memory:")
    try:
        for step in MIGRATIONS[:version]:
            memory.executescript(step)
        return tables_of(memory)
    finally:
        memory.close()


def mismatch(version: int, found: dict[str, tuple[str, ...]]) -> str:
    """Why a database claiming schema ``version`` is not one mountbench wrote ('' when it is).
    An empty database (version 0, no tables) is a new one."""
    if version < 0:
        return f"its schema version is {version}"
    expected = expected_tables(version)
    if found == expected:
        return ""
    if version == 0:
        return f"it holds other tables: {', '.join(sorted(found))}"
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        parts = ([f"no table {', '.join(missing)}"] if missing else []) + (
            [f"unknown table {', '.join(extra)}"] if extra else [])  # fmt: skip
        return f"schema {version} expected, but {'; '.join(parts)}"
    wrong = next(name for name in sorted(expected) if expected[name] != found[name])
    return f"schema {version} expected, but table {wrong} has columns {', '.join(found[wrong])}"
