"""Drift on real targets: three loop-mounted ext4 filesystems, one slowed midway through the
run by the kernel's block I/O throttle (cgroup v1 blkio, on its loop device). The slowed
target's cell says it drifted and that interleaving could not keep its ratio fair; the
steady one gets no such flag. (If this machine itself drifts meanwhile, both steady ones
say so on the baseline, and the steady ratio says interleaving kept it fair.)"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import wait_for_samples
from support.tools import needs_fio

pytestmark = pytest.mark.slow

BLKIO = Path("/sys/fs/cgroup/blkio")
JOB = "[rand-read]\nrw=randread\nbs=4k\nsize=8M\ndirect=1\nioengine=psync\nruntime=300ms\ntime_based=1\n"


def _device_of(mount_point: Path) -> str:
    source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(mount_point)], capture_output=True, text=True)
    name = os.path.basename(source.stdout.strip())
    return Path(f"/sys/class/block/{name}/dev").read_text().strip()  # MAJ:MIN


def test_a_target_slowed_midway_is_flagged_and_a_steady_one_is_not(tmp_path, mb_env):
    needs_fio()
    realmounts.require_root()
    if not (BLKIO / "blkio.throttle.read_bps_device").exists():
        pytest.skip("no cgroup v1 blkio throttle on this kernel")
    group = BLKIO / f"mountbench-test-{os.getpid()}"
    group.mkdir()
    job = tmp_path / "read.fio"
    job.write_text(JOB)
    db = Path(mb_env["MOUNTBENCH_DB"])
    try:
        with realmounts.ext4_loop(64) as base, realmounts.ext4_loop(64) as steady, realmounts.ext4_loop(64) as slowed:
            device = _device_of(slowed)
            argv = [sys.executable, "-m", "mountbench", "run", f"base={base}", f"steady={steady}", f"slowed={slowed}",
                    "--job", str(job), "--repeat", "10", "--seed", "3"]  # fmt: skip
            # the run (and the fio it starts) lives in the test's cgroup
            proc = subprocess.Popen(
                argv, env=mb_env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())),
            )  # fmt: skip
            try:
                wait_for_samples(db, 15, timeout=120)  # five rounds at full speed
                (group / "blkio.throttle.read_bps_device").write_text(f"{device} {2 * 1024 * 1024}")
                _out, err = proc.communicate(timeout=300)
            finally:
                proc.kill()
            assert proc.returncode == 0, err
        report = subprocess.run(
            [sys.executable, "-m", "mountbench", "report", "--format", "json"], env=mb_env,
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    finally:
        (group / "cgroup.procs").exists() and group.rmdir()
    rows = {row["target"]: row for row in json.loads(report.stdout)["summary"]}
    slowed_caveats = " | ".join(rows["slowed"]["caveats"])
    with sqlite3.connect(db) as conn:
        series = conn.execute("SELECT target, round, started_at, metrics FROM samples ORDER BY started_at").fetchall()
    timeline = [(t, r, round(json.loads(m)["read.iops"])) for t, r, _s, m in series]
    assert "drift: samples fell" in slowed_caveats, (slowed_caveats, timeline)
    assert "drift too large for interleaving" in slowed_caveats, (slowed_caveats, timeline)
    assert _largest_drift(rows["slowed"]["caveats"]) > 5  # 2 MB/s against tens of MB/s
    # The steady target gets no drift flag. On a loaded machine its own noise can still reach
    # significance now and then; it never comes near the throttled change.
    steady_caveats = rows["steady"]["caveats"]
    assert _largest_drift(steady_caveats) < 3, (steady_caveats, timeline)
    assert len(timeline) == 30


def _largest_drift(caveats: list[str]) -> float:
    """The largest 'rose/fell N x' factor among the drift caveats (1 when there is none)."""
    import re

    factors = [float(m) for text in caveats if "drift" in text for m in re.findall(r"(?:rose|fell) ([\d.]+)[x×]", text)]
    return max(factors, default=1.0)
