"""Every kind of bad input: one line naming the problem and the fix, exit 2, no
traceback, and nothing written to any target. Each command here is refused (or is a dry run, a
doctor or a listing) before a run starts: this file runs alongside the host's tests
(tests/support/groups.py's REFUSALS), and every test ends by checking that no run began.
The refusals that need a mount of their own are in test_bad_input_mounts.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from support.runhelpers import assert_one_line_error, mountbench
from support.tools import needs_fio


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


pytestmark = pytest.mark.usefixtures("no_run_started")  # conftest.py: every test ends by checking no run began


def test_nonexistent_path(target, mb_env):
    proc = mountbench("run", str(target), str(target / "missing"), env=mb_env)
    assert_one_line_error(proc, "does not exist", "check the path")


def test_file_instead_of_directory(target, mb_env):
    proc = mountbench("run", str(target / "precious.txt"), env=mb_env)
    assert_one_line_error(proc, "not a directory")


def test_target_given_twice(target, mb_env):
    proc = mountbench("run", str(target), f"again={target}/", env=mb_env)
    assert_one_line_error(proc, "given twice")


def test_duplicate_labels(target, mb_env):
    proc = mountbench("run", f"x={target}", f"x={target / 'sub'}", env=mb_env)
    assert_one_line_error(proc, "labelled 'x'")


def test_unknown_preset(target, mb_env):
    proc = mountbench("run", str(target), "--preset", "turbo", env=mb_env)
    assert_one_line_error(proc, "unknown preset 'turbo'", "quick")


def test_invalid_job_file_is_checked_by_fio_first(target, tmp_path, mb_env):
    job = tmp_path / "bad.fio"
    job.write_text("[x]\nrw=sideways\n")
    proc = mountbench("run", str(target), "--job", str(job), env=mb_env)
    assert_one_line_error(proc, "invalid fio job 'x'", "rw=sideways")


def test_a_bad_section_past_the_first_batch_of_checks_is_found(target, tmp_path, mb_env):
    """fio's parser checks a few sections at a time; the last of many still gets checked (stonewall:
    fio runs them one after another, so each is a workload of its own)."""
    job = tmp_path / "many.fio"
    good = "[global]\nstonewall\n" + "".join(f"[ok{i}]\nrw=read\nsize=1m\n" for i in range(11))
    job.write_text(good + "[late]\nrw=sideways\nsize=1m\n")
    proc = mountbench("run", str(target), "--job", str(job), env=mb_env)
    assert_one_line_error(proc, "invalid fio job 'late'", "rw=sideways")


def test_missing_job_file(target, tmp_path, mb_env):
    proc = mountbench("run", str(target), "--job", str(tmp_path / "none.fio"), env=mb_env)
    assert_one_line_error(proc, "does not exist")


def test_bad_size_and_baseline(target, mb_env):
    assert_one_line_error(mountbench("run", str(target), "--size", "huge", env=mb_env), "cannot read size")
    # issue 23: '--size 64' was taken as 64 bytes and made a cache benchmark nobody asked for
    assert_one_line_error(mountbench("run", str(target), "--size", "64", env=mb_env), "without a unit", "64M")
    assert_one_line_error(mountbench("run", str(target), "--baseline", "nope", env=mb_env), "--baseline 'nope'")


def test_click_usage_errors_are_one_line_too(target, mb_env):
    assert_one_line_error(mountbench("run", str(target), "--repeat", "0", env=mb_env), "--repeat", "run --help")
    assert_one_line_error(mountbench("run", str(target), "--runtime", "abc", env=mb_env), "--runtime")
    assert_one_line_error(mountbench("report", "--format", "docx", env=mb_env), "--format", "report --help")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_runtime_that_is_not_a_duration(target, mb_env, value):
    assert_one_line_error(mountbench("run", str(target), "--runtime", value, env=mb_env), "--runtime")


def test_a_binary_job_file(target, tmp_path, mb_env):
    job = tmp_path / "random.fio"
    job.write_bytes(bytes(range(256)) * 20)
    assert_one_line_error(mountbench("run", str(target), "--job", str(job), env=mb_env), "not a text file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through directory permissions")
def test_read_only_directory(target, mb_env):  # pragma: no cover - CI runs as root
    target.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert_one_line_error(mountbench("run", str(target), env=mb_env), "not writable")
    finally:
        target.chmod(0o755)


def test_fio_missing_names_the_package(target, tmp_path, mb_env):
    env = dict(mb_env, PATH=str(tmp_path / "empty-bin"))
    proc = mountbench("run", str(target), env=env)
    assert_one_line_error(proc, "fio is not installed", "apt-get install fio")
    for command in ("dnf install fio", "zypper install fio", "pacman -S fio", "apk add fio", "brew install fio"):
        assert command in proc.stderr


def test_fio_too_old(target, tmp_path, mb_env):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "fio").write_text("#!/bin/sh\necho fio-2.2.10\n")
    (fake / "fio").chmod(0o755)
    env = dict(mb_env, PATH=f"{fake}:{os.environ['PATH']}")
    proc = mountbench("run", str(target), env=env)
    assert_one_line_error(proc, "fio-2.2.10", "3.25 or newer")
    assert "apt-get install fio" in proc.stderr and "apk add fio" in proc.stderr and "brew install fio" in proc.stderr


def test_unknown_run_and_corrupt_database(tmp_path, mb_env):
    assert_one_line_error(mountbench("show", "nosuchrun", env=mb_env), "nothing stored")
    bad = tmp_path / "bad.sqlite"
    bad.write_text("garbage" * 1000)
    assert_one_line_error(mountbench("list", "--db", str(bad), env=mb_env), "not a mountbench database")


def test_debug_shows_the_traceback(target, mb_env):
    proc = mountbench("--debug", "run", str(target / "missing"), env=mb_env)
    assert proc.returncode == 2 and "Traceback" in proc.stderr


def test_dry_run_writes_nothing_and_prints_job_files(target, mb_env):
    proc = mountbench("run", str(target), "--dry-run", "--preset", "cdm", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert "[seq1m-q8t1-read]" in proc.stdout and f"directory={target}/.mountbench-" in proc.stdout
    assert "8 workloads × 3 repetitions = 24 samples" in proc.stdout
    assert not Path(mb_env["MOUNTBENCH_DB"]).exists()
    # one clock for every job, chosen once: fio's own choice (cpu or clock_gettime on Linux)
    clocks = {line for line in proc.stdout.splitlines() if line.startswith("clocksource=")}
    assert len(clocks) == 1 and clocks <= {"clocksource=cpu", "clocksource=clock_gettime"}


def test_dry_run_lists_warmups_before_the_measured_rounds(target, mb_env):
    proc = mountbench("run", str(target), "--dry-run", "--preset", "quick", "--warmup", "1", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert "6 workloads × 3 repetitions = 18 samples, after 6 warm-ups" in " ".join(proc.stdout.split())
    order = [line.split(":")[0].strip() for line in proc.stdout.splitlines() if line.startswith("  warm-up ")]
    order += [line.split(":")[0].strip() for line in proc.stdout.splitlines() if line.startswith("  round ")]
    assert order[:7] == ["warm-up 1"] * 6 + ["round 1"]
    assert proc.stdout.index("  warm-up 1:") < proc.stdout.index("  round 1:")


def test_dry_run_says_which_budget_applies_and_how_to_get_fixed_rounds(target, mb_env):
    """Issue 23: a plain run is budgeted by its preset's default; the dry run said nothing of it."""
    plain = " ".join(mountbench("run", str(target), "--dry-run", env=mb_env).stdout.split())
    assert "Budget: 36.0 s (the preset's default, as no --repeat, --until, --budget or --runtime was given;" in plain
    assert "they are all taken even if they need longer" in plain
    assert "--repeat N runs N fixed rounds" in plain
    given = " ".join(mountbench("run", str(target), "--dry-run", "--budget", "20s", env=mb_env).stdout.split())
    assert "Budget: 20.0 s (--budget)" in given
    fixed = mountbench("run", str(target), "--dry-run", "--repeat", "2", env=mb_env).stdout
    assert "Budget" not in fixed


