"""Job files, imports and option values that reached outside the scratch directory, ran a program,
broke the store or hung (issue 47's cases, one test each): each is now refused up front with one
line and exit 2, writes nothing anywhere, and finishes quickly. Nothing here starts a run: this
file runs alongside the host's tests (tests/support/groups.py's REFUSALS), and every test ends by
checking that no run began. What the kernel fences when a check is bypassed is in
tests/kinds/test_fio_contained.py and tests/host/test_contain.py; a path a job names (filename=/tmp/x,
../x) is placed by its name where mountbench measures (tests/kinds/test_fio_jobfiles.py)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from support.runhelpers import assert_one_line_error, exported, fixture_db, mountbench, snapshot
from support.tools import needs_fio

pytestmark = pytest.mark.usefixtures("no_run_started")  # conftest.py: every test ends by checking no run began


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


@pytest.fixture
def victim(tmp_path: Path):
    """A target ``t/vic`` with a user's file inside, a canary beside it and one in the parent; after
    the test, all of ``t`` (and the test's temp folder outside the databases) is as it was."""
    top = tmp_path / "t"
    vic = top / "vic"
    vic.mkdir(parents=True)
    (vic / "notes.txt").write_text("the user's notes\n")
    (top / "vic.canary").write_text("beside the target\n")
    (top / "keep.txt").write_text("in the parent\n")
    before = snapshot(top)
    yield vic
    assert snapshot(top) == before, "a refused job file changed the target's neighbourhood"


def _job(tmp_path: Path, text: str, name: str = "escape.fio") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- case 1: a section named '.' or '..' climbs out of the scratch directory ------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("[..]\nfilename_format=$jobname/notes.txt\nrw=randread\nsize=4M\n", "[..]"),
        ("[.]\nfilename_format=$jobname$jobname/$jobname$jobname/vic.canary\nrw=randread\nsize=4M\n", "[.]"),
    ],
    ids=["dotdot", "dot"],
)
def test_a_section_named_dot_or_dotdot_is_refused(victim, tmp_path, mb_env, text, shown):
    proc = mountbench("run", str(victim), "--job", str(_job(tmp_path, text)), "--runtime", "0.3", "--repeat", "1",
                      env=mb_env)  # fmt: skip
    assert_one_line_error(proc, shown, "section name")


# --- case 2: include, environment variables, name= and mem= paths ------------------------------


@pytest.fixture
def included(tmp_path: Path) -> tuple[Path, Path]:
    """A job file fragment that would run a program, and the file that program would make."""
    pwned = tmp_path / "PWNED"
    fragment = tmp_path / "fragment.fio"
    fragment.write_text(f"exec_prerun=touch {pwned}\n")
    return fragment, pwned


@pytest.mark.parametrize("spelling", ["include ", "include=", "include\t", "includeX", "  include ", "INCLUDE "])
def test_include_in_any_spelling_is_refused(victim, tmp_path, mb_env, included, spelling):
    fragment, pwned = included
    text = f"[x]\nrw=read\nsize=1m\n{spelling}{fragment}\n"
    proc = mountbench("run", str(victim), "--job", str(_job(tmp_path, text)), "--runtime", "0.3", "--repeat", "1",
                      env=mb_env)  # fmt: skip
    assert_one_line_error(proc, "include", "escape.fio:4")
    assert not pwned.exists()


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        ("filename=${MB_DEVICE}", ["filename=${MB_DEVICE}", "environment", "names a device"]),
        ("write_lat_log=${MB_OUTSIDE}/", ["${MB_OUTSIDE}", "environment", "names a directory"]),
        ("${EVILKEY}=touch {pwned}", ["${EVILKEY}", "exec_prerun", "environment"]),
        ("write_iops_log=$HOME/iops", ["$HOME", "environment"]),
        ("size=${MB_NOT_SET_ANYWHERE}", ["${MB_NOT_SET_ANYWHERE}", "not set"]),
        ("size=${MB_UNCLOSED", ["${MB_UNCLOSED", "no closing"]),
    ],
    ids=["device", "directory", "key", "dollar", "unset", "unclosed"],
)
def test_environment_variables_are_put_in_before_the_check(victim, tmp_path, mb_env, included, line, fragments):
    _, pwned = included
    text = f"[x]\nrw=read\nsize=1m\n{line.replace('{pwned}', str(pwned))}\n"
    env = dict(mb_env, EVILKEY="exec_prerun", MB_OUTSIDE=str(tmp_path), HOME=str(tmp_path), MB_DEVICE="/dev/sda")
    proc = mountbench("run", str(victim), "--job", str(_job(tmp_path, text)), "--runtime", "0.3", "--repeat", "1",
                      env=env)  # fmt: skip
    assert_one_line_error(proc, *fragments)
    assert not pwned.exists() and not list(tmp_path.glob("x*")) and not list(tmp_path.glob("lat*"))


