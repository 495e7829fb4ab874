"""Sweeps and grids (study S3) found in the workloads: which points make one sweep, in what
order, under what title and unit. Where each target peaks is statistics (analysis/sweeps.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mountbench import model
from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.summary import Row, summarize_runs
from mountbench.analysis.sweeps import SweepOptimum, best_cell, best_is_clear, fixed_options, optimum
from mountbench.analysis.sweeps import label as sweep_label
from mountbench.model import RunData
from mountbench.report.model import (
    Sweep,
    SweepGrid,
)

MIN_SWEEP_POINTS = 3
MIN_GENERATED_POINTS = 2  # a sweep the user asked for (--sweep, a preset's [sweep]) shows from two points
# how a swept option is named in headings and on axes
OPTION_LABELS = {"bs": "block size", "iodepth": "queue depth", "numjobs": "jobs", "size": "working-set size"}


@dataclass(frozen=True)
class SweepFindings:
    sweeps: tuple[Sweep, ...] = ()
    grids: tuple[SweepGrid, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass
class _Series:
    """Points that make one sweep: same source, group, swept options and everything else."""

    points: list[tuple[model.Workload, model.SweepPoint]] = field(default_factory=list)

    def has(self, point: model.SweepPoint) -> bool:
        return any(p.coordinates == point.coordinates for _, p in self.points)


def find_sweeps(runs: Sequence[RunData], baseline: str) -> SweepFindings:
    """Sweeps (one varying option) and grids (two) from the points the workloads carry.

    Points form one sweep only when they come from the same source and group, sweep the
    same options and agree on every other option their descriptions list, so a user's
    point is never merged with, or replaced by, another run's workload. Two different
    workloads claiming one point are both kept, in separate sweeps, with a warning."""
    series, warnings = sweep_series([w for run in runs for w in run.workloads])
    wanted: list[tuple[list[tuple[model.Workload, model.SweepPoint]], str]] = []
    for points in series:
        for direction_metric in _sweep_metrics(points):
            wanted.append((points, direction_metric))
    available = {m for run in runs for s in run.samples if s.ok for m in s.metrics}
    metrics = sorted({m for _, m in wanted if m in available})
    if not metrics:
        return SweepFindings(warnings=tuple(warnings))
    names = {w.name for points, _ in wanted for w, _ in points}
    summary = summarize_runs(runs, baseline=baseline, metrics=metrics, only=set(names))
    rows = {(row.workload, row.metric.name): row for row in summary.rows}
    sweeps: list[Sweep] = []
    grids: list[SweepGrid] = []
    for points, metric in wanted:
        found = [(w, p, rows[(w.name, metric)]) for w, p in points if (w.name, metric) in rows]
        if not found:
            continue
        for piece in _slices(found):
            made = _sweep_or_grid(piece, summary.targets)
            if isinstance(made, Sweep):
                sweeps.append(made)
            elif isinstance(made, SweepGrid):
                grids.append(made)
    return SweepFindings(tuple(sweeps), tuple(grids), tuple(warnings))


def sweep_series(
    workloads: Sequence[model.Workload],
) -> tuple[list[list[tuple[model.Workload, model.SweepPoint]]], list[str]]:
    """The points of each sweep, in order of first appearance, and warnings about points
    two workloads claim. A workload (by name) counts once, as everywhere in a report."""
    by_key: dict[tuple, list[_Series]] = {}
    seen: set[str] = set()
    warnings: list[str] = []
    for workload in workloads:
        point = workload.description.sweep
        if point is None or workload.name in seen or point.option == "clients":  # report/clients.py draws those
            continue
        seen.add(workload.name)
        options = tuple(c.option for c in point.coordinates)
        key = (workload.source, point.group, options, _shared_options(workload, options))
        candidates = by_key.setdefault(key, [])
        home = next((s for s in candidates if not s.has(point)), None)
        if home is None:
            if candidates:
                taken = next(w.name for s in candidates for w, p in s.points if p.coordinates == point.coordinates)
                warnings.append(
                    f"workloads {taken!r} and {workload.name!r} are both the "
                    f"{_coordinates_text(point.coordinates)} point of one sweep ({workload.source}): "
                    "they are shown as separate sweeps"
                )
            home = _Series()
            candidates.append(home)
        home.points.append((workload, point))
    return [s.points for candidates in by_key.values() for s in candidates], warnings


def _shared_options(workload: model.Workload, swept: Sequence[str]) -> tuple[str, ...]:
    """The workload's options apart from the swept ones (analysis.sweeps.fixed_options)."""
    return fixed_options(workload.description.options, swept)


def _coordinates_text(coordinates: Sequence[model.SweepValue]) -> str:
    return ", ".join(f"{c.option}={c.value}" for c in coordinates)


def _sweep_metrics(points: Sequence[tuple[model.Workload, model.SweepPoint]]) -> list[str]:
    """One metric per direction, the same for every point: bandwidth along a block-size
    sweep; otherwise the workload's own headline metric for that direction."""
    first, point = points[0]
    options = {c.option for c in point.coordinates}
    headline = first.description.headline
    metrics: list[str] = []
    for direction in first.description.directions or ("read",):
        if "bs" in options:
            chosen = f"{direction}.bw"
        else:
            own = [m for m in headline if m.startswith(f"{direction}.")]
            plain = [m for m in headline if "." not in m]
            chosen = (own or plain or [f"{direction}.bw"])[0]
        if chosen not in metrics:
            metrics.append(chosen)
    return metrics


_Found = list[tuple[model.Workload, model.SweepPoint, Row]]


