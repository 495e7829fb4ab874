"""What happened during one fio sample: its bandwidth and IOPS over time, from fio's own
logs (write_bw_log / write_iops_log averaged over log_avg_msec), and whether the sample
was steady.

A sample is not steady when its IOPS trend over the sample (drift.trend on the
series, its first interval left out as fio's ramp-up) by a quarter or more: a cache
filling up, throttling, a cliff. Its median is then a mix of two behaviours, and the
caveat says which way it went.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from mountbench import model
from mountbench.analysis import drift
from mountbench.model import Caveat

POINTS = 20  # intervals per sample
MIN_INTERVAL_MS = 100
STEADY_CHANGE = 0.25
STEADY_ALPHA = 0.01  # per-interval values are autocorrelated: ask for more than the usual 5 %
_DIRECTIONS = {"0": "read", "1": "write", "2": "trim"}


def interval_ms(duration_s: float | None) -> int:
    """The averaging interval: about POINTS intervals over the sample, at least 100 ms."""
    if not duration_s:
        return 1000
    return max(MIN_INTERVAL_MS, int(duration_s * 1000 / POINTS) // 50 * 50)


def log_options(stem: str, interval: int) -> list[tuple[str, str | None]]:
    """Options that make fio log bandwidth and IOPS per interval, one file each for all jobs."""
    return [
        ("write_bw_log", stem),
        ("write_iops_log", stem),
        ("log_avg_msec", str(interval)),
        ("per_job_logs", "0"),
    ]


def read_series(directory: Path, stem: str, interval: int) -> dict[str, list[float]]:
    """{'read.iops': [...], 'read.bw': [... B/s], 'interval_s': [0.25]} from fio's logs (then
    removed); values of all jobs in one interval are added up."""
    series: dict[str, list[float]] = {}
    for kind, scale in (("iops", 1.0), ("bw", 1024.0)):  # fio logs bandwidth in KiB/s
        path = directory / f"{stem}_{kind}.log"
        try:
            lines = path.read_text().splitlines()
        except OSError:
            continue
        finally:
            path.unlink(missing_ok=True)
        buckets: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for line in lines:
            fields = [f.strip() for f in line.split(",")]
            if len(fields) < 3 or fields[2] not in _DIRECTIONS:
                continue
            try:
                at, value = int(fields[0]), float(fields[1])
            except ValueError:
                continue
            buckets[_DIRECTIONS[fields[2]]][round(at / interval)] += value * scale
        for direction, by_time in buckets.items():
            series[f"{direction}.{kind}"] = [by_time[k] for k in sorted(by_time)]
    if series:
        series["interval_s"] = [interval / 1000]
    return series


def steadiness(series: dict[str, list[float]]) -> tuple[Caveat, ...]:
    """A caveat per direction whose IOPS were not steady during the sample."""
    found = []
    for name in ("read.iops", "write.iops", "trim.iops"):
        values = series.get(name, [])[1:]  # the first interval holds fio's ramp-up
        trend = drift.trend(values)
        if trend is None or trend.p_value >= STEADY_ALPHA or trend.change < STEADY_CHANGE:
            continue
        direction = name.split(".")[0]
        moved = "fell" if trend.end < trend.start else "rose"
        percent = abs(trend.end / trend.start - 1) * 100 if trend.start > 0 else float("inf")
        found.append(
            Caveat(
                model.UNSTEADY,
                f"not steady within the sample: {direction} IOPS {moved} {percent:.0f}% from its first intervals "
                "to its last (a cache filling, throttling?); 'mountbench report --format html' draws it",
            )
        )
    return tuple(found)