def test_an_environment_variable_reaches_fio_put_in(victim, tmp_path, mb_env):
    """fio puts in ${NAME} itself; mountbench does it first, so what it checks is what fio runs."""
    job = _job(tmp_path, "[x]\nrw=read\nsize=${MB_SIZE}\n")
    proc = mountbench("run", str(victim), "--job", str(job), "--dry-run", env=dict(mb_env, MB_SIZE="2m"))
    assert proc.returncode == 0, proc.stderr
    assert "size=2m" in proc.stdout.splitlines() and "${MB_SIZE}" not in proc.stdout


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        ("name=../../../evil-log\nwrite_bw_log", ["name=../../../evil-log"]),
        ("name=.", ["name=."]),
        ("iomem=mmapshared:{outside}", ["mem=mmapshared:", "outside the scratch directory"]),
        ("mem=mmap:{outside}", ["mem=mmap:", "outside the scratch directory"]),
        ("exec_postrun=touch {outside}", ["exec_postrun"]),
        ("cgroup=mb", ["cgroup"]),
        ("uid=65534", ["uid"]),
        ("lockmem=1g", ["lockmem"]),
        ("verify_state_load=1", ["verify_state_load"]),
        ("description=" + "x" * 9000 + "exec_prerun=touch {outside}", ["longer than 8190 characters"]),
    ],
    ids=["name-dotdot", "name-dot", "iomem", "mem", "exec", "cgroup", "uid", "lockmem", "state", "long-line"],
)
def test_an_option_that_reaches_outside_is_refused(victim, tmp_path, mb_env, line, fragments):
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"x" * 9)
    text = f"[x]\nrw=read\nsize=1m\n{line.replace('{outside}', str(outside))}\n"
    proc = mountbench("run", str(victim), "--job", str(_job(tmp_path, text)), "--runtime", "0.3", "--repeat", "1",
                      env=mb_env)  # fmt: skip
    assert_one_line_error(proc, *fragments)
    assert outside.read_bytes() == b"x" * 9


def test_an_option_outside_the_allowlist_is_named(victim, tmp_path, mb_env):
    text = "[x]\nrw=read\nsize=1m\nread_iolog=replay.log\n"
    proc = mountbench("run", str(victim), "--job", str(_job(tmp_path, text)), "--dry-run", env=mb_env)
    assert_one_line_error(proc, "read_iolog", "remove it")


def test_a_job_file_with_include_is_refused_by_the_container_lab_before_it_starts(tmp_path, mb_env, included):
    fragment, pwned = included
    job = _job(tmp_path, f"[x]\nrw=read\nsize=1m\ninclude={fragment}\n")
    started = time.monotonic()
    env = dict(mb_env, XDG_CACHE_HOME=str(tmp_path / "cache"))  # were it to start, its lab would be here
    proc = mountbench("containers", "--job", str(job), "--repeat", "1", env=env, timeout=60)
    assert_one_line_error(proc, "include")
    assert time.monotonic() - started < 30 and not pwned.exists()


# --- case 3: an imported run is a record, never a plan ------------------------------------------


def _startup_run(pwned: Path, status: str, host: dict | None):
    from mountbench.kinds.startup import AppChoice, startup_workload

    workload = startup_workload("warm", "startup-warm", "", "preset:startup", AppChoice(command=f"touch {pwned}"))

    def change(run: dict) -> None:
        run["id"] = "20250101-120000-beef"
        run["status"] = status
        if host is not None:
            run["host"] = host
        run["workloads"] = [workload.to_dict()]
        run["samples"] = []
        run["config"]["presets"] = ["startup"]

    return change


