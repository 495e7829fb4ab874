"""Read and write runs in SQLite."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import platformdirs
import psutil

from mountbench.errors import StoreError
from mountbench.model import RunConfig, RunData, RunLevel, Sample, TargetInfo, TargetRecord, Workload
from mountbench.records.codec import (
    config_from_dict,
    config_to_dict,
    sample_from_dict,
    sample_to_dict,
    target_from_dict,
    workload_from_dict,
    workload_to_dict,
)
from mountbench.records.text import escaped, escaped_tree
from mountbench.store import schema
from mountbench.store.schema import MIGRATIONS, SCHEMA_VERSION


def check_writable(path: Path) -> None:
    """Refuse, before anything runs, a database path that cannot be written: the file (and
    its directory, where SQLite keeps its journal) must be writable, or the nearest existing
    parent directory must be; an existing path must be a regular file (never a device)."""
    target = path if path.exists() else next((p for p in path.parents if p.exists()), Path("/"))
    if path.exists() and path.is_dir():
        raise StoreError(f"--db {path} is a directory; give a file name, e.g. {path / 'results.sqlite'}")
    check_regular(path)
    directory = target.parent if target == path else target
    for place in dict.fromkeys([target, directory]):
        if not os.access(place, os.W_OK):
            why = "read-only filesystem" if _read_only(place) else "no write permission"
            raise StoreError(
                f"cannot write the results database {path} ({why} at {place}); pass --db with a writable path"
            )


def check_regular(path: Path) -> None:
    """A database is a regular file: /dev/null, /dev/full, a FIFO are refused, not opened."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode):
        raise StoreError(f"--db {path} is a directory; give a file name, e.g. {path / 'results.sqlite'}")
    if not stat.S_ISREG(mode):
        raise StoreError(f"--db {path} is not a regular file (a device, FIFO or socket); give a database file name")


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def current_owner() -> str:
    """This process, as a run's owner: host, pid and the process's start time (pids are reused)."""
    me = psutil.Process()
    return json.dumps({"host": socket.gethostname(), "pid": me.pid, "started": me.create_time()})


def effective_status(status: str, owner: str) -> str:
    """A run stored as running whose process on this host is gone (killed, the machine
    rebooted) is interrupted: it can be resumed."""
    if status != "running" or not owner:
        return status
    try:
        facts = json.loads(owner)
        if facts.get("host") != socket.gethostname():
            return status  # another machine's process: cannot tell from here
        alive = psutil.Process(int(facts["pid"])).create_time() == float(facts["started"])
    except psutil.NoSuchProcess:
        alive = False
    except (ValueError, KeyError, TypeError, psutil.Error):
        return status
    return status if alive else "interrupted"


def _decoded(row: tuple) -> tuple:
    """A samples row with its JSON columns (metrics, caveats, series, clients) decoded."""
    return (*row[:4], json.loads(row[4]), json.loads(row[5]), *row[6:11], json.loads(row[11]), json.loads(row[12]))


def default_db_path() -> Path:
    """``$MOUNTBENCH_DB``, else ``<user data dir>/mountbench/results.sqlite``."""
    env = os.environ.get("MOUNTBENCH_DB")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("mountbench")) / "results.sqlite"


def _in_memory_copy(connection: sqlite3.Connection) -> sqlite3.Connection:
    """The database copied into memory (to read an older schema without changing the file)."""
    memory = sqlite3.connect(":memory:")
    connection.backup(memory)
    connection.close()
    return memory


BUSY_TIMEOUT_S = 10.0  # how long a command waits for another process's write (each takes milliseconds)


class StoreFull(StoreError):
    """The results database's filesystem filled up (or went read-only) during a run."""