def _slices(found: _Found) -> list[_Found]:
    """Options that take one value are fixed; past two varying options (a 3-D grid), every
    combination of the further ones is a slice of its own."""
    varying = _varying(found)
    if len(varying) <= 2:
        return [found]
    pieces: dict[tuple, _Found] = {}
    for item in found:
        coordinates = item[1].coordinates
        pieces.setdefault(tuple(coordinates[i].number for i in varying[2:]), []).append(item)
    return list(pieces.values())


def _varying(found: _Found) -> list[int]:
    count = len(found[0][1].coordinates)
    return [i for i in range(count) if len({item[1].coordinates[i].number for item in found}) > 1]


def _sweep_or_grid(found: _Found, targets: Sequence[str]) -> Sweep | SweepGrid | None:
    workload, point, first_row = found[0]
    varying = _varying(found)[:2]
    fixed = _coordinates_text([c for i, c in enumerate(point.coordinates) if i not in varying])
    least = MIN_GENERATED_POINTS if point.generated else MIN_SWEEP_POINTS
    swept = [c.option for c in point.coordinates]
    settings = _settings(workload, swept)
    title = _sweep_title(workload, point)
    medians = [c.summary.median for _, _, row in found for c in row.cells.values() if c.summary]
    unit = sweep_unit(first_row.metric, medians)
    if len(varying) == 1:
        axis = varying[0]
        ordered = sorted(found, key=lambda item: item[1].coordinates[axis].number)
        if len(ordered) < least:
            return None
        rows = tuple(row for _, _, row in ordered)
        return Sweep(
            metric=first_row.metric,
            option=point.coordinates[axis].option,
            title=title,
            settings=settings,
            values=tuple(_value_label(item[1].coordinates[axis]) for item in ordered),
            numbers=tuple(item[1].coordinates[axis].number for item in ordered),
            rows=rows,
            unit=unit,
            optima={t: _optima(rows, t) for t in targets},
            generated=point.generated,
            fixed=fixed,
        )
    if len(varying) == 2:
        r, c = varying
        row_axis = sorted({(i[1].coordinates[r].number, _value_label(i[1].coordinates[r])) for i in found})
        column_axis = sorted({(i[1].coordinates[c].number, _value_label(i[1].coordinates[c])) for i in found})
        if len(row_axis) < least or len(column_axis) < MIN_GENERATED_POINTS:
            return None
        row_index = {number: k for k, (number, _) in enumerate(row_axis)}
        column_index = {number: k for k, (number, _) in enumerate(column_axis)}
        cells = {
            (row_index[p.coordinates[r].number], column_index[p.coordinates[c].number]): row for _, p, row in found
        }
        higher = first_row.metric.higher_is_better
        summaries = {t: {key: row.cells[t].summary for key, row in cells.items()} for t in targets}
        best = {t: best_cell(summaries[t], higher_is_better=higher) for t in targets}
        return SweepGrid(
            metric=first_row.metric,
            title=title,
            settings=settings,
            row_option=point.coordinates[r].option,
            row_values=tuple(v for _, v in row_axis),
            row_numbers=tuple(n for n, _ in row_axis),
            column_option=point.coordinates[c].option,
            column_values=tuple(v for _, v in column_axis),
            column_numbers=tuple(n for n, _ in column_axis),
            cells=cells,
            unit=unit,
            best=best,
            clear={t: best_is_clear(summaries[t], best[t], higher_is_better=higher) for t in targets},
            fixed=fixed,
        )
    return None


def _value_label(value: model.SweepValue) -> str:
    """Sizes in fio's binary suffixes whatever the job file wrote (1m -> 1M); counts as numbers."""
    return sweep_label(value.option, value.number)


def _optima(rows: Sequence[Row], target: str) -> SweepOptimum | None:
    better = rows[0].metric.higher_is_better if rows else True
    return optimum([row.cells[target].summary for row in rows], higher_is_better=better)


def _settings(workload: model.Workload, swept: Sequence[str]) -> str:
    """The workload's quoted settings without the swept options."""
    return " ".join(t for t in workload.description.summary.split() if t.partition("=")[0] not in swept)


def _sweep_title(workload: model.Workload, point: model.SweepPoint) -> str:
    """Generated: the workload the points were made from; detected: the job file."""
    if point.generated and "@" in workload.name:
        base = workload.name.rpartition("@")[0]
        title = workload.title.rpartition(" (")[0] or workload.title
        return f"{title} ({base}, {workload.source})" if title != base else f"{base} ({workload.source})"
    return f"sections of {workload.source} differing in {point.option} alone"


def sweep_unit(metric: MetricInfo, values: Sequence[float]) -> tuple[float, str]:
    """(divisor, unit name) for every number of one sweep, chosen from its largest value:
    one sweep, one unit (bandwidth in decimal MB/s or GB/s, as format_rate quotes it)."""
    peak = max((abs(v) for v in values), default=0.0)
    scales: dict[str, tuple[tuple[float, str], ...]] = {
        "B/s": ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")),
        "s": ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
        "IOPS": ((1e9, "G IOPS"), (1e6, "M IOPS"), (1e3, "k IOPS"), (1.0, "IOPS")),
        "1/s": ((1e9, "G/s"), (1e6, "M/s"), (1e3, "k/s"), (1.0, "/s")),
    }
    for divisor, name in scales.get(metric.unit, ()):
        if peak >= divisor:
            return divisor, name
    return scales[metric.unit][-1] if metric.unit in scales else (1.0, metric.unit or "value")