@pytest.mark.parametrize("how", ["no-host", "this-machine", "running"])
def test_an_imported_run_is_never_resumed(tmp_path, mb_env, how):
    from mountbench.host.facts import collect

    pwned = tmp_path / "PWNED"
    db = fixture_db(tmp_path)
    here = collect()
    host = {"no-host": {}, "this-machine": here, "running": here}[how]
    status = "running" if how == "running" else "interrupted"
    path = exported(tmp_path, db, _startup_run(pwned, status, host))
    for index in range(2):
        (tmp_path / f"gone{index}").mkdir(exist_ok=True)
    assert mountbench("import", str(path), env=mb_env).returncode == 0
    proc = mountbench("run", "--resume", "20250101-120000-beef", env=mb_env, timeout=60)
    assert_one_line_error(proc, "imported", "cannot be resumed")
    assert not pwned.exists()
    listed = mountbench("show", "20250101-120000-beef", "--detail", env=mb_env)
    assert listed.returncode == 0 and "imported" in listed.stdout, listed.stdout[-2000:]


# --- case 6: numbers an import or a job file holds are bounded --------------------------------------


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda run: run.update(created_at=1e18), "created_at"),
        (lambda run: run.update(finished_at=1e300), "finished_at"),
        (lambda run: run["samples"][0]["metrics"].update({"read.iops": 10**400}), "read.iops"),
        (lambda run: run["samples"][0]["metrics"].update({"read.iops": 1e300}), "read.iops"),
        (lambda run: run["samples"][0].update(wall_s=1e300), "wall_s"),
        (lambda run: run["samples"][0].update(started_at=10**400), "started_at"),
        (lambda run: run["targets"][0]["info"].update(free_bytes=10**400), "free_bytes"),
    ],
    ids=["created", "finished", "metric-int", "metric-float", "wall", "started", "free"],
)
def test_an_import_with_a_number_out_of_bounds_is_refused(tmp_path, mb_env, change, fragment):
    db = fixture_db(tmp_path)
    path = exported(tmp_path, db, change)
    other = tmp_path / "other.sqlite"
    assert_one_line_error(mountbench("import", str(path), "--db", str(other), env=mb_env), fragment)
    assert not other.exists()
    assert_one_line_error(mountbench("report", "--from", str(path), "--format", "md", env=mb_env), fragment)


def test_a_stored_run_can_be_forgotten(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    listed = mountbench("list", "--db", str(db), env=mb_env)
    assert "20250101-120000-abcd" in listed.stdout
    gone = mountbench("forget", "20250101-120000-abcd", "--db", str(db), env=mb_env)
    assert gone.returncode == 0, gone.stderr
    assert "forgot run 20250101-120000-abcd" in gone.stdout
    assert "20250101-120000-abcd" not in mountbench("list", "--db", str(db), env=mb_env).stdout
    assert_one_line_error(mountbench("forget", "20250101-120000-abcd", "--db", str(db), env=mb_env), "no run")
    with sqlite3.connect(db) as conn:
        for table in ("samples", "targets", "workloads"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("numjobs=1e308*10", "numjobs"),
        ("size=" + "+".join(["1"] * 50_000), "longer than"),
        ("startdelay=99999999999", "startdelay"),
        ("filename=.", "filename=."),
        ("filename=..", "filename=.."),
        ("filename=a/../..", "filename=a/../.."),
        ("nrfiles=10000000", "nrfiles"),
        ("numjobs=1000000", "numjobs"),
        ("size=9**9**9", "size=9**9**9"),
        ("size=9^9^9", "size=9^9^9"),
        ("size=(9**9**9)", "size=(9**9**9)"),
        ("runtime=1e300", "runtime"),
    ],
)
def test_a_job_value_out_of_bounds_is_refused_at_once(tmp_path, mb_env, line, fragment):
    target = tmp_path / "t"
    target.mkdir()
    job = _job(tmp_path, f"[x]\nrw=read\nsize=1m\n{line}\n")
    started = time.monotonic()
    for mode in ("--dry-run", "--repeat"):
        args = [mode] if mode == "--dry-run" else [mode, "1", "--runtime", "0.3"]
        proc = mountbench("run", str(target), "--job", str(job), *args, env=mb_env, timeout=60)
        assert_one_line_error(proc, fragment)
    assert time.monotonic() - started < 30
    assert list(target.iterdir()) == []


