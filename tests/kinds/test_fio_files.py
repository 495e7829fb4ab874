"""Working files on real mounts: every round sees the same steady files, a damaged file is
never read as a good one, and direct reads that a cache served are caught."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import mountbench
from support.tools import needs_fio

from mountbench.fio.jobfile import FioJob, fio_variables
from mountbench.kinds.fiofiles import WorkingFile, damage, working_files

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def _samples(db: Path) -> list[tuple[str, str, int, bool, dict, list, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT target, workload, round, ok, metrics, caveats, error FROM samples").fetchall()
    return [(t, w, r, bool(ok), json.loads(m), json.loads(c), e) for t, w, r, ok, m, c, e in rows]


def test_file_names_follow_fio(tmp_path):
    variables = fio_variables()
    default = FioJob("job", (("size", "8M"), ("numjobs", "2"), ("nrfiles", "2")))
    assert [(f.path.name, f.size) for f in working_files(default, tmp_path, variables)] == [
        ("job.0.0", 4 * 2**20), ("job.0.1", 4 * 2**20), ("job.1.0", 4 * 2**20), ("job.1.1", 4 * 2**20),
    ]  # fmt: skip
    shared = FioJob("j", (("size", "256M"), ("filename_format", "mountbench.$jobnum.$filenum")))
    assert [f.path.name for f in working_files(shared, tmp_path, variables)] == ["mountbench.0.0"]
    assert working_files(FioJob("j", (("size", "4M"), ("ioengine", "filecreate"))), tmp_path, variables) is None
    assert [f.size for f in working_files(FioJob("j", (("filesize", "1M-2M"),)), tmp_path, variables)] == [None]


def test_damage_finds_holes_short_and_missing_files(tmp_path):
    full = tmp_path / "full"
    full.write_bytes(os.urandom(2**20))
    holey = tmp_path / "holey"
    with open(holey, "wb") as f:
        f.write(os.urandom(2**19))
        f.truncate(2**20)  # the second half was never written
    assert damage([WorkingFile(full, 2**20)]) == ""
    assert "hole at 512 KiB" in damage([WorkingFile(holey, 2**20)])
    assert "has 1.00 MiB of 2.00 MiB" in damage([WorkingFile(full, 2**21)])
    assert "missing" in damage([WorkingFile(tmp_path / "nope", 1)])


@pytest.mark.parametrize("file_state", ["steady", "fresh"])
def test_a_target_that_fills_during_layout_never_yields_a_good_sample(tmp_path, mb_env, file_state):
    """The issue's case: a 20 MiB tmpfs fills while fio lays out its file; fio leaves a
    full-size file of holes that later reads at fake speed. The size is a range of one value
    (filesize=12m-12m: fio picks a size in it), which mountbench's own space check does not
    evaluate, so it cannot refuse the job. (It was an environment variable fio expands before
    issue 47; mountbench now puts those in itself, and checks what they hold.)"""
    realmounts.require_root()
    job = tmp_path / "read.fio"
    job.write_text("[seq-read]\nrw=read\nbs=1M\nfilesize=12m-12m\nioengine=psync\nruntime=1\n")
    env = mb_env
    with realmounts.tmpfs("20m") as small:
        (small / "someone-elses-data").write_bytes(b"\0" * 12 * 2**20)
        proc = mountbench("run", str(small), "--job", str(job), "--repeat", "3", "--file-state", file_state,
                          env=env)  # fmt: skip
        assert proc.returncode == 1, proc.stderr  # every sample failed: the run failed
        samples = _samples(Path(mb_env["MOUNTBENCH_DB"]))
        assert len(samples) == 3
        for _t, _w, _r, ok, _m, _c, error in samples:
            assert not ok and ("No space left" in error or "incomplete" in error), error
        assert sorted(p.name for p in small.iterdir()) == ["someone-elses-data"]


def _unwritten_extents(path: Path) -> int:
    """ext4 extents allocated but never written (what fio's layout leaves for a write job)."""
    import subprocess

    out = subprocess.run(["filefrag", "-v", str(path)], capture_output=True, text=True, check=True).stdout
    return sum("unwritten" in line for line in out.splitlines())


RANDWRITE = "[rand-write]\nrw=randwrite\nbs=4k\nsize=48M\ndirect=1\nioengine=libaio\niodepth=16\ntime_based=1\n"


@pytest.mark.parametrize(("file_state", "unwritten_left"), [("steady", False), ("fresh", True)])
def test_the_file_state_each_sample_starts_from(tmp_path, mb_env, file_state, unwritten_left):
    """2,000 random 4 KiB writes (8 of 48 MiB) cannot cover a fresh file: unwritten extents
    remain when the sample started from fio's own layout (fresh), none when the file was
    written fully before round 1 (steady, the default). A count of writes rather than a
    runtime, so a faster machine cannot cover the file (CI did, at 100 ms)."""
    realmounts.require_root()
    job = tmp_path / "randwrite.fio"
    job.write_text(RANDWRITE.replace("time_based=1\n", "") + "number_ios=2000\nruntime=10\n")
    with realmounts.ext4_loop(128) as ext4:
        proc = mountbench(
            "run", str(ext4), "--job", str(job), "--repeat", "1", "--keep", "--file-state", file_state, env=mb_env
        )
        assert proc.returncode == 0, proc.stderr
        (kept,) = ext4.glob(".mountbench-*/rand-write.0.0")
        assert (_unwritten_extents(kept) > 0) == unwritten_left


def test_round_1_of_a_random_write_no_longer_differs_from_the_rest(tmp_path, mb_env):
    """On ext4, writing into unwritten extents is much slower than over written blocks (plain
    fio here: ~50k vs ~85k IOPS), so round 1 used to differ from the rest by ~30 %."""
    realmounts.require_root()
    job = tmp_path / "randwrite.fio"
    job.write_text(RANDWRITE + "runtime=1\n")
    seen = []
    for attempt in range(3):
        db = tmp_path / f"attempt{attempt}.sqlite"
        # the image in RAM: the host disk's writeback of what preconditioning wrote, which falls
        # on round 1, is not what this test is about
        with realmounts.ext4_loop(128, in_ram=True) as ext4:
            proc = mountbench("run", str(ext4), "--job", str(job), "--repeat", "4", "--db", str(db), env=mb_env)
            assert proc.returncode == 0, proc.stderr
        rounds = {r: m["write.iops"] for _t, _w, r, ok, m, _c, _e in _samples(db) if ok}
        assert sorted(rounds) == [0, 1, 2, 3]
        seen.append(rounds)
        # The bug's signature is a round 1 slower than every other round (by ~30 %). This machine
        # also jumps between speeds by up to 5x within seconds, so the bound is on the slowest
        # other round, not on their median, and the bug must show in each of three runs:
        # one run whose round 1 is not slow clears it. The file state itself is checked above.
        if rounds[0] > 0.75 * min(rounds[r] for r in (1, 2, 3)):
            return
    pytest.fail(f"round 1 was the slow one in three runs of four rounds: {seen}")


def test_direct_reads_a_cache_served_are_flagged_and_true_ones_are_not(tmp_path, mb_env):
    """fio's mmap engine ignores direct=1: with invalidate=0 the page cache serves every read
    after the first, and the loop device under ext4 sees none of them."""
    realmounts.require_root()
    job = tmp_path / "reads.fio"
    job.write_text(
        "[global]\nrw=read\nbs=1M\nsize=32M\ndirect=1\ninvalidate=0\nruntime=1\nstonewall\n"
        "[mmap-read]\nioengine=mmap\n[psync-read]\nioengine=psync\n"
    )
    with realmounts.ext4_loop(128) as ext4:
        # one layout for the run: a new one every round (the default) would start each round cold
        proc = mountbench("run", str(ext4), "--job", str(job), "--repeat", "3", "--file-state", "steady", env=mb_env)
        assert proc.returncode == 0, proc.stderr
    samples = _samples(Path(mb_env["MOUNTBENCH_DB"]))
    flagged = {w: [c["code"] for c in caveats] for _t, w, r, _ok, _m, caveats, _e in samples if r == 2}
    assert "direct-cached" in flagged["mmap-read"], flagged
    assert "direct-cached" not in flagged["psync-read"], flagged


def _layout_runner(tmp_path: Path, file_state: str):
    """A real FioRunner on a real directory, with two workloads sharing one working file (as
    the quick preset's do)."""
    from mountbench.fio.binary import find_fio
    from mountbench.host.targets import create_scratch, inspect_target, resolve_targets
    from mountbench.kinds.fio import KIND, FioRunner
    from mountbench.model import RunSettings, TargetContext

    data = {"global": {"size": "8M", "runtime": "100ms", "time_based": 1, "filename_format": "shared.$jobnum"}}
    workloads = [KIND.from_preset("t", data, {"name": n, "rw": rw}) for n, rw in (("r", "read"), ("w", "write"))]
    (target,) = resolve_targets([str(tmp_path)])
    scratch = create_scratch(target, "20260101-000000-layo")
    ctx = TargetContext(target, inspect_target(target, scratch), scratch)
    workdir = tmp_path / "work"
    workdir.mkdir()
    settings = RunSettings(ram_bytes=2**34, workdir=workdir)
    runner = FioRunner(find_fio(), file_state=file_state)
    prepared = [runner.prepare(w, ctx, settings) for w in workloads]
    return runner, prepared, ctx, settings, scratch / "shared.0"


@pytest.mark.parametrize(("file_state", "layouts"), [("per-round", 3), ("steady", 1)])
def test_the_working_file_is_laid_out_anew_every_round_by_default(tmp_path, file_state, layouts):
    """Issue 23: one file laid out once per target made the rounds replicate only the noise of
    reading that file. per-round lays it out anew when a workload comes back to it (a new round);
    the workloads of one round share that round's layout."""
    runner, (read, write), ctx, settings, path = _layout_runner(tmp_path, file_state)
    stamps = []
    for _round in range(3):
        for prepared in (read, write):
            runner.setup(prepared, ctx, settings)
            left = sorted(p.name for p in path.parent.iterdir() if p.name != ".mountbench-scratch")
            assert left == [path.name]  # no spacer, no last round's file left
            stamps.append(os.stat(path).st_mtime_ns)
            runner.run(prepared, ctx, settings)
            os.utime(path, ns=(1, 1))  # a layout rewrites the file and moves its time off 1 ns
    assert all(stamp != 1 for stamp in stamps[::2][:layouts]) and stamps[1] == 1  # round 1: one layout
    assert sum(stamp != 1 for stamp in stamps) == layouts


def test_a_mount_that_refuses_fios_layout_gets_its_files_from_dd(tmp_path: Path) -> None:
    """rclone's cache mode off refuses fio's preconditioning (EPERM); dd writes the files as new
    files instead (tests/labs/cloud runs S4's read on such a mount). Here: the command, and that it
    writes exactly the planned size with no hole."""
    from mountbench.host.contain import Fence
    from mountbench.host.process import run_child
    from mountbench.kinds.fiofiles import WorkingFile, damage, sequential_fill_argv

    assert sequential_fill_argv(WorkingFile(tmp_path / "x", None)) is None  # size only fio knows
    assert sequential_fill_argv(WorkingFile(tmp_path / "x", (1 << 20) + 1)) is None  # not whole MiB
    file = WorkingFile(tmp_path / "f", 3 << 20)
    argv = sequential_fill_argv(file)
    assert argv is not None and "conv=fsync" in argv and "count=3" in argv
    assert run_child(argv, fence=Fence.of([tmp_path]), timeout=60).returncode == 0
    assert file.path.stat().st_size == 3 << 20 and damage([file]) == ""


def test_the_last_rounds_files_stay_allocated_until_the_new_layout_exists(tmp_path):
    """Removed first, a tmpfs file's pages came straight back to the new file of the same directory,
    and with them a placement every round of a run repeated (bench/aa.py: 3 of 60 A/A comparisons at
    1.17-1.21x): the old files are renamed aside while the new ones are written, then deleted."""
    from mountbench.kinds import fiofiles

    old = tmp_path / "mountbench.0.0"
    old.write_bytes(b"x" * 4096)
    aside = fiofiles.set_aside([fiofiles.WorkingFile(old, 4096)], tmp_path)
    assert aside == [tmp_path / ("mountbench.0.0" + fiofiles.ASIDE_SUFFIX)] and aside[0].exists() and not old.exists()
    old.write_bytes(b"y" * 4096)  # the new layout
    fiofiles.drop_aside(aside, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mountbench.0.0"]
    assert fiofiles.set_aside([fiofiles.WorkingFile(tmp_path / "absent", 4096)], tmp_path) == []


def test_each_layout_starts_at_a_place_drawn_at_random_and_the_spacer_leaves_nothing(bindfs_mount):
    """Laid out in the targets' turned order, freed memory went back out last-freed first and every
    other round handed b the same regions (eight quiet A/A --until runs: 18 of 48 paired p-values below
    5 %). Before each layout a spacer of random size, allocated and not written, takes the place the
    layout would have had; it is removed with the last round's files. Where fallocate would write (a
    FUSE mount), none is made."""
    import random

    from support.realmounts import tmpfs

    from mountbench.kinds import fiofiles

    with tmpfs("128m") as tmpfs_dir:  # room for the old files, the new and the spacer, and 64 MiB to spare
        files = [fiofiles.WorkingFile(tmpfs_dir / "mountbench.0.0", 16 << 20)]
        sizes = _spacers(files, random.Random(7))
        assert len(set(sizes)) >= 5 and list(tmpfs_dir.iterdir()) == []  # drawn anew each time; nothing left
        (tmpfs_dir / fiofiles.SPACER_NAME).write_bytes(b"left by a killed run")
        resumed = fiofiles.place_spacer(files, tmpfs_dir, "tmpfs", random.Random(3))
        assert resumed is not None and resumed.stat().st_size >= fiofiles.SPACER_GRAIN  # the old one replaced
        fiofiles.drop_aside([resumed], tmpfs_dir)
    fuse = [fiofiles.WorkingFile(bindfs_mount.mountpoint / "mountbench.0.0", 16 << 20)]
    assert fiofiles.place_spacer(fuse, bindfs_mount.mountpoint, "fuse.bindfs", random.Random(7)) is None
    assert list(bindfs_mount.mountpoint.iterdir()) == []


def _spacers(files, rng) -> list[int]:
    import os

    from mountbench.kinds import fiofiles

    sizes = []
    for _ in range(6):
        spacer = fiofiles.place_spacer(files, files[0].path.parent, "tmpfs", rng)
        if spacer is None:  # drew 0 (below one grain)
            sizes.append(0)
            continue
        assert spacer.parent == files[0].path.parent and spacer.name == fiofiles.SPACER_NAME
        size = spacer.stat().st_size
        assert 0 < size <= files[0].size and size % fiofiles.SPACER_GRAIN == 0
        assert os.stat(spacer).st_blocks * 512 >= size  # allocated, not a hole
        sizes.append(size)
        fiofiles.drop_aside([spacer], files[0].path.parent)
    return sizes


@pytest.mark.parametrize(("file_state", "laid_rounds"), [("per-round", {1, 2}), ("steady", {1}), ("fresh", None)])
def test_the_plan_counts_laying_out_the_working_files_at_each_targets_pace(
    tmp_path, mb_env, tmpfs_dir, bindfs_mount, file_state, laid_rounds
):
    """Issue 37: the QEMU lab's first line said "at most 302 s of I/O" for 32 minutes, mostly
    layouts. A sample that lays out the files (the first of their group on a target in a round;
    steady: in the run; fresh: every one) counts them at its target's pace: a FUSE mount's 2 MB/s,
    so the plan's estimate is an upper bound there, and RAM's 500 MB/s, so a local run's first line
    is not 15 minutes for 107 s; the first line says the layouts apart from the I/O."""
    from mountbench.engine.plan import RAM_PACE, SLOW_PACE
    from mountbench.units import format_seconds

    a, b = tmpfs_dir, bindfs_mount.mountpoint
    args = ["--preset", "quick", "--size", "8M", "--repeat", "2", "--runtime", "1", "--file-state", file_state]
    proc = mountbench("run", f"a={a}", f"b={b}", *args, "--dry-run", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    layout = {"a": 8 * 2**20 / RAM_PACE.rate_bps, "b": 8 * 2**20 / SLOW_PACE.rate_bps}
    said = " ".join(proc.stdout.split())
    rows = [line.split(":", 1) for line in proc.stdout.splitlines() if line.startswith("  round ")]
    seen: set[tuple[str, str]] = set()
    for name, rest in rows:
        target, bound = rest.split("·")[0].split()[0], rest.rsplit("(≤ ", 1)[1].rstrip(")")
        round_ = int(name.split()[1])
        first = (target, name) not in seen  # quick's workloads share one file on a target
        seen.add((target, name))
        lays = laid_rounds is None or (first and round_ in laid_rounds)
        assert bound == format_seconds(1 + 0.3 + (layout[target] if lays else 0)), (file_state, name, rest)
    total = format_seconds((12 if laid_rounds is None else len(laid_rounds)) * sum(layout.values()))
    assert (
        f"of I/O and {total} laying out working files (at 2 MB/s on a network, VM or FUSE mount, 500 MB/s in RAM)"
        in said
    ), said
