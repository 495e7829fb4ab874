"""Shared helpers for the benchmark scripts (not tests: they print figures)."""

from __future__ import annotations

import contextlib
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

MOUNTBENCH = [sys.executable, "-m", "mountbench"]


def timed(argv: list[str], **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    return time.monotonic() - start, proc


def check(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(proc.args)}\n{proc.stderr}")
    return proc


def load_runs(path: Path) -> list[dict]:
    return json.loads(path.read_text())["runs"]


def median_interval(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """The median of ``values`` with a distribution-free interval (binomial order statistics).

    One block that the VM's memory drift hit (a tmpfs read 2x slower for a minute) moves a
    mean and widens its t-interval; it moves the median by one rank at most.
    """
    from scipy.stats import binom

    ordered = sorted(values)
    count = len(ordered)
    rank = int(binom.ppf((1 - level) / 2, count, 0.5))  # P(Binomial <= rank - 1) <= (1 - level) / 2
    if rank < 1:
        return statistics.median(ordered), float("nan"), float("nan")
    return statistics.median(ordered), ordered[rank - 1], ordered[count - rank]


def geometric_interval(ratios: list[float]) -> tuple[float, float, float]:
    """Geometric mean of ratios with its 95 % t-interval (nan bounds with fewer than two)."""
    from scipy.special import stdtrit

    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    half = stdtrit(len(logs) - 1, 0.975) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def load() -> str:
    """The machine's load averages (1, 5, 15 min), said with every figure: other work shares the CPUs."""
    import os

    return "load " + " ".join(f"{value:.2f}" for value in os.getloadavg())


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` busy loops (bounded: killed on the way out, and by themselves after 30 minutes)."""
    hogs = [subprocess.Popen(["timeout", "1800", "sh", "-c", "while :; do :; done"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.terminate()  # timeout passes SIGTERM on to its busy loop
            hog.wait()
