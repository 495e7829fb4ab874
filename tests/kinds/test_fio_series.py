"""Within a sample: fio's per-interval logs are stored as the sample's series, a sample
whose speed changes under it says so, and fio's own steadystate= verdict is shown."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import mountbench
from support.tools import needs_fio

from mountbench import model
from mountbench.kinds.fioseries import interval_ms, read_series, steadiness

BLKIO = Path("/sys/fs/cgroup/blkio")


def test_logs_become_series_per_direction_added_up_over_jobs(tmp_path):
    # time ms, value, direction, bs, offset: two jobs logging the same intervals
    (tmp_path / "s_iops.log").write_text("250, 100, 0, 0, 0\n250, 50, 0, 0, 0\n500, 80, 0, 0, 0\n500, 20, 1, 0, 0\n")
    (tmp_path / "s_bw.log").write_text("250, 400, 0, 0, 0\n500, 320, 0, 0, 0\n")
    series = read_series(tmp_path, "s", 250)
    assert series == {"read.iops": [150, 80], "write.iops": [20], "read.bw": [400 * 1024, 320 * 1024],
                      "interval_s": [0.25]}  # fmt: skip
    assert not list(tmp_path.iterdir())  # the logs are removed once read


def test_interval_gives_about_twenty_points():
    assert interval_ms(2.5) == 100 and interval_ms(60) == 3000 and interval_ms(None) == 1000


def test_a_falling_series_is_not_steady_and_a_flat_one_is():
    falling = {"read.iops": [9000, 1000, 990, 1010, 980, 700, 650, 600, 550, 500, 480, 470, 430, 400]}
    (caveat,) = steadiness(falling)
    assert caveat.code == model.UNSTEADY and "read IOPS fell" in caveat.text
    flat = {"read.iops": [9000, 1000, 990, 1010, 980, 1005, 995, 1002, 998, 1001, 999, 1003]}
    assert steadiness(flat) == ()


def _timed_fio_running(job_name: bytes) -> bool:
    """Is the sample's own fio running (its job file, with json+ output: not the preconditioning)?"""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--output-format=json+" in argv and any(arg.endswith(job_name) for arg in argv):
            return True
    return False


def _series(db: Path) -> list[tuple[str, dict, list[str]]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT workload, series, caveats FROM samples ORDER BY started_at").fetchall()
    return [(w, json.loads(s), [c["code"] for c in json.loads(c)]) for w, s, c in rows]


def test_a_sample_slowed_halfway_says_it_was_not_steady(tmp_path, mb_env):
    """The kernel's blkio throttle on the loop device under an ext4 target is switched on
    halfway through a 3 s direct read: its IOPS fall by an order of magnitude."""
    needs_fio()
    realmounts.require_root()
    if not (BLKIO / "blkio.throttle.read_iops_device").exists():
        pytest.skip("no cgroup v1 blkio throttle on this kernel")
    job = tmp_path / "read.fio"
    job.write_text(
        "[mbseries-probe]\nrw=randread\nbs=4k\nsize=16M\ndirect=1\nioengine=psync\nruntime=3\ntime_based=1\n"
    )
    group = BLKIO / f"mountbench-series-{os.getpid()}"
    group.mkdir()
    db = Path(mb_env["MOUNTBENCH_DB"])
    try:
        with realmounts.ext4_loop(64) as ext4:
            source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(ext4)], capture_output=True, text=True)
            device = Path(f"/sys/class/block/{os.path.basename(source.stdout.strip())}/dev").read_text().strip()

            def throttle_when_the_timed_part_runs() -> None:
                """fio writes its logs at the end: watch for the timed fio process itself (the
                untimed preconditioning runs with --output-format=json, the sample with json+)."""
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not _timed_fio_running(b"-mbseries-probe.fio"):
                    time.sleep(0.05)
                time.sleep(1.5)
                (group / "blkio.throttle.read_iops_device").write_text(f"{device} 300")

            thread = threading.Thread(target=throttle_when_the_timed_part_runs, daemon=True)
            thread.start()
            proc = subprocess.run(
                [sys.executable, "-m", "mountbench", "run", str(ext4), "--job", str(job), "--repeat", "1"],
                env=mb_env, capture_output=True, text=True, timeout=300,
                preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())),
            )  # fmt: skip
            thread.join(timeout=60)
            assert proc.returncode == 0, proc.stderr
    finally:
        group.rmdir()
    ((_workload, series, codes),) = _series(db)
    assert model.UNSTEADY in codes, series
    assert min(series["read.iops"][-3:]) < 0.2 * max(series["read.iops"][:5])


def test_fio_steadystate_that_is_not_met_is_said(tmp_path, mb_env):
    needs_fio()
    job = tmp_path / "ss.fio"
    job.write_text(
        "[ss]\nrw=randread\nbs=4k\nsize=8M\nioengine=psync\ndirect=1\nruntime=4\ntime_based=1\n"
        "steadystate=iops_slope:0.001%\nsteadystate_duration=2\nsteadystate_ramp_time=1\n"
    )
    target = tmp_path / "t"
    target.mkdir()
    proc = mountbench("run", str(target), "--job", str(job), "--repeat", "1", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    ((_workload, series, codes),) = _series(Path(mb_env["MOUNTBENCH_DB"]))
    assert model.NOT_STEADY_STATE in codes
    assert len(series["read.iops"]) >= 10
