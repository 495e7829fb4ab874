"""What each metric means: its unit, which direction is better, and how to name it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mountbench.model import Workload


@dataclass(frozen=True)
class MetricInfo:
    name: str
    label: str
    unit: str  # "IOPS", "B/s", "s", "%", "B", "1/s"
    higher_is_better: bool


def split_metric(metric: str) -> tuple[str, str]:
    """``read.lat_p99.9`` -> ("read", "lat_p99.9"); ``wall`` -> ("", "wall"). The
    direction is everything before the first dot: percentiles have dots of their own."""
    direction, dot, name = metric.partition(".")
    return (direction, name) if dot else ("", metric)


# CPU time of measured processes (watch.py): host.cpu_s, nginx.cpu_s, ...
_CPU_TIMES = {"cpu_s": "CPU time", "cpu_user_s": "CPU time, user", "cpu_sys_s": "CPU time, system"}
# plain counts: label, higher is better
_COUNTS = {
    "ctx_voluntary": ("voluntary context switches", False),
    "ctx_involuntary": ("involuntary context switches", False),
    "errors": ("errors", False),
    "requests": ("requests", True),
}

# What serving a sample cost the host (--watch, the lab): shown with every workload's
# headline metrics when a sample has them, next to the throughput they paid for.
COST_METRICS = ("host.cpu_s", "host.cpu_s_per_gib", "host.uss_peak")


def describe(metric: str) -> MetricInfo:
    direction, name = split_metric(metric)
    prefix = f"{direction} " if direction else ""
    if name == "iops":
        return MetricInfo(metric, f"{prefix}IOPS", "IOPS", True)
    if name == "bw":
        return MetricInfo(metric, f"{prefix}bandwidth", "B/s", True)
    if name == "bytes":
        return MetricInfo(metric, f"{prefix}bytes moved", "B", True)
    if name == "lat_mean":
        return MetricInfo(metric, f"{prefix}mean latency", "s", False)
    if name.startswith("lat_p"):
        return MetricInfo(metric, f"{prefix}latency p{name[5:]}", "s", False)
    if name == "cpu_s_per_gib":
        return MetricInfo(metric, f"{prefix}CPU per GiB moved", "s/GiB", False)
    if name == "uss_peak":
        return MetricInfo(metric, f"{prefix}peak memory (USS)", "B", False)
    if name in _CPU_TIMES:
        return MetricInfo(metric, f"{prefix}{_CPU_TIMES[name]}", "s", False)
    if name in _COUNTS:
        label, higher = _COUNTS[name]
        return MetricInfo(metric, f"{prefix}{label}", "", higher)
    if name == "requests_per_s":
        return MetricInfo(metric, f"{prefix}requests/s", "1/s", True)
    if direction == "cpu":
        return MetricInfo(metric, f"CPU {name}", "%", False)
    if name == "bytes_per_s":
        return MetricInfo(metric, f"{prefix}bytes per second", "B/s", True)
    if name.endswith("_per_s"):
        return MetricInfo(metric, f"{prefix}{name.replace('_', ' ')}", "1/s", True)
    if name in {"wall", "user", "sys"} or name.endswith("_s"):
        return MetricInfo(metric, f"{prefix}{name} time", "s", False)
    return MetricInfo(metric, metric, "", True)


# Short names accepted by --metric (issue: "--metric iops|bw|lat-p99|...").
def metric_matches(alias: str, metric: str) -> bool:
    """``iops`` matches read.iops and write.iops; ``lat-p99`` matches read.lat_p99; a full
    name matches itself."""
    alias = alias.strip().lower().replace("-", "_")
    if alias == metric:
        return True
    return split_metric(metric)[1] == alias


def headline_metrics(workload: Workload, available: Iterable[str]) -> list[str]:
    """The numbers people quote for a workload (its kind chose them, kinds/), then what
    they cost the host (COST_METRICS): those present."""
    present = set(available)
    chosen = [m for m in workload.description.headline if m in present]
    return chosen + [m for m in COST_METRICS if m in present and m not in chosen]
