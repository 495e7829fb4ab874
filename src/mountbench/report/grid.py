"""The summary grid every format leads with, like CrystalDiskMark's one screen:
workloads as rows with read and write side by side, targets as columns, one unit per
metric family (bandwidth in MB/s, IOPS, latency in µs, time in one of s/ms/µs).

- Pairing: workloads that differ in direction alone share a line ("SEQ 1M Q8 read" and
  "SEQ 1M Q8 write" become "SEQ 1M Q8"). Only the workloads' descriptions are read: one
  direction each, a title that names it, and the same block size, working set and duration
  bound; anything else keeps a line of its own. A workload that moves both directions
  (randrw) fills both columns of its line.
- Unit: ``auto`` shows each workload's headline metrics (bandwidth for large blocks, IOPS
  for small ones, wall time for trees), grouped into one section per family; ``MB/s``,
  ``IOPS`` or ``us`` show that family for every workload that has it.

Pure: RunData and summaries in, a Grid out. Renderers only format it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mountbench import model
from mountbench.analysis.metrics import describe, split_metric
from mountbench.analysis.summary import Row, RunSummary, summarize_runs, workloads_of
from mountbench.errors import UsageError
from mountbench.model import RunData
from mountbench.report.phrasing import sig3
from mountbench.units import format_count

UNIT_CHOICES = ("auto", "MB/s", "IOPS", "us")
_UNIT_ALIASES = {
    "auto": "auto",
    "mb/s": "MB/s",
    "mbs": "MB/s",
    "mb": "MB/s",
    "bw": "MB/s",
    "iops": "IOPS",
    "us": "us",
    "µs": "us",
    "usec": "us",
    "lat": "us",
    "latency": "us",
}
_FAMILY_OF_UNIT = {"MB/s": "bw", "IOPS": "iops", "us": "lat_mean"}
DIRECTIONS = ("read", "write", "trim")
_DIRECTION_WORDS = {
    "read": {"read", "reads", "randread", "seqread"},
    "write": {"write", "writes", "randwrite", "seqwrite"},
    "trim": {"trim", "randtrim"},
}


def unit_name(unit: str) -> str:
    """A unit as the output says it: µs, not us (issue 37)."""
    return "µs" if unit == "us" else unit


def parse_unit(text: str | None) -> str:
    """``--unit`` as given (MB/s, mbs, IOPS, us, µs, auto) → one of UNIT_CHOICES."""
    if text is None:
        return "auto"
    found = _UNIT_ALIASES.get(text.strip().lower())
    if found is None:
        raise UsageError(f"unknown --unit {text!r}; use MB/s, IOPS, µs (or us: mean latency) or auto")
    return found


@dataclass(frozen=True)
class Scale:
    """The one unit of a grid section: values are divided by ``divisor`` and shown bare."""

    name: str  # "MB/s", "IOPS", "µs", "s", ...
    divisor: float
    counting: bool = False  # IOPS and rates: 12.3k rather than 12300

    def format(self, value: float) -> str:
        scaled = value / self.divisor
        return format_count(scaled) if self.counting else sig3(scaled)


@dataclass(frozen=True)
class GridLine:
    """One line of the grid: a workload (or a read/write pair of them) and its row per direction."""

    title: str
    rows: dict[str, Row]  # direction ("" for a metric without one) -> row

    def row(self, direction: str) -> Row | None:
        return self.rows.get(direction)


@dataclass(frozen=True)
class GridSection:
    """Lines whose numbers share one metric family and one unit."""

    family: str  # "bw", "iops", "lat_mean", "wall", ...
    heading: str  # "bandwidth, MB/s (higher is better)"
    scale: Scale
    higher_is_better: bool
    directions: tuple[str, ...]  # ("read", "write"), or ("",) for metrics without a direction
    lines: tuple[GridLine, ...]


@dataclass(frozen=True)
class Grid:
    unit: str  # one of UNIT_CHOICES
    sections: tuple[GridSection, ...]

    def rows(self) -> list[Row]:
        """Every row the grid shows, in reading order (section by section, line by line)."""
        return [
            line.rows[d]
            for section in self.sections
            for line in section.lines
            for d in section.directions
            if d in line.rows
        ]


def build_grid(runs: Sequence[RunData], headline: RunSummary, unit: str = "auto") -> Grid:
    """``headline`` is the summary of every workload's headline metrics (summarize_runs without
    metrics); other units summarise their own family on top of it."""
    rows = {(row.workload, row.metric.name): row for row in headline.rows}
    chosen = _chosen_metrics(runs, headline, unit)
    missing = {(w, m) for w, metrics in chosen.items() for m in metrics if (w, m) not in rows}
    if missing:
        names = sorted({m for _, m in missing})
        extra = summarize_runs(runs, baseline=headline.baseline, metrics=names, only={w for w, _ in missing})
        rows.update(
            {(row.workload, row.metric.name): row for row in extra.rows if (row.workload, row.metric.name) in missing}
        )
    picked: list[tuple[model.Workload, Row]] = []
    for workload in workloads_of(runs):
        for metric in chosen.get(workload.name, ()):
            row = rows.get((workload.name, metric))
            if row is not None:
                picked.append((workload, row))
    return Grid(unit, tuple(_sections(picked)))


def _chosen_metrics(runs: Sequence[RunData], headline: RunSummary, unit: str) -> dict[str, list[str]]:
    """Workload name -> the metrics its grid line shows."""
    chosen: dict[str, list[str]] = {}
    for row in headline.rows:
        chosen.setdefault(row.workload, []).append(row.metric.name)
    family = _FAMILY_OF_UNIT.get(unit)
    if family is None:
        return chosen
    available = _measured_metrics(runs)
    for workload in workloads_of(runs):
        wanted = _wanted(workload, family)
        present = [m for m in wanted if m in available.get(workload.name, set())]
        if present:
            chosen[workload.name] = present
    return chosen


def one_unit(runs: Sequence[RunData], unit: str, metrics: Sequence[str] = ()) -> str:
    """The unit a one-screen summary uses: the one asked for; else MB/s when every workload
    measured bandwidth in each of its directions (CrystalDiskMark's one unit), else auto."""
    if unit != "auto" or metrics:
        return unit
    available = _measured_metrics(runs)
    for workload in workloads_of(runs):
        wanted = _wanted(workload, _FAMILY_OF_UNIT["MB/s"])
        if workload.name in available and (not wanted or not set(wanted) <= available[workload.name]):
            return "auto"
    return "MB/s" if available else "auto"


def _measured_metrics(runs: Sequence[RunData]) -> dict[str, set[str]]:
    """Workload name -> every metric a successful sample of it measured."""
    available: dict[str, set[str]] = {}
    for run in runs:
        for sample in run.samples:
            if sample.ok:
                available.setdefault(sample.workload, set()).update(sample.metrics)
    return available


def _wanted(workload: model.Workload, family: str) -> list[str]:
    """The metrics of ``family`` (e.g. "iops") in each of the workload's directions."""
    return [f"{d}.{family}" for d in workload.description.directions if d in DIRECTIONS]


def _sections(picked: Sequence[tuple[model.Workload, Row]]) -> list[GridSection]:
    families: dict[str, list[tuple[model.Workload, Row]]] = {}
    for workload, row in picked:
        families.setdefault(_family(row.metric.name), []).append((workload, row))
    sections = []
    for family, members in families.items():
        lines = _pair(members)
        if not any(len(line.rows) > 1 for line in lines):  # nothing paired: one value column
            lines = [GridLine(line.title, {"": next(iter(line.rows.values()))}) for line in lines]
        directions = tuple(d for d in (*DIRECTIONS, "") if any(d in line.rows for line in lines))
        metric = members[0][1].metric
        scale = _scale(
            family, metric.unit, [c.summary.median for _, r in members for c in r.cells.values() if c.summary]
        )
        better = "higher is better" if metric.higher_is_better else "lower is better"
        label = _family_label(family, metric.label)
        heading = f"{label} ({better})" if label == scale.name else f"{label}, {scale.name} ({better})"
        if family == "error":
            heading = "workloads without a successful sample (see the notes)"
        sections.append(GridSection(family, heading, scale, metric.higher_is_better, directions, tuple(lines)))
    return sections


def _family(metric: str) -> str:
    """'read.bw' -> 'bw'; 'wall' -> 'wall'; 'host.cpu_s' -> 'host.cpu_s' (not a direction)."""
    direction, name = split_metric(metric)
    return name if direction in DIRECTIONS else metric


def _direction(metric: str) -> str:
    direction, _ = split_metric(metric)
    return direction if direction in DIRECTIONS else ""


def _rate_name(family: str) -> str:
    """'files_per_s' -> 'files/s'."""
    name = family.rpartition(".")[2]
    return name[: -len("_per_s")].replace("_", " ") + "/s" if name.endswith("_per_s") else "per second"


def _family_label(family: str, label: str) -> str:
    names = {"bw": "bandwidth", "iops": "IOPS", "lat_mean": "mean latency"}
    if family in names:
        return names[family]
    if family.endswith("_per_s"):
        return _rate_name(family)
    if family.startswith("lat_p"):
        return f"latency p{family[len('lat_p') :]}"
    return describe(family).label if family in {"wall", "user", "sys"} else label


def _scale(family: str, unit: str, values: Sequence[float]) -> Scale:
    if unit == "B/s":
        return Scale("MB/s", 1e6)
    if unit == "IOPS":
        return Scale("IOPS", 1.0, counting=True)
    if unit == "1/s":
        return Scale(_rate_name(family), 1.0, counting=True)
    if unit == "s":
        if family.startswith("lat_"):
            return Scale("µs", 1e-6)
        peak = max(values, default=1.0)
        for divisor, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
            if peak >= divisor:
                return Scale(name, divisor)
        return Scale("ns", 1e-9)
    if unit == "B":
        peak = max(values, default=1.0)
        for power, name in ((3, "GiB"), (2, "MiB"), (1, "KiB")):
            if peak >= 1024**power:
                return Scale(name, 1024.0**power)
        return Scale("bytes", 1.0)
    return Scale(unit or "value", 1.0)


def _pair(members: Sequence[tuple[model.Workload, Row]]) -> list[GridLine]:
    """Lines of one family: read/write twins share a line (see the module doc)."""
    lines: list[tuple[tuple, str, dict[str, Row]]] = []
    titles = {workload.name: workload.title for workload, _ in members}
    for workload, row in members:
        direction = _direction(row.metric.name)
        key = _pair_key(workload, direction)
        for line_key, _title, cells in lines:
            if key is not None and line_key == key and direction not in cells:
                cells[direction] = row
                break
            if line_key == ("workload", workload.name) and direction not in cells:
                cells[direction] = row  # a randrw workload: both directions on its own line
                break
        else:
            title = key[1] if key is not None else workload.title
            lines.append((key if key is not None else ("workload", workload.name), title, {direction: row}))
    # a line that found no twin keeps its workload's own title
    return [GridLine(title if len(cells) > 1 else titles[next(iter(cells.values())).workload], cells)
            for _, title, cells in lines]  # fmt: skip


def _pair_key(workload: model.Workload, direction: str) -> tuple | None:
    """What a read/write twin must share, or None when the workload pairs with nothing."""
    description = workload.description
    if not direction or len(description.directions) != 1 or description.directions[0] != direction:
        return None
    words = workload.title.split()
    kept = [w for w in words if w.lower().strip("(),") not in _DIRECTION_WORDS[direction]]
    if len(kept) == len(words) or not kept:
        return None  # the title does not name its direction: it is not one of a pair
    return ("pair", " ".join(kept), description.block_size, description.space_bytes, description.duration_bound_s)
