import sqlite3

import pytest
from support.factories import make_run

from mountbench.errors import StoreError
from mountbench.model import Sample
from mountbench.store import Store
from mountbench.store.schema import SCHEMA_VERSION


def test_round_trip_and_samples_committed_immediately(tmp_path):
    path = tmp_path / "db.sqlite"
    run = make_run({("a", "w"): [1.0, 2.0]})
    store = Store(path)
    store.create_run(run.id, run.command, run.config, run.host, list(run.targets), list(run.workloads))
    store.add_sample(run.id, run.samples[0])
    # a second connection (another process after a crash) already sees the sample
    other = sqlite3.connect(path)
    assert other.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 1
    store.add_sample(run.id, run.samples[1])
    loaded = store.load_run("r")
    assert loaded.status == "running"
    assert [s.metrics for s in loaded.samples] == [{"read.iops": 1.0}, {"read.iops": 2.0}]
    assert loaded.targets == run.targets
    assert store.done_items(run.id) == {("a", "w", 0), ("a", "w", 1)}
    store.set_status(run.id, "complete")
    assert store.load_run("last").status == "complete"


def test_schema_version_is_recorded_and_newer_databases_refused(tmp_path):
    path = tmp_path / "db.sqlite"
    with Store(path) as store:
        store.list_runs()  # the file is made on first use
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer mountbench"):
        Store(path).list_runs()


def test_nothing_is_written_before_the_first_use_and_readers_never_create(tmp_path):
    path = tmp_path / "sub" / "db.sqlite"
    with Store(path):
        pass
    assert not (tmp_path / "sub").exists()
    with pytest.raises(StoreError, match="nothing stored"), Store(path, writer=False) as reader:
        reader.load_run("last")
    assert not (tmp_path / "sub").exists()


def test_a_read_only_place_is_refused_before_anything_runs(tmp_path):
    from support import realmounts

    realmounts.require_root()
    with realmounts.tmpfs("1m") as ro:
        realmounts._check(["mount", "-o", "remount,ro", str(ro)])
        with pytest.raises(StoreError, match="read-only filesystem"):
            Store(ro / "db.sqlite")


def test_a_run_whose_process_is_gone_reads_as_interrupted(tmp_path):
    import json
    import subprocess

    run = make_run({("a", "w"): [1.0]})
    with Store(tmp_path / "db.sqlite") as store:
        store.create_run(run.id, run.command, run.config, run.host, list(run.targets), list(run.workloads))
        assert store.load_run(run.id).status == "running"  # this process owns it
        gone = subprocess.Popen(["true"])
        gone.wait()  # a pid that existed and exited
        dead = {"host": __import__("socket").gethostname(), "pid": gone.pid, "started": 1.0}
        store.db.execute("UPDATE runs SET owner = ?", (json.dumps(dead),))
        store.db.commit()
        assert store.load_run(run.id).status == "interrupted"
        assert store.list_runs()[0]["status"] == "interrupted"


def test_a_schema_2_database_gains_the_owner_column(tmp_path):
    from mountbench.store.schema import MIGRATIONS

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    for step in MIGRATIONS[:2]:
        db.executescript(step)
    db.execute("PRAGMA user_version = 2")
    db.execute(
        "INSERT INTO runs (id, created_at, status, command, config, host) VALUES ('r', 1, 'running', 'c', '{}', '{}')"
    )
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.list_runs()[0]["status"] == "running"  # no owner recorded: cannot tell, left as it was


def test_unknown_and_ambiguous_run_ids(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    with pytest.raises(StoreError, match="no runs stored"):
        store.resolve("last")
    for rid in ("abc1", "abc2"):
        run = make_run({("a", "w"): [1.0]}, run_id=rid)
        store.create_run(run.id, run.command, run.config, run.host, list(run.targets), list(run.workloads))
    with pytest.raises(StoreError, match="ambiguous"):
        store.resolve("abc")
    with pytest.raises(StoreError, match="no run 'zzz'"):
        store.resolve("zzz")
    assert store.resolve("abc2") == "abc2"


def test_not_a_database(tmp_path):
    path = tmp_path / "db.sqlite"
    path.write_text("this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a mountbench database"):
        Store(path).list_runs()


def test_import_is_idempotent(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    run = make_run({("a", "w"): [1.0, 2.0]})
    assert store.import_run(run)
    assert not store.import_run(run)
    assert len(store.load_run(run.id).samples) == 2


def test_sample_errors_round_trip(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    run = make_run({("a", "w"): [1.0]})
    store.create_run(run.id, run.command, run.config, run.host, list(run.targets), list(run.workloads))
    store.add_sample(run.id, Sample("a", "w", 1, False, {}, (), error="fio failed: EIO", raw="{}"))
    loaded = store.load_run(run.id, with_raw=True)
    assert loaded.samples[0].error == "fio failed: EIO" and loaded.samples[0].raw == "{}"


def test_version_1_database_is_migrated_in_place(tmp_path):
    """A database written by schema 1 gains the probes table and keeps its runs."""
    from mountbench.store.schema import MIGRATIONS

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO runs VALUES ('old', 1.0, 2.0, 'complete', 'mountbench run', '{}', '{}')")
    db.commit()
    db.close()
    store = Store(path)
    assert store.load_run("old").status == "complete"
    store.save_probe("p1", "mountbench probe /x", {"hostname": "h"}, {"targets": []})
    assert store.load_probe("last")["results"] == {"targets": []}
    assert [p["id"] for p in store.list_probes()] == ["p1"]