def test_a_job_that_names_its_clock_keeps_it(target, tmp_path, mb_env):
    job = tmp_path / "own.fio"
    job.write_text("[own]\nrw=randread\nbs=4k\nsize=1M\nclocksource=gettimeofday\n")
    proc = mountbench("run", str(target), "--dry-run", "--job", str(job), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stdout.splitlines() if line.startswith("clocksource=")] == [
        "clocksource=gettimeofday"
    ]


def test_presets_and_doctor(target, mb_env):
    proc = mountbench("presets", env=mb_env)
    assert proc.returncode == 0
    for name in ("quick", "cdm", "nine", "lima", "latency"):
        assert name in proc.stdout
    assert proc.stdout.count("(default)") == 1 and "quick (default):" in proc.stdout
    usage = mountbench("show", "--help", env=mb_env)
    assert "Usage: mountbench show [OPTIONS] [RUN]" in usage.stdout
    doctor = mountbench("doctor", str(target), env=mb_env)
    assert "fio-" in doctor.stdout and "O_DIRECT" in doctor.stdout


def test_watching_a_process_that_is_not_running(target, mb_env):
    proc = mountbench("run", str(target), "--watch", "no-such-daemon-mb", env=mb_env)
    assert_one_line_error(proc, "--watch no-such-daemon-mb: no process named no-such-daemon-mb is running")
    proc = mountbench("run", str(target), "--watch", "/usr/bin/sshfs", env=mb_env)
    assert_one_line_error(proc, "give a process name without its path")


