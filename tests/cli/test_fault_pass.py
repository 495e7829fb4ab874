"""The fault and bad-input pass of issue 34, one test per case: nothing kept is swept, nothing
foreign is resumed, nothing typed or imported reaches the terminal raw, imported config values
get the command line's ranges, an empty string is bad input, inputs that are not regular files
are refused without blocking, and what used to end in "internal error" is a one-line error.
Nothing here starts a run (refusals, dry runs, listings, imports, reports): this file runs
alongside the host's tests (tests/support/groups.py's REFUSALS), and every test ends by checking
that no run began. The cases that run fio, or make a device node, are in test_fault_pass_runs.py."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.runhelpers import assert_one_line_error, exported, fixture_db, mountbench
from support.tools import needs_fio

FIXTURE_RUN = "20250101-120000-abcd"
ESCAPES = "\x1b]0;TITLE\x07\x1b[2J"  # sets the terminal's title, then clears the screen


pytestmark = pytest.mark.usefixtures("no_run_started")  # conftest.py: every test ends by checking no run began


# --- §1: kept data is not swept ------------------------------------------------------------------


# --- §2: a run recorded elsewhere is not resumed here --------------------------------------------


# --- §3: imported text reaches the terminal escaped ----------------------------------------------


def _poisoned(run: dict) -> None:
    run["host"]["hostname"] = "vm" + ESCAPES
    run["command"] = "mountbench run" + ESCAPES
    run["workloads"][0]["title"] = "title" + ESCAPES
    run["targets"][1]["path"] = "/tmp/x" + ESCAPES
    run["targets"][1]["info"]["mount_source"] = "src" + ESCAPES
    run["samples"][1].update(ok=False, metrics={}, error="boom" + ESCAPES)
    run["samples"][0]["caveats"] = [{"code": "x", "text": "caveat" + ESCAPES}]


def test_escape_sequences_in_an_import_never_reach_the_terminal(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    path = exported(tmp_path, db, _poisoned)
    other = dict(mb_env, MOUNTBENCH_DB=str(tmp_path / "other.sqlite"))
    imported = mountbench("import", str(path), env=other)
    assert imported.returncode == 0 and "\x1b" not in imported.stdout, imported.stdout
    shown = [
        mountbench("list", env=other),
        mountbench("show", "last", "--detail", env=other),
        mountbench("show", "last", "--samples", env=other),
        mountbench("report", "last", "--format", "md", env=other),
        mountbench("report", "last", "--format", "html", "--out", str(tmp_path / "r.html"), env=other),
    ]
    for proc in shown:
        assert proc.returncode == 0, proc.stderr
        assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout, proc.args
    listed = shown[0].stdout
    assert "vm\\x1b]0;TITLE\\x07\\x1b[2J" in listed, listed  # shown, escaped, not obeyed
    assert "boom\\x1b" in shown[2].stdout and "caveat\\x1b" in shown[1].stdout
    page = (tmp_path / "r.html").read_text()
    assert "\x1b" not in page and "vm\\x1b" in page


def test_a_target_path_with_control_characters_is_refused(tmp_path, mb_env):
    needs_fio()
    odd = tmp_path / ("t" + ESCAPES)
    odd.mkdir()
    line = assert_one_line_error(mountbench("run", str(odd), "--dry-run", env=mb_env), "control character")
    assert "\x1b" not in line


# --- §4: imported config values get the command line's ranges ------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("repeat", 10**9, "repeat 1000000000 is outside 1-1000"),
        ("max_repeat", 0, "max_repeat 0 is outside 1-1000"),
        ("warmup", 101, "warmup 101 is outside 0-100"),
        ("runtime", 0.0, "runtime 0.0 is below 0.1"),
        ("until", 5.0, "until 5.0 is outside 0.001-1"),
        ("size", 0, "size 0 is below 1"),
    ],
)
def test_an_imported_config_value_outside_the_cli_range_is_refused(tmp_path, mb_env, key, value, fragment):
    db = fixture_db(tmp_path)
    path = exported(tmp_path, db, lambda run: run["config"].update({key: value}))
    other = dict(mb_env, MOUNTBENCH_DB=str(tmp_path / "other.sqlite"))
    assert_one_line_error(mountbench("import", str(path), env=other, timeout=60), fragment)
    assert not (tmp_path / "other.sqlite").exists()


def test_a_dry_run_of_a_resume_is_refused_rather_than_run(tmp_path, mb_env):
    """`run --resume ID --dry-run` resumed the run for real (the way issue 34 §4's repeat of 10^9 spun)."""
    db = fixture_db(tmp_path)

    def interrupted(run: dict) -> None:
        run["id"] = "20250101-120000-d0d0"
        run["status"] = "interrupted"
        run["host"] = {}  # recorded on no machine in particular: resumable here
        for index, target in enumerate(run["targets"]):
            target["path"] = str(tmp_path / f"gone{index}")  # were it resumed, it would stop here

    path = exported(tmp_path, db, interrupted)
    assert mountbench("import", str(path), env=mb_env).returncode == 0
    assert_one_line_error(mountbench("run", "--resume", "20250101-120000-d0d0", "--dry-run", env=mb_env), "--dry-run",
                          "--resume")  # fmt: skip


# --- §5: an empty string is bad input --------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--resume", ""],
        ["run", "--size", ""],
        ["run", "--until", ""],
        ["run", "--baseline", ""],
        ["run", "--budget", ""],
        ["run", "--preset", ""],
        ["run", "--json", ""],
        ["cloudlab", "--mode", ""],
        ["cloudlab", "--rtt", ""],
        ["show", ""],
        ["export", "", "--out", "x.json"],
    ],
    ids=lambda args: " ".join(arg or "''" for arg in args),
)
def test_an_empty_string_is_bad_input(tmp_path, mb_env, args):
    needs_fio()
    target = tmp_path / "t"
    target.mkdir()
    db = fixture_db(tmp_path)
    extra = [str(target), "--dry-run"] if args[0] == "run" else []
    proc = mountbench(*args, *extra, "--db", str(db), env=mb_env, timeout=60, cwd=tmp_path)
    given = args.index("")
    option = args[given - 1] if args[given - 1].startswith("--") else ""  # else: an argument is empty
    assert_one_line_error(proc, "is empty", option)
    assert list(target.iterdir()) == []


