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


# Metrics by their name after the direction: label, unit, higher is better
_NAMED: dict[str, tuple[str, str, bool]] = {
    "iops": ("IOPS", "IOPS", True),
    "bw": ("bandwidth", "B/s", True),
    "bytes": ("bytes moved", "B", True),
    "lat_mean": ("mean latency", "s", False),
    "cpu_s_per_gib": ("CPU per GiB moved", "s/GiB", False),
    "uss_peak": ("peak memory (USS)", "B", False),
    # CPU time of measured processes (host/watch.py): host.cpu_s, nginx.cpu_s, ...
    "cpu_s": ("CPU time", "s", False),
    "cpu_user_s": ("CPU time, user", "s", False),
    "cpu_sys_s": ("CPU time, system", "s", False),
    # plain counts
    "ctx_voluntary": ("voluntary context switches", "", False),
    "ctx_involuntary": ("involuntary context switches", "", False),
    "errors": ("errors", "", False),
    "requests": ("requests", "", True),
    "requests_per_s": ("requests/s", "1/s", True),
    "bytes_per_s": ("bytes per second", "B/s", True),
    # what else the machine did during a sample (host/noise.py), % of all its CPUs
    "others_cpu": ("CPU used by other processes", "%", False),
    "steal": ("CPU stolen by the hypervisor", "%", False),
}

# What serving a sample cost the host (--watch, the lab): shown with every workload's
# headline metrics when a sample has them, next to the throughput they paid for.
COST_METRICS = ("host.cpu_s", "host.cpu_s_per_gib", "host.uss_peak")


def describe(metric: str) -> MetricInfo:
    direction, name = split_metric(metric)
    prefix = f"{direction} " if direction else ""
    if name in _NAMED:
        label, unit, higher = _NAMED[name]
        return MetricInfo(metric, f"{prefix}{label}", unit, higher)
    if name.startswith("lat_p"):
        return MetricInfo(metric, f"{prefix}latency p{name[5:]}", "s", False)
    if direction == "cpu":
        return MetricInfo(metric, f"CPU {name}", "%", False)
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
