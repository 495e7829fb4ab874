"""Read and write runs in SQLite."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import platformdirs

from mountbench.errors import StoreError
from mountbench.model import RunConfig, RunData, Sample, TargetInfo, TargetRecord, Workload
from mountbench.records.codec import (
    config_from_dict,
    config_to_dict,
    sample_from_dict,
    sample_to_dict,
    target_from_dict,
    workload_from_dict,
    workload_to_dict,
)
from mountbench.store.schema import MIGRATIONS, SCHEMA_VERSION


def _decoded(row: tuple) -> tuple:
    """A samples row with its JSON columns (metrics, caveats, clients) decoded."""
    return (*row[:4], json.loads(row[4]), json.loads(row[5]), *row[6:11], json.loads(row[11]))


def default_db_path() -> Path:
    """``$MOUNTBENCH_DB``, else ``<user data dir>/mountbench/results.sqlite``."""
    env = os.environ.get("MOUNTBENCH_DB")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("mountbench")) / "results.sqlite"


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"cannot open the results database {path} ({exc}); pass --db with a writable path"
            ) from None
        self.db.execute("PRAGMA foreign_keys = ON")
        self._migrate()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a mountbench database ({exc}); pass --db with another path") from None
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer mountbench (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade mountbench or pass --db with another path"
            )
        for step in range(version, SCHEMA_VERSION):
            with self.db:
                self.db.executescript(MIGRATIONS[step])
                self.db.execute(f"PRAGMA user_version = {step + 1}")

    # --- writing -------------------------------------------------------------

    def create_run(
        self,
        run_id: str,
        command: str,
        config: RunConfig,
        host: dict[str, Any],
        targets: list[TargetRecord],
        workloads: list[Workload],
        created_at: float | None = None,
    ) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO runs (id, created_at, status, command, config, host) VALUES (?, ?, 'running', ?, ?, ?)",
                (run_id, created_at or time.time(), command, json.dumps(config_to_dict(config)), json.dumps(host)),
            )
            self.db.executemany(
                "INSERT INTO targets (run_id, position, label, path, info) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, i, r.target.label, r.target.path, json.dumps(r.info.to_dict()) if r.info else None)
                    for i, r in enumerate(targets)
                ],
            )
            self.db.executemany(
                "INSERT INTO workloads (run_id, position, name, workload) VALUES (?, ?, ?, ?)",
                [(run_id, i, w.name, json.dumps(workload_to_dict(w))) for i, w in enumerate(workloads)],
            )

    def update_target_info(self, run_id: str, label: str, info: TargetInfo) -> None:
        with self.db:
            self.db.execute(
                "UPDATE targets SET info = ? WHERE run_id = ? AND label = ?",
                (json.dumps(info.to_dict()), run_id, label),
            )

    def add_sample(self, run_id: str, sample: Sample) -> None:
        """Commit one sample at once: a crash afterwards cannot lose it."""
        data = sample_to_dict(sample)
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO samples (run_id, target, workload, round, ok, metrics, caveats, error,"
                " started_at, wall_s, cache_action, raw, clients) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    data["target"],
                    data["workload"],
                    data["round"],
                    int(data["ok"]),
                    json.dumps(data["metrics"]),
                    json.dumps(data["caveats"]),
                    data["error"],
                    data["started_at"],
                    data["wall_s"],
                    data["cache_action"],
                    data["raw"],
                    json.dumps(data.get("clients", [])),
                ),
            )

    def set_status(self, run_id: str, status: str) -> None:
        finished = time.time() if status != "running" else None
        with self.db:
            self.db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, finished, run_id))

    def import_run(self, run: RunData) -> bool:
        """Store a run exported elsewhere; False when a run with that id is already here."""
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run.id,)).fetchone():
            return False
        self.create_run(
            run.id, run.command, run.config, run.host, list(run.targets), list(run.workloads), created_at=run.created_at
        )
        for sample in run.samples:
            self.add_sample(run.id, sample)
        with self.db:
            self.db.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (run.status, run.finished_at, run.id)
            )
        return True

    # --- reading -------------------------------------------------------------

    def list_runs(self) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT r.id, r.created_at, r.finished_at, r.status, r.command, r.host,"
            " (SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id),"
            " (SELECT group_concat(label, ', ') FROM"
            "   (SELECT label FROM targets t WHERE t.run_id = r.id ORDER BY position))"
            " FROM runs r ORDER BY r.created_at"
        ).fetchall()
        return [
            {
                "id": row[0],
                "created_at": row[1],
                "finished_at": row[2],
                "status": row[3],
                "command": row[4],
                "hostname": json.loads(row[5]).get("hostname", ""),
                "samples": row[6],
                "targets": row[7] or "",
            }
            for row in rows
        ]

    def resolve(self, run_ref: str) -> str:
        """A full id, a unique prefix of one, or 'last'."""
        if run_ref == "last":
            row = self.db.execute("SELECT id FROM runs ORDER BY created_at DESC LIMIT 1").fetchone()
            if row is None:
                raise StoreError(f"no runs stored in {self.path} yet; start one with 'mountbench run'")
            return row[0]
        rows = self.db.execute("SELECT id FROM runs WHERE id LIKE ? || '%'", (run_ref,)).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        if not rows:
            raise StoreError(f"no run {run_ref!r} in {self.path}; 'mountbench list' shows the stored runs")
        raise StoreError(f"run id {run_ref!r} is ambiguous ({len(rows)} runs match); give more characters")

    def load_run(self, run_ref: str, *, with_raw: bool = False) -> RunData:
        run_id = self.resolve(run_ref)
        row = self.db.execute(
            "SELECT id, created_at, finished_at, status, command, config, host FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        targets = tuple(
            target_from_dict({"label": label, "path": path, "info": json.loads(info) if info else None})
            for label, path, info in self.db.execute(
                "SELECT label, path, info FROM targets WHERE run_id = ? ORDER BY position", (run_id,)
            )
        )
        workloads = tuple(
            workload_from_dict(json.loads(text))
            for (text,) in self.db.execute(
                "SELECT workload FROM workloads WHERE run_id = ? ORDER BY position", (run_id,)
            )
        )
        raw_col = "raw" if with_raw else "''"
        columns = ("target", "workload", "round", "ok", "metrics", "caveats", "error", "started_at", "wall_s",
                   "cache_action", "raw", "clients")  # fmt: skip
        samples = tuple(
            sample_from_dict(
                dict(
                    zip(columns, (*r[:4], json.loads(r[4]), json.loads(r[5]), *r[6:11], json.loads(r[11])), strict=True)
                )
            )
            for r in self.db.execute(
                "SELECT target, workload, round, ok, metrics, caveats, error, started_at, wall_s, cache_action,"
                f" {raw_col}, clients FROM samples WHERE run_id = ? ORDER BY id",
                (run_id,),
            )
        )
        return RunData(
            id=row[0],
            created_at=row[1],
            finished_at=row[2],
            status=row[3],
            command=row[4],
            config=config_from_dict(json.loads(row[5])),
            host=json.loads(row[6]),
            targets=targets,
            workloads=workloads,
            samples=samples,
        )

    # --- probes ------------------------------------------------------------------

    def save_probe(self, probe_id: str, command: str, host: dict[str, Any], results: dict[str, Any]) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO probes (id, created_at, command, host, results) VALUES (?, ?, ?, ?, ?)",
                (probe_id, time.time(), command, json.dumps(host), json.dumps(results)),
            )

    def load_probe(self, probe_ref: str) -> dict[str, Any]:
        if probe_ref == "last":
            rows = self.db.execute("SELECT id FROM probes ORDER BY created_at DESC LIMIT 1").fetchall()
        else:
            rows = self.db.execute("SELECT id FROM probes WHERE id LIKE ? || '%'", (probe_ref,)).fetchall()
        if len(rows) != 1:
            what = "is ambiguous" if rows else "is not stored"
            raise StoreError(f"probe {probe_ref!r} {what} in {self.path}; 'mountbench probe --list' shows them")
        row = self.db.execute(
            "SELECT id, created_at, command, host, results FROM probes WHERE id = ?", (rows[0][0],)
        ).fetchone()
        return {
            "id": row[0],
            "created_at": row[1],
            "command": row[2],
            "host": json.loads(row[3]),
            "results": json.loads(row[4]),
        }

    def list_probes(self) -> list[dict[str, Any]]:
        return [
            {"id": r[0], "created_at": r[1], "command": r[2]}
            for r in self.db.execute("SELECT id, created_at, command FROM probes ORDER BY created_at")
        ]

    def done_items(self, run_id: str) -> set[tuple[str, str, int]]:
        return {
            (t, w, r)
            for t, w, r in self.db.execute("SELECT target, workload, round FROM samples WHERE run_id = ?", (run_id,))
        }