# --- §8: inputs that are not regular files are refused, without blocking -----------------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_a_fifo_as_job_file_hosts_file_or_import_is_refused_at_once(tmp_path, mb_env, fifo):
    needs_fio()
    target = tmp_path / "t"
    target.mkdir()
    for args in (
        ["run", str(target), "--job", str(fifo), "--dry-run"],
        ["run", str(target), "--hosts-file", str(fifo), "--dry-run"],
        ["import", str(fifo)],
    ):
        try:
            proc = mountbench(*args, env=mb_env, timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(args)} blocked on the FIFO")
        assert_one_line_error(proc, str(fifo), "not a regular file")


# --- §9: one-line errors where an internal error used to be --------------------------------------------


def test_a_binary_hosts_file_names_the_file_and_line(tmp_path, mb_env):
    needs_fio()
    hosts = tmp_path / "hosts"
    hosts.write_bytes(b"node1\nnode2\xff\xfe\x00\x01\n")
    target = tmp_path / "t"
    target.mkdir()
    assert_one_line_error(mountbench("run", str(target), "--hosts-file", str(hosts), "--dry-run", env=mb_env),
                          str(hosts), "line 2", "not text")  # fmt: skip


def test_a_damaged_database_is_a_one_line_error(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET command = CAST(x'ff00fe' AS TEXT)")
        conn.execute("UPDATE targets SET label = CAST(x'ff' AS TEXT) WHERE position = 0")
    for args in (["list"], ["show", "last"], ["export", "last", "--out", str(tmp_path / "x.json")]):
        assert_one_line_error(mountbench(*args, "--db", str(db), env=mb_env), str(db), "damaged")


def test_a_three_column_terminal_still_shows_the_run(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    proc = mountbench("show", "last", "--db", str(db), env=dict(mb_env, COLUMNS="3"))
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
    assert FIXTURE_RUN in proc.stdout


def test_a_closed_standard_output_is_a_one_line_error(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "mountbench", "list", "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=mb_env, timeout=60,
        preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    proc.stdout = ""
    assert_one_line_error(proc, "standard output")


# --- §10: the smaller ones -----------------------------------------------------------------------------


def test_a_locked_database_says_so_soon(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        proc = mountbench("list", "--db", str(db), env=mb_env, timeout=60)
        waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    line = assert_one_line_error(proc, "locked", str(db))
    assert "not a mountbench database" not in line
    assert waited < 20, waited


@pytest.mark.parametrize("ref", ["%", "_", "2025%", "20250101_"])
def test_percent_and_underscore_are_not_wildcards_in_a_run_id(tmp_path, mb_env, ref):
    db = fixture_db(tmp_path)
    assert_one_line_error(mountbench("show", ref, "--db", str(db), env=mb_env), f"no run {ref!r}")


def test_a_report_format_that_contradicts_the_out_suffix_is_refused(tmp_path, mb_env):
    db = fixture_db(tmp_path)
    out = tmp_path / "r.md"
    assert_one_line_error(mountbench("report", "--db", str(db), "--format", "pdf", "--out", str(out), env=mb_env),
                          "r.md", "pdf")  # fmt: skip
    assert not out.exists()


def test_a_job_with_stats_off_is_refused_before_the_first_sample(tmp_path, mb_env):
    needs_fio()
    target = tmp_path / "t"
    target.mkdir()
    job = tmp_path / "quiet.fio"
    job.write_text("[quiet]\nrw=read\nsize=1m\nstats=0\n")
    assert_one_line_error(mountbench("run", str(target), "--job", str(job), "--repeat", "1", env=mb_env), "stats=0")
    assert list(target.iterdir()) == []
    assert not Path(mb_env["MOUNTBENCH_DB"]).exists()


def test_the_json_export_is_never_written_over_the_runs_tarball(tmp_path, mb_env):
    """--tarball is read by the run: --json on the same file is refused before anything runs, the tarball
    untouched (issue 52: the check read a field the options no longer have, so it never protected it)."""
    import tarfile

    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.c").write_text("int main(void) { return 0; }\n")
    tarball = tmp_path / "tree.tar"
    with tarfile.open(tarball, "w") as archive:
        archive.add(tree, arcname="tree")
    before = tarball.read_bytes()
    target = tmp_path / "target"
    target.mkdir()
    found = mountbench(
        "run", str(target), "--preset", "tree", "--tarball", str(tarball), "--json", str(tarball), env=mb_env
    )
    assert_one_line_error(found)
    assert "tarball" in found.stderr or "input" in found.stderr, found.stderr
    assert tarball.read_bytes() == before
