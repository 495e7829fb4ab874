"""Latency percentile curves (study S4): one curve per workload and direction, for workloads
that ask for the percentile view (a long percentile_list) or when --metric names a percentile."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from mountbench import model
from mountbench.analysis.summary import Row, summarize_runs
from mountbench.model import RunData
from mountbench.report.model import (
    PercentileCurve,
)


def percentile_curves(runs: Sequence[RunData], baseline: str, metrics: Sequence[str]) -> tuple[PercentileCurve, ...]:
    """Curves for workloads that ask for the percentile view (a long percentile_list), or for
    every workload when --metric names a latency percentile."""
    wanted_all = any(_is_percentile(m.strip().lower().replace("-", "_")) for m in metrics)
    chosen = [w for run in runs for w in run.workloads if wanted_all or _asks_for_percentiles(w)]
    names = list(dict.fromkeys(w.name for w in chosen))
    if not names:
        return ()
    present = sorted(
        {m for run in runs for s in run.samples if s.ok and s.workload in names for m in s.metrics if _is_percentile(m)}
    )
    if not present:
        return ()
    summary = summarize_runs(runs, baseline=baseline, metrics=present, only=set(names))
    curves = []
    for name in names:
        by_direction: dict[str, list[tuple[float, Row]]] = defaultdict(list)
        for row in summary.rows:
            if row.workload == name:
                direction, _, metric = row.metric.name.partition(".")
                by_direction[direction].append((float(metric[len("lat_p") :]), row))
        for direction, points in by_direction.items():
            points.sort(key=lambda p: p[0])
            if len(points) >= 2:
                curves.append(
                    PercentileCurve(
                        name, points[0][1].title, direction, tuple(p for p, _ in points), tuple(r for _, r in points)
                    )
                )
    return tuple(curves)


def _is_percentile(metric: str) -> bool:
    """read.lat_p99.9 or the alias lat_p99: the part after the first dot (if any) is lat_p…"""
    name = metric.partition(".")[2] if "." in metric and not metric.startswith("lat_p") else metric
    return name.startswith("lat_p")


def _asks_for_percentiles(workload: model.Workload) -> bool:
    return bool(workload.description.percentiles)