# --- issue 24 §9: accepted before, wrong ----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["run", "{t}", "--dry-run", "a\nb={t}"], ["target label", "printable text on one line", "'\\n'"]),
        (["run", "--dry-run", "x" * 5000 + "={t}"], ["at most 64 characters, this one 5000"]),
        (["run", "{t}", "--dry-run", "--per-client"], ["--per-client", "add --client HOST"]),
        (["run", "{t}", "--dry-run", "--size", "1"], ["--size 1", "give a unit, e.g. 64M"]),
        (["run", "{t}", "--dry-run", "--sweep", "bs=1k..1T"], ["block size of 1T cannot be measured"]),
        (["run", "{t}", "--dry-run", "--repeat", "5", "--max-repeat", "2"], ["--max-repeat 2 is below --repeat 5"]),
        (["probe", "{t}", "--timeout", "nan"], ["--timeout", "nan is not a number of seconds"]),
        (["serve", "--bind", "127.0.0.1:99999"], ["give the address alone and the port with --port"]),
        (["serve", "--bind", "999.1.1.1"], ["999.1.1.1 is not an IP address"]),
    ],
)
def test_wrong_values_accepted_before_are_refused(target, mb_env, args, fragments):
    proc = mountbench(*[arg.replace("{t}", str(target)) for arg in args], env=mb_env)
    assert_one_line_error(proc, *fragments)
    assert "choose another --port" not in proc.stderr  # serve --bind: the address is blamed, not the port
    assert not Path(mb_env["MOUNTBENCH_DB"]).exists()


def test_a_label_of_64_printable_characters_is_fine(target, mb_env):
    proc = mountbench("run", "--dry-run", f"{'é' * 64}={target}", env=mb_env)
    assert proc.returncode == 0, proc.stderr


def test_a_job_fio_drops_names_the_option(target, tmp_path, mb_env):
    job = tmp_path / "trigger.fio"
    job.write_text("[j]\nrw=read\nsize=1M\ntrigger-file=x\n")
    proc = mountbench("run", str(target), "--job", str(job), "--dry-run", env=mb_env)
    assert_one_line_error(proc, "Bad option <trigger-file=x>", "job j dropped")
