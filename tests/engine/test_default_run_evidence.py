"""Issue 31's "done when" for a default run, on real targets with the real CLI: on three targets it
says its time before it starts and plans at least 3 samples a cell (the fake-runner session test,
tests/engine/test_session.py, shows the planned rounds are all taken); under two CPU hogs the far
pair (tmpfs against the machine's own disk) makes no confident wrong verdict and names the noise."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections import Counter
from collections.abc import Iterator

import pytest
from support import realmounts
from support.runhelpers import mountbench
from support.tools import needs_fio


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def test_a_default_run_on_three_targets_says_its_time_up_front_and_plans_three_rounds_a_cell(tmp_path, mb_env):
    """The quick preset's 36 s is for two targets; with three it grows to 54 s, said before the run,
    and every one of the 3 x 6 cells gets the 3 planned rounds (54 samples)."""
    dirs = [tmp_path / name for name in ("a", "b", "c")]
    for directory in dirs:
        directory.mkdir()
    proc = mountbench("run", *(f"{d.name}={d}" for d in dirs), "--dry-run", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stdout.split())
    assert "3 targets × 6 workloads × 3 repetitions = 54 samples" in said
    assert "Budget: 54.0 s (the preset's default" in said and "they are all taken even if they need longer" in said
    rounds = Counter(line.split(":")[0].strip() for line in proc.stdout.splitlines() if line.startswith("  round "))
    assert rounds == {"round 1": 18, "round 2": 18, "round 3": 18}
    two = " ".join(mountbench("run", f"a={dirs[0]}", f"b={dirs[1]}", "--dry-run", env=mb_env).stdout.split())
    assert "Budget: 36.0 s (the preset's default" in two


@contextlib.contextmanager
def _cpu_hogs(count: int) -> Iterator[None]:
    """``count`` busy loops, ended on the way out (and by themselves after 10 minutes)."""
    hogs = [subprocess.Popen(["timeout", "600", "sh", "-c", "while :; do :; done"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.terminate()
            hog.wait()


def test_under_two_cpu_hogs_the_far_pair_names_the_noise_and_is_never_confidently_wrong(tmp_path, mb_env):
    """The default run (its budget, --until 5 %) of random 4K reads at QD1, tmpfs against a directory of
    the machine's own disk, while two busy loops hold both CPUs of a 2-CPU machine: the samples record
    the noise, the report says the machine was busy beside the answer, and the disk is never called the
    faster (tmpfs is many times faster at QD1: a wrong verdict would be the hogs deciding it)."""
    out = tmp_path / "run.json"
    with realmounts.tmpfs("128m") as ram, realmounts.host_dir("busy-disk") as disk, _cpu_hogs(2):
        proc = mountbench(
            "run", f"ram={ram}", f"disk={disk}", "--only", "rnd4k-q1-read", "--size", "16M", "--json", str(out),
            env=mb_env,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_text())
    samples = document["runs"][0]["samples"]
    measured = [s for s in samples if s["ok"] and s["round"] >= 0]
    assert measured and all("noise.others_cpu" in s["metrics"] for s in measured)
    busy = [s for s in measured if s["metrics"]["noise.others_cpu"] >= 25.0]
    assert len(busy) >= len(measured) / 2, [s["metrics"]["noise.others_cpu"] for s in measured]
    assert "busy during" in " ".join(proc.stdout.split()), proc.stdout
    (row,) = [r for r in document["summary"] if r["target"] == "disk"]
    assert row["verdict"] in ("worse", "undecided"), row["comparison"]
    assert row["n"] >= 3