def test_a_section_name_of_300_characters_is_refused(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    job = _job(tmp_path, f"[{'s' * 300}]\nrw=read\nsize=1m\n")
    assert_one_line_error(mountbench("run", str(target), "--job", str(job), "--dry-run", env=mb_env), "section name",
                          "at most")  # fmt: skip


def test_a_job_file_that_is_a_symlink_loop_is_refused(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    loop = tmp_path / "loop.fio"
    loop.symlink_to(loop)
    assert_one_line_error(mountbench("run", str(target), "--job", str(loop), "--dry-run", env=mb_env), str(loop))


def test_a_run_against_a_locked_database_says_so_soon_and_starts_nothing(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    db = fixture_db(tmp_path)
    from mountbench.store import Store

    with Store(db) as store:  # upgraded: the run's first write is its own run, not a migration
        store.list_runs()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        proc = mountbench("run", str(target), "--db", str(db), "--runtime", "0.3", "--size", "4M", "--repeat", "1",
                          env=mb_env, timeout=120)  # fmt: skip
        waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_one_line_error(proc, "locked", str(db))
    assert waited < 20, waited
    assert list(target.iterdir()) == []


# --- case 7: what hung is bounded ---------------------------------------------------------------


def test_a_report_from_an_export_of_thousands_of_runs_is_bounded(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    path = tmp_path / "export.json"
    assert mountbench("export", "last", "--db", str(db), "--out", str(path), env=mb_env).returncode == 0
    document = json.loads(path.read_text())
    (run,) = document["runs"]
    document["runs"] = [dict(run, id=f"20250101-120000-{index:04x}") for index in range(3000)]
    big = tmp_path / "big.json"
    big.write_text(json.dumps(document))
    started = time.monotonic()
    proc = mountbench("report", "--from", str(big), "--format", "md", env=mb_env, timeout=120)
    assert time.monotonic() - started < 60
    assert_one_line_error(proc, "3000 runs", "at most")


# --- case 8: bad input that was not caught --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["run", "{t}", "--dry-run", "--client", "a\nb"], ["--client", "\\n"]),
        (["run", "{t}", "--dry-run", "--client", "node\x1b[2J"], ["--client", "\\x1b"]),
        (["run", "{t}", "--dry-run", "--only", "rnd\x1b[2J"], ["--only", "\\x1b"]),
        (["run", "{t}", "--dry-run", "--watch", "nginx\x07"], ["--watch", "\\x07"]),
        (["run", "{t}/a:b", "--dry-run"], ["':'"]),
        (["containers", "--probe-timeout", "nan"], ["--probe-timeout", "nan"]),
        (["containers", "--mount", ","], ["--mount"]),
        (["containers", "--db", "{tmp}"], ["--db", "is a directory"]),
        (["run", "/proc/self", "--dry-run"], ["/proc/self"]),
        (["run", "{t}", "--dry-run", "--db", "/proc/mb.sqlite"], ["--db", "/proc/mb.sqlite"]),
    ],
    ids=["client-newline", "client-esc", "only-esc", "watch-bell", "colon", "nan", "comma", "db-dir", "proc",
         "db-unwritable"],
)  # fmt: skip
def test_bad_values_are_refused_with_control_characters_escaped(tmp_path, mb_env, args, fragments):
    target = tmp_path / "t"
    target.mkdir()
    (target / "a:b").mkdir()
    proc = mountbench(*[a.replace("{t}", str(target)).replace("{tmp}", str(tmp_path)) for a in args], env=mb_env,
                      timeout=60)  # fmt: skip
    line = assert_one_line_error(proc, *fragments)
    assert not any(c in line for c in "\x1b\x07"), line
    assert "\x1b" not in proc.stdout


def test_a_job_file_with_a_byte_order_mark_is_refused_as_fio_refuses_it(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    job = tmp_path / "bom.fio"
    job.write_bytes(b"\xef\xbb\xbf[bom]\nrw=read\nsize=1m\n")
    proc = mountbench("run", str(target), "--job", str(job), "--dry-run", env=mb_env)
    assert_one_line_error(proc, "byte-order mark", "without a byte-order mark")


def test_resuming_from_an_empty_database_file_writes_nothing(tmp_path, mb_env):
    db = tmp_path / "empty.sqlite"
    db.touch()
    assert_one_line_error(mountbench("run", "--resume", "last", "--db", str(db), env=mb_env), "no run")
    assert db.stat().st_size == 0