class Store:
    """The results database at ``path``. Nothing touches the file until the first read or
    write, so a command refused before then leaves no database behind; a reader
    (``writer=False``) never creates one, and a writer checks first that it can write."""

    def __init__(self, path: Path, *, writer: bool = True) -> None:
        self.path = path
        self.writer = writer
        self._db: sqlite3.Connection | None = None
        self._unsaved_status: dict[str, str] = {}  # what set_status could not write (the disk filled)
        if writer:
            check_writable(path)

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = self._connect()
        return self._db

    def _connect(self) -> sqlite3.Connection:
        path = self.path
        if not self.writer and not path.exists():
            raise StoreError(
                f"nothing stored in {path} yet (no runs, no probes); start with 'mountbench run' or "
                "'mountbench probe', or pass --db"
            )
        check_regular(path)
        made = self.writer and not path.exists()  # removed again if it cannot be made a database
        try:
            if self.writer:
                path.parent.mkdir(parents=True, exist_ok=True)
                connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
            else:  # a reader never changes the file, whatever it holds
                connection = sqlite3.connect(
                    f"file:{quote(str(path.absolute()))}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S
                )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"cannot open the results database {path} ({exc}); pass --db with a writable path"
            ) from None
        try:
            connection = self._migrate(connection)
        except BaseException:
            connection.close()
            if made:  # a refusal leaves nothing behind: not even the empty file SQLite made
                for leftover in (path, path.with_name(path.name + "-journal")):
                    with contextlib.suppress(OSError):
                        leftover.unlink()
            raise
        connection.execute("PRAGMA foreign_keys = ON")
        return connection

    def exists(self) -> bool:
        return self._db is not None or self.path.exists()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self, connection: sqlite3.Connection) -> sqlite3.Connection:
        """Bring an older mountbench schema up to date, one step at a time, each step in one
        transaction. Anything that is not exactly a schema mountbench wrote (another program's
        database, a version this one does not know, tables that do not match their version) is
        refused and left unchanged. A reader migrates a copy in memory, never the file."""
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            found = schema.tables_of(connection)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                raise self._locked(exc) from None
            raise StoreError(f"{self.path} is not a mountbench database ({exc}); pass --db with another path") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a mountbench database ({exc}); pass --db with another path") from None
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer mountbench (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade mountbench or pass --db with another path"
            )
        problem = schema.mismatch(version, found)
        if problem:
            raise StoreError(f"{self.path} is not a mountbench database ({problem}); it was left unchanged: "
                             "pass --db with another path")  # fmt: skip
        if version == SCHEMA_VERSION:
            return connection
        if not self.writer:
            connection = _in_memory_copy(connection)
        for step in range(version, SCHEMA_VERSION):
            try:
                connection.executescript(f"BEGIN; {MIGRATIONS[step]}; PRAGMA user_version = {step + 1}; COMMIT;")
            except sqlite3.Error as exc:
                connection.rollback()
                raise StoreError(
                    f"cannot upgrade {self.path} from schema {step} to {step + 1} ({exc}); it keeps schema {step}: "
                    "free space or fix permissions, then try again"
                ) from None
        return connection

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
        origin: str = "",
    ) -> None:
        with self._writing(run_id), self.db:
            self.db.execute(
                "INSERT INTO runs (id, created_at, status, command, config, host, owner, origin)"
                " VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
                (
                    run_id,
                    created_at or time.time(),
                    command,
                    json.dumps(config_to_dict(config)),
                    json.dumps(host),
                    current_owner() if not origin else "",
                    origin,
                ),
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

    def check_can_write(self) -> None:
        """Take the database's write lock and let it go: a database another process holds for writing
        (BEGIN IMMEDIATE) is refused now, in one line, before any target is touched, not at the run's
        first write."""
        with self._writing("?"):
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("ROLLBACK")

    def move_target(self, run_id: str, label: str, path: str) -> None:
        """A resumed lab run's target made anew at another path (cloudlab: a new mount point)."""
        with self.db:
            self.db.execute("UPDATE targets SET path = ? WHERE run_id = ? AND label = ?", (path, run_id, label))

    def save_calibration(self, key: str, path: str, runs: Sequence[str], level: RunLevel) -> None:
        """A filesystem's run level as `mountbench calibrate` measured it (replacing an earlier one)."""
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO calibrations (key, created_at, path, runs, record) VALUES (?, ?, ?, ?, ?)",
                (key, time.time(), path, json.dumps(list(runs)), json.dumps(level.to_dict())),
            )

    def calibration_for(self, key: str) -> RunLevel | None:
        """The filesystem's calibrated run level (analysis/runlevel.calibration_key), None when there is none."""
        row = self.db.execute("SELECT record FROM calibrations WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return RunLevel.from_dict(json.loads(row[0]))
        except (ValueError, KeyError, TypeError):
            return None

    def list_calibrations(self) -> list[dict[str, Any]]:
        """Every calibration, newest first: key, when, path, the runs it was measured from, the run level."""
        rows = self.db.execute("SELECT key, created_at, path, runs, record FROM calibrations ORDER BY created_at DESC")
        return [
            {
                "key": escaped(key),
                "created_at": created,
                "path": escaped(path),
                "runs": json.loads(runs),
                "level": RunLevel.from_dict(json.loads(record)),
            }
            for key, created, path, runs, record in rows
        ]

    def update_config(self, run_id: str, config: RunConfig) -> None:
        """What the run found after it began and later reads need (the looks its plan fixed: RunConfig.looks)."""
        with self._writing(run_id), self.db:
            self.db.execute("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(config_to_dict(config)), run_id))

    def update_target_info(self, run_id: str, label: str, info: TargetInfo) -> None:
        with self.db:
            self.db.execute(
                "UPDATE targets SET info = ? WHERE run_id = ? AND label = ?",
                (json.dumps(info.to_dict()), run_id, label),
            )

    def add_sample(self, run_id: str, sample: Sample) -> None:
        """Commit one sample at once: a crash afterwards cannot lose it."""
        with self._writing(run_id), self.db:
            self._insert_sample(run_id, sample)

    def _insert_sample(self, run_id: str, sample: Sample) -> None:
        data = sample_to_dict(sample)
        self.db.execute(
            "INSERT OR REPLACE INTO samples (run_id, target, workload, round, ok, metrics, caveats, error,"
            " started_at, wall_s, cache_action, raw, series, clients)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                json.dumps(data.get("series") or {}),
                json.dumps(data.get("clients", [])),
            ),
        )

    def set_status(self, run_id: str, status: str) -> None:
        """A run set running again (a resume) is owned by this process from now on. A status that
        cannot be written (StoreFull) is still what this store answers for the run from now on, so an
        export made afterwards does not say "running"."""
        finished = time.time() if status != "running" else None
        try:
            with self._writing(run_id), self.db:
                self.db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, finished, run_id))
                if status == "running":
                    self.db.execute("UPDATE runs SET owner = ? WHERE id = ?", (current_owner(), run_id))
        except StoreFull:
            self._unsaved_status[run_id] = status
            raise
        self._unsaved_status.pop(run_id, None)

    def import_run(self, run: RunData, origin: str = "") -> bool:
        """Store a run made elsewhere (a lab's run, or ``origin``: what `mountbench import` read it
        from, which marks it a record that is never resumed); False when a run with that id is already
        here. Its samples go in one transaction."""
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run.id,)).fetchone():
            return False
        self.create_run(
            run.id, run.command, run.config, run.host, list(run.targets), list(run.workloads),
            created_at=run.created_at, origin=origin or run.origin,
        )  # fmt: skip
        with self._writing(run.id), self.db:
            for sample in run.samples:
                self._insert_sample(run.id, sample)
            self.db.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (run.status, run.finished_at, run.id)
            )
        return True

    def forget_run(self, run_ref: str) -> str:
        """Delete a stored run, its targets, workloads and samples; its id."""
        run_id = self.resolve(run_ref)
        with self._writing(run_id), self.db:
            for table, key in (("samples", "run_id"), ("targets", "run_id"), ("workloads", "run_id"), ("runs", "id")):
                self.db.execute(f"DELETE FROM {table} WHERE {key} = ?", (run_id,))
        return run_id

    @contextmanager
    def _writing(self, run_id: str) -> Iterator[None]:
        """A write that fails because the disk is full (or went read-only) stops the run
        cleanly with how to go on, instead of an internal error."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text:
                raise self._locked(exc) from None
            if "full" in text or "readonly" in text or "disk I/O" in text:
                raise StoreFull(
                    f"the results database {self.path} cannot be written ({text}); the samples stored so far "
                    f"are kept: free space, then resume with: mountbench run --resume {run_id}"
                ) from None
            raise

    # --- reading -------------------------------------------------------------

    def _locked(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(
            f"{self.path} is locked by another process ({exc}; waited {BUSY_TIMEOUT_S:g} s): let it finish "
            "(a run or an import writing it), then try again, or pass --db with another path"
        )

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A row that does not read (text that is not UTF-8, JSON that is not JSON: the file was
        damaged or written by something else) is a one-line error naming the database."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                raise self._locked(exc) from None
            raise StoreError(
                f"{self.path} is damaged ({exc}); pass --db with another path, or remove the run"
            ) from None
        except (sqlite3.DatabaseError, ValueError, TypeError, AttributeError) as exc:
            raise StoreError(
                f"{self.path} is damaged ({exc}); pass --db with another path, or remove the run"
            ) from None

    def list_runs(self) -> list[dict[str, Any]]:
        with self._reading():
            return self._list_runs()

    def _list_runs(self) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT r.id, r.created_at, r.finished_at, r.status, r.command, r.host, r.owner,"
            " (SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id),"
            " (SELECT group_concat(label, ', ') FROM"
            "   (SELECT label FROM targets t WHERE t.run_id = r.id ORDER BY position)),"
            " r.config"
            " FROM runs r ORDER BY r.created_at"
        ).fetchall()
        return [
            {
                "id": row[0],
                "created_at": row[1],
                "finished_at": row[2],
                "status": effective_status(row[3], row[6]),
                "command": escaped(row[4]),
                "hostname": escaped(str(json.loads(row[5]).get("hostname", ""))),
                "samples": row[7],
                "targets": escaped(row[8] or ""),
                "config": escaped_tree(_json_or_empty(row[9])),  # the run's options as stored (presets, size, ...)
            }
            for row in rows
        ]

    def resolve(self, run_ref: str) -> str:
        """A full id, a unique prefix of one, or 'last'."""
        with self._reading():
            return self._resolve(run_ref)

    def _resolve(self, run_ref: str) -> str:
        if run_ref == "last":
            row = self.db.execute("SELECT id FROM runs ORDER BY created_at DESC LIMIT 1").fetchone()
            if row is None:
                raise StoreError(f"no runs stored in {self.path} yet; start one with 'mountbench run'")
            return row[0]
        if not run_ref:
            raise StoreError("an empty run id names no run; 'mountbench list' shows the stored runs")
        # a prefix, compared as text: '%' and '_' are characters of it, not LIKE's wildcards
        rows = self.db.execute("SELECT id FROM runs WHERE substr(id, 1, length(?)) = ?", (run_ref, run_ref)).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        if not rows:
            raise StoreError(f"no run {run_ref!r} in {self.path}; 'mountbench list' shows the stored runs")
        raise StoreError(f"run id {run_ref!r} is ambiguous ({len(rows)} runs match); give more characters")

    def load_run(self, run_ref: str, *, with_raw: bool = False) -> RunData:
        run_id = self.resolve(run_ref)
        try:
            return self._load_run(run_id, with_raw)
        except (KeyError, TypeError, ValueError, AttributeError, sqlite3.DatabaseError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise self._locked(exc) from None
            raise StoreError(
                f"run {run_id} in {self.path} is damaged ({exc}); export what still reads, or remove it"
            ) from None

    def _load_run(self, run_id: str, with_raw: bool) -> RunData:
        row = self.db.execute(
            "SELECT id, created_at, finished_at, status, command, config, host, owner, origin FROM runs WHERE id = ?",
            (run_id,),
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
                   "cache_action", "raw", "series", "clients")  # fmt: skip
        samples = tuple(
            sample_from_dict(dict(zip(columns, _decoded(r), strict=True)))
            for r in self.db.execute(
                "SELECT target, workload, round, ok, metrics, caveats, error, started_at, wall_s, cache_action,"
                f" {raw_col}, series, clients FROM samples WHERE run_id = ? ORDER BY id",
                (run_id,),
            )
        )
        return RunData(
            id=row[0],
            created_at=row[1],
            finished_at=row[2],
            status=self._unsaved_status.get(run_id) or effective_status(row[3], row[7]),
            command=escaped(row[4]),
            config=config_from_dict(json.loads(row[5])),
            host=escaped_tree(json.loads(row[6])),
            targets=targets,
            workloads=workloads,
            samples=samples,
            origin=escaped(row[8]),
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
            rows = self.db.execute(
                "SELECT id FROM probes WHERE substr(id, 1, length(?)) = ? AND ? != ''",
                (probe_ref, probe_ref, probe_ref),
            ).fetchall()
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

    def sample_counts(self, run_id: str) -> tuple[int, int]:
        """(samples stored, of which ok) of one run."""
        row = self.db.execute("SELECT COUNT(*), COALESCE(SUM(ok), 0) FROM samples WHERE run_id = ?", (run_id,))
        total, ok = row.fetchone()
        return int(total), int(ok)

    def done_items(self, run_id: str) -> set[tuple[str, str, int]]:
        return {
            (t, w, r)
            for t, w, r in self.db.execute("SELECT target, workload, round FROM samples WHERE run_id = ?", (run_id,))
        }


def _json_or_empty(text: str | None) -> dict[str, Any]:
    try:
        found = json.loads(text or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
