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
        return MetricInfo(metric, "host CPU per GiB moved", "s/GiB", False)
    if name == "uss_peak":
        return MetricInfo(metric, f"{prefix}peak memory (USS)", "B", False)
    if name == "cpu_s":
        return MetricInfo(metric, f"{prefix}CPU time", "s", False)
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
    """The numbers people quote for a workload (its kind chose them, kinds/): those present."""
    present = set(available)
    return [m for m in workload.description.headline if m in present]
