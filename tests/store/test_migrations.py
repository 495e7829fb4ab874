"""Every older schema is migrated step by step from a stored fixture (tests/data/store, built
from store/schema.py's history by make_fixtures.py); foreign, unknown and mismatched databases
are refused and left byte for byte as they were; readers never change a file (issue 24 §5, §6)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from support.runhelpers import mountbench

from mountbench.errors import StoreError
from mountbench.store import Store
from mountbench.store.schema import MIGRATIONS, SCHEMA_VERSION, expected_tables, tables_of

FIXTURES = Path(__file__).parents[1] / "data" / "store"
OLD_VERSIONS = range(1, SCHEMA_VERSION)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fixture(tmp_path: Path, version: int) -> Path:
    path = tmp_path / f"v{version}.sqlite"
    shutil.copyfile(FIXTURES / f"schema-v{version}.sqlite", path)
    return path


def test_there_is_a_fixture_for_every_older_schema():
    assert sorted(p.name for p in FIXTURES.glob("schema-v*.sqlite")) == [f"schema-v{v}.sqlite" for v in OLD_VERSIONS]
    for version in OLD_VERSIONS:
        with sqlite3.connect(FIXTURES / f"schema-v{version}.sqlite") as db:
            assert db.execute("PRAGMA user_version").fetchone()[0] == version
            assert tables_of(db) == expected_tables(version)


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_an_older_schema_is_migrated_step_by_step_and_keeps_its_runs(tmp_path, version):
    path = fixture(tmp_path, version)
    with Store(path) as store:
        run = store.load_run("last")
        assert run.id == "20250101-120000-abcd" and run.status == "complete"
        assert [r.target.label for r in run.targets] == ["ram", "disk"]
        assert [s.metrics["read.iops"] for s in run.samples] == [900.0, 300.0]
        if version >= 4:
            assert run.samples[0].series == {"read.iops": [900.0, 900.0]}
        if version >= 2:
            assert store.list_probes()[0]["id"].startswith("probe-")
        store.add_sample(run.id, run.samples[0])  # writable in the new schema
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert tables_of(db) == expected_tables(SCHEMA_VERSION)


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_a_reader_of_an_older_schema_leaves_the_file_unchanged(tmp_path, version):
    path = fixture(tmp_path, version)
    before = digest(path)
    with Store(path, writer=False) as store:
        assert [row["id"] for row in store.list_runs()] == ["20250101-120000-abcd"]
        assert store.load_run("20250101").samples[1].metrics == {"read.iops": 300.0}
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no journal left either


def test_a_failed_step_leaves_the_previous_schema(tmp_path, monkeypatch):
    path = fixture(tmp_path, 3)
    broken = [*MIGRATIONS[:3], "ALTER TABLE samples ADD COLUMN series TEXT; ALTER TABLE nosuch ADD COLUMN x;",
              *MIGRATIONS[4:]]  # fmt: skip
    monkeypatch.setattr("mountbench.store.store.MIGRATIONS", broken)
    with pytest.raises(StoreError, match=r"cannot upgrade .* from schema 3 to 4"):
        Store(path).list_runs()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 3
        assert tables_of(db) == expected_tables(3)  # the half-done step was rolled back


def _current_db(path: Path) -> None:
    with Store(path) as store:
        store.list_runs()


@pytest.mark.parametrize("version", [0, 1, 3, 4, -1])
def test_a_current_database_with_a_wrong_version_is_refused_unchanged(tmp_path, version):
    path = tmp_path / "db.sqlite"
    _current_db(path)
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {version}")
    before = digest(path)
    for writer in (True, False):
        with pytest.raises(StoreError, match=r"is not a mountbench database .*left unchanged") as refused:
            Store(path, writer=writer).list_runs()
        assert "duplicate column" not in str(refused.value)
    assert digest(path) == before


def test_foreign_databases_are_refused_unchanged_by_every_command(tmp_path):
    foo = tmp_path / "foreign.db"
    with sqlite3.connect(foo) as db:
        db.execute("CREATE TABLE foo (x)")
    runs = tmp_path / "other-program.db"
    with sqlite3.connect(runs) as db:
        db.execute("CREATE TABLE runs (id TEXT, created_at REAL)")
        db.execute("INSERT INTO runs VALUES ('x', 1.0)")
    for path in (foo, runs):
        before = digest(path)
        for writer in (False, True):  # list, show, report, export read; run and import write
            with pytest.raises(StoreError, match=r"is not a mountbench database .*left unchanged"):
                Store(path, writer=writer).list_runs()
        assert digest(path) == before
    # as a user meets it: one line, exit 2, no traceback, nothing added
    env = dict(os.environ)
    for args, path in ((["list"], foo), (["show", "last"], runs)):
        before = digest(path)
        proc = mountbench(*args, "--db", str(path), env=env)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "is not a mountbench database" in proc.stderr and "left unchanged" in proc.stderr
        assert digest(path) == before


def test_read_only_commands_open_read_only(tmp_path):
    """An older database on a read-only filesystem is still read (migrated in memory), unchanged."""
    from support import realmounts

    try:
        realmounts.require_root()
    except realmounts.Unavailable as exc:
        pytest.skip(str(exc))
    with realmounts.tmpfs("4m") as place:
        path = place / "results.sqlite"
        shutil.copyfile(FIXTURES / "schema-v1.sqlite", path)
        before = digest(path)
        realmounts._check(["mount", "-o", "remount,ro", str(place)])
        env = dict(os.environ)
        for args in (["list"], ["show", "last"], ["report", "--format", "csv"],
                     ["export", "last", "--out", str(tmp_path / "x.json")]):  # fmt: skip
            proc = mountbench(*args, "--db", str(path), env=env)
            assert proc.returncode == 0, (args, proc.stderr)
        assert digest(path) == before and json.loads((tmp_path / "x.json").read_text())["runs"]


def test_list_of_dev_null_and_run_into_dev_full_are_one_line_errors(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    env = dict(os.environ)
    listed = mountbench("list", "--db", str(null), env=env)
    assert listed.returncode == 2 and listed.stderr.count("\n") == 1, listed.stderr
    assert "not a regular file" in listed.stderr
    target = tmp_path / "t"
    target.mkdir()
    ran = mountbench("run", str(target), "--db", str(full), "--runtime", "0.3", "--size", "4M", env=env)
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1, ran.stderr
    assert "not a regular file" in ran.stderr
    assert list(target.iterdir()) == []
    assert stat.S_ISCHR(os.lstat(null).st_mode) and stat.S_ISCHR(os.lstat(full).st_mode)
