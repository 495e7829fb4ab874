"""Build the stored fixtures of every older results-database schema (schema-v1.sqlite ...):
each from store/schema.py's history (MIGRATIONS[:version]), holding one run of two targets,
one workload and two samples as mountbench of that version wrote them. Rerun only when a
new schema version is added (the old files must never change):

    python tests/data/store/make_fixtures.py
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2] / "src"))

from mountbench.store.schema import MIGRATIONS  # noqa: E402

RUN_ID = "20250101-120000-abcd"
CONFIG = {"version": 2, "repeat": 2, "seed": 7, "baseline": "ram", "presets": ["quick"]}
HOST = {"hostname": "fixture-host", "kernel": "6.1.0"}
INFO = {"fstype": "tmpfs", "mount_point": "/dev/shm", "mount_source": "tmpfs", "mount_options": "rw",
        "free_bytes": 1 << 30, "total_bytes": 2 << 30, "odirect": False, "odirect_detail": "EINVAL"}  # fmt: skip
WORKLOAD = {"name": "seq-read", "kind": "fio", "title": "SEQ read", "source": "preset:quick",
            "spec": {"section": "seq-read", "options": [["rw", "read"], ["bs", "1m"], ["size", "4m"]]}}  # fmt: skip


def build(version: int, path: Path) -> None:
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    for step in range(version):
        db.executescript(MIGRATIONS[step])
        db.execute(f"PRAGMA user_version = {step + 1}")
    run_columns = ["id", "created_at", "finished_at", "status", "command", "config", "host"]
    run_values = [RUN_ID, 1735732800.0, 1735732900.0, "complete", "mountbench run ram=/dev/shm disk=/tmp",
                  json.dumps(CONFIG), json.dumps(HOST)]  # fmt: skip
    if version >= 3:
        run_columns.append("owner")
        run_values.append("")
    db.execute(f"INSERT INTO runs ({', '.join(run_columns)}) VALUES ({', '.join('?' * len(run_values))})", run_values)
    for position, (label, where) in enumerate([("ram", "/dev/shm"), ("disk", "/tmp")]):
        db.execute("INSERT INTO targets VALUES (?, ?, ?, ?, ?)", (RUN_ID, position, label, where, json.dumps(INFO)))
    db.execute("INSERT INTO workloads VALUES (?, ?, ?, ?)", (RUN_ID, 0, "seq-read", json.dumps(WORKLOAD)))
    for label, iops in (("ram", 900.0), ("disk", 300.0)):
        columns = ["run_id", "target", "workload", "round", "ok", "metrics", "caveats", "error", "started_at",
                   "wall_s", "cache_action", "raw"]  # fmt: skip
        values = [RUN_ID, label, "seq-read", 0, 1, json.dumps({"read.iops": iops}), "[]", "", 1735732810.0, 1.5,
                  "", "{}"]  # fmt: skip
        if version >= 4:
            columns.append("series")
            values.append(json.dumps({"read.iops": [iops, iops]}))
        db.execute(f"INSERT INTO samples ({', '.join(columns)}) VALUES ({', '.join('?' * len(values))})", values)
    if version >= 2:
        probe = ("probe-20250101-120500-beef", 1735733100.0, "mountbench probe /tmp", json.dumps(HOST), "{}")
        db.execute("INSERT INTO probes VALUES (?, ?, ?, ?, ?)", probe)
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    for version in range(1, len(MIGRATIONS)):
        target = HERE / f"schema-v{version}.sqlite"
        if target.exists():  # never change an older schema's file
            continue
        build(version, target)
        print(f"wrote schema-v{version}.sqlite")
