"""Bad input refused on a mount of the test's own (a small or read-only tmpfs): one line naming
the problem and the fix, exit 2, no traceback, and nothing written to any target. (The rest of
the bad input is in test_bad_input.py, which runs alongside the host's tests; these mount.)"""

from __future__ import annotations

import pytest
from support import realmounts
from support.runhelpers import assert_one_line_error, mountbench, snapshot
from support.tools import needs_fio


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def test_not_enough_space(mb_env):
    with realmounts.tmpfs("8m") as small:
        before = snapshot(small)
        proc = mountbench("run", str(small), "--size", "64M", env=mb_env)
        assert_one_line_error(proc, "not enough space", "--size")
        assert snapshot(small) == before


def test_read_only_filesystem(mb_env):
    with realmounts.tmpfs("8m") as ro:
        realmounts._check(["mount", "-o", "remount,ro", str(ro)])
        proc = mountbench("run", str(ro), "--size", "1M", env=mb_env)
        assert_one_line_error(proc, "not writable", "EROFS")


def test_dry_run_checks_what_run_checks_and_refuses_what_run_refuses(target, mb_env):
    """Issue 37: with a 168 MiB target the dry run exited 0 and said nothing about space; the run
    refused (exit 2) and doctor marked it. Now the dry run says each check in a few lines, before
    the order and the job files, and exits 2 with the run's own reason."""
    fine = mountbench("run", str(target), "--dry-run", env=mb_env)
    assert fine.returncode == 0, fine.stderr
    checks = fine.stdout.split("Checks", 1)[1].split("Order", 1)[0]
    assert "✓ space:" in checks and "clocksource:" in checks and "a run would start" in checks
    assert fine.stdout.index("Checks") < fine.stdout.index("Job files")
    clock = next(line for line in checks.splitlines() if "clocksource:" in line).split("clocksource: ")[1].split()[0]
    assert f"clocksource={clock}" in fine.stdout.splitlines(), "the job files use the clock the checks name"
    realmounts.require_root()
    with realmounts.tmpfs("168m") as small:
        run = mountbench("run", str(small), "--repeat", "1", env=mb_env)
        dry = mountbench("run", str(small), "--dry-run", "--repeat", "1", env=mb_env)
    assert run.returncode == 2 and "not enough space" in run.stderr
    assert dry.returncode == 2 and dry.stderr.count("\n") == 1 and "a run would refuse: not enough space" in dry.stderr
    said = " ".join(dry.stdout.split())
    assert "✗ space: not enough space on target" in said and "a run would refuse it (exit 2)" in said


def test_the_tree_space_refusal_does_not_suggest_the_tree_given(mb_env):
    realmounts.require_root()
    with realmounts.tmpfs("600k") as small:
        proc = mountbench("run", str(small), "--preset", "tree", "--only", "extract", "--tree", "tiny", env=mb_env)
        assert_one_line_error(proc, "not enough space", "--tree tiny) does not fit either")
        assert "use --tree tiny" not in proc.stderr


# --- issue 47 case 8: what a full or read-only filesystem used to let through -----------------------


def _full_tmpfs():
    realmounts.require_root()
    return realmounts.tmpfs("1m")


def test_a_database_on_a_full_filesystem_is_refused_and_leaves_no_file(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    with _full_tmpfs() as full:
        _fill(full)
        proc = mountbench("run", str(target), "--db", str(full / "x.sqlite"), "--runtime", "0.3", "--size", "1M",
                          "--repeat", "1", "--only", "rnd4k-q1-read", env=mb_env)  # fmt: skip
        assert_one_line_error(proc, str(full / "x.sqlite"), "full")
        assert sorted(p.name for p in full.iterdir()) == ["fill"]  # no 0-byte database left
    assert list(target.iterdir()) == []


def test_a_json_export_on_a_full_filesystem_fails_the_command(tmp_path, mb_env):
    """It exited 0: the export failed after every sample and the run said only a warning."""
    target = tmp_path / "t"
    target.mkdir()
    with _full_tmpfs() as full:
        _fill(full)
        proc = mountbench("run", str(target), "--json", str(full / "out.json"), "--runtime", "0.3", "--size", "1M",
                          "--repeat", "1", "--only", "rnd4k-q1-read", env=mb_env)  # fmt: skip
        assert proc.returncode == 1, proc.stderr
        last = proc.stderr.strip().splitlines()[-1]
        assert "could not be written" in last and "mountbench export" in last, last


def test_a_dry_run_refuses_a_read_only_target_as_the_run_does(mb_env):
    with realmounts.tmpfs("8m") as ro:
        realmounts._check(["mount", "-o", "remount,ro", str(ro)])
        dry = mountbench("run", str(ro), "--dry-run", env=mb_env)
        assert dry.returncode == 2 and "a run would refuse" in dry.stderr and "not writable" in dry.stderr, dry.stderr
        assert "EROFS" in dry.stderr


def _fill(directory):
    """Fill a filesystem to its last block."""
    with open(directory / "fill", "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass


def test_dry_run_refuses_a_size_that_fills_the_target_and_names_one_that_fits(mb_env):
    """Issue 48: `--size 64M` on a 64 MiB tmpfs: the dry run said "✓ space … a run would start", and the run
    then failed all 18 samples with "working file has 64.0 MiB of 64.0 MiB; it was removed". Now both refuse
    before the first write, naming a --size that fits; with it the dry run says go and the run takes its
    samples."""
    import re

    realmounts.require_root()
    with realmounts.tmpfs("64m") as small:
        before = snapshot(small)
        dry = mountbench("run", str(small), "--size", "64M", "--dry-run", env=mb_env)
        run = mountbench("run", str(small), "--size", "64M", env=mb_env)
        assert snapshot(small) == before
        assert dry.returncode == 2 and "✗ space: not enough space" in " ".join(dry.stdout.split())
        assert_one_line_error(run, "not enough space", "--size")
        fits = re.search(r"--size (\d+)M fits", run.stderr)
        assert fits, run.stderr
        size = f"{fits.group(1)}M"
        dry = mountbench("run", str(small), "--size", size, "--dry-run", env=mb_env)
        assert dry.returncode == 0 and "a run would start" in dry.stdout, dry.stdout + dry.stderr
        ran = mountbench("run", str(small), "--size", size, "--repeat", "1", "--only", "seq1m-q8-*", env=mb_env)
        assert ran.returncode == 0 and "2 samples stored, 0 failed" in ran.stderr, ran.stderr
