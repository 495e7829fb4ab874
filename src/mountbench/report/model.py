"""The report: what every format says, as one record (built once by content.build_report).

- ``Column``: one target column and where it was measured (labels.py names them);
- ``MetricGroup``: the rows of one metric, one table and one bar chart;
- ``PercentileCurve`` (study S4), ``Sweep`` and ``SweepGrid`` (study S3): the views across
  workloads (percentile_curves.py and sweep_discovery.py find them);
- ``Report``: all of it, with the note numbers each cell, comparison and column carries.

Renderers only format a Report; nothing here computes a statistic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mountbench import model
from mountbench.analysis import sequential
from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.noise import noise_of
from mountbench.analysis.summary import Cell, Row, RunSummary
from mountbench.analysis.sweeps import SweepOptimum
from mountbench.model import RunData, TargetInfo
from mountbench.report.grid import Grid
from mountbench.report.phrasing import NOISE, Headline, headlines

if TYPE_CHECKING:  # the type only: picktwo/ reads a Report to make one
    from mountbench.report.picktwo.rows import PickTwo

# Caveats about the statistics rather than the measurement: error bars already show them.
QUALITY_CODES = model.QUALITY_CODES
# Flags about a ratio rather than a value: they sit on the comparison, not on the median.
RATIO_CODES = frozenset({model.WIDE_RATIO, model.RATIO_DRIFT, model.RATIO_STEADY})


@dataclass(frozen=True)
class Column:
    """One target column and where it was measured."""

    label: str  # as shown in every format
    original: str  # the label in its run(s)
    host: str
    run_ids: tuple[str, ...]
    path: str
    info: TargetInfo | None


@dataclass(frozen=True)
class MetricGroup:
    """The rows of one metric: one table and one bar chart."""

    metric: MetricInfo
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class PercentileCurve:
    """Latency percentiles of one workload and direction, one row per percentile."""

    workload: str
    title: str
    direction: str
    percentiles: tuple[float, ...]
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Sweep:
    """Workloads that differ in one swept option alone (bs, iodepth, numjobs or size):
    one table and one chart with one metric in one unit, points in value order."""

    metric: MetricInfo
    option: str  # what was swept
    title: str  # what was swept over: the workload it was made from, or the job file
    settings: str  # what the points share, e.g. "rw=write size=512M ioengine=psync"
    values: tuple[str, ...]  # labels in value order: "4k", "64k", ...
    numbers: tuple[float, ...]
    rows: tuple[Row, ...]  # one per point, same order
    unit: tuple[float, str]  # (divisor, name): every number of this sweep is shown in it
    optima: dict[str, SweepOptimum | None] = field(compare=False)  # per target
    generated: bool = True  # False: recognised in a job file whose sections differ in the option alone
    fixed: str = ""  # the other swept options' values, when this sweep is a line through a grid


@dataclass(frozen=True)
class SweepGrid:
    """Workloads generated over two swept options (several --sweep): a heat map per target.
    ``cells`` maps (row index, column index) to the point's row; a missing point is absent."""

    metric: MetricInfo
    title: str
    settings: str
    row_option: str  # the first --sweep: table rows, the heat map's vertical axis
    row_values: tuple[str, ...]
    row_numbers: tuple[float, ...]
    column_option: str
    column_values: tuple[str, ...]
    column_numbers: tuple[float, ...]
    cells: dict[tuple[int, int], Row] = field(compare=False)
    unit: tuple[float, str] = (1.0, "")
    best: dict[str, tuple[int, int] | None] = field(default_factory=dict, compare=False)  # per target
    clear: dict[str, bool] = field(default_factory=dict, compare=False)  # per target: best beyond noise
    fixed: str = ""  # a third (and further) swept option's values: this grid is one slice

    @property
    def rows(self) -> tuple[Row, ...]:
        return tuple(self.cells[key] for key in sorted(self.cells))


@dataclass(frozen=True)
class Report:
    runs: tuple[RunData, ...]  # with column labels applied
    summary: RunSummary
    columns: tuple[Column, ...]
    groups: tuple[MetricGroup, ...]
    percentiles: tuple[PercentileCurve, ...]
    sweeps: tuple[Sweep, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]  # note k is notes[k - 1]
    marks: dict[tuple[str, str, str], tuple[int, ...]] = field(compare=False)  # (workload, metric, target)
    grids: tuple[SweepGrid, ...] = ()
    grid: Grid = field(default_factory=lambda: Grid("auto", ()), compare=False)  # the summary at a glance
    # (workload, target) → rounds and why no more (sequential.stop_reasons)
    stops: dict[tuple[str, str], sequential.Stop] = field(default_factory=dict, compare=False)
    pick_two: tuple[PickTwo, ...] = field(default=(), compare=False)  # each lab's, of its runs (picktwo/)

    @property
    def adaptive(self) -> bool:
        """Did any run choose its rounds per cell (--until, --budget)?"""
        return any(run.config.until is not None for run in self.runs)

    @property
    def headlines(self) -> list[Headline]:
        """One sentence per compared target over the grid's comparisons."""
        found = headlines(self.grid.rows(), self.summary.targets, self.summary.baseline)
        busy = noise_of(s for run in self.runs for s in run.samples).sentence()
        return [*found, Headline("", busy[0].upper() + busy[1:], NOISE)] if busy else found

    @property
    def busy_brief(self) -> str:
        """The busy machine in a line (`show`'s one screen); '' when it was not busy."""
        return noise_of(s for run in self.runs for s in run.samples).brief()

    @property
    def multi_host(self) -> bool:
        return len({c.host for c in self.columns}) > 1

    def column(self, label: str) -> Column:
        for column in self.columns:
            if column.label == label:
                return column
        raise KeyError(label)

    def cell_marks(self, row: Row, target: str) -> tuple[int, ...]:
        """Notes on a cell's value: its caveats and errors, not the flags about its ratio."""
        cell = row.cells[target]
        ratio_only = {self._number(c.text) for c in cell.caveats if c.code in RATIO_CODES}
        ratio_only -= {self._number(c.text) for c in cell.caveats if c.code not in RATIO_CODES}
        return tuple(n for n in self.marks.get((row.workload, row.metric.name, target), ()) if n not in ratio_only)

    def _number(self, text: str) -> int:
        return self.notes.index(text) + 1 if text in self.notes else 0

    def cited(self, rows: Sequence[Row]) -> list[int]:
        """The note numbers ``rows`` show, on their values and on their comparisons: what a view that shows
        those rows prints as its notes (no note that nothing it shows refers to)."""
        found: set[int] = set()
        for row in rows:
            for target in self.summary.targets:
                if target not in row.cells:
                    continue
                found.update(self.cell_marks(row, target))
                if target != self.summary.baseline:
                    found.update(self.ratio_marks(row, target))
        return sorted(found)

    def column_marks(self, rows: Sequence[Row], target: str) -> list[int]:
        """Note numbers of how a target's cells among ``rows`` were measured (for a column heading)."""
        return sorted({n for row in rows for n in self.measurement_marks(row.cells[target])})

    def measurement_marks(self, cell: Cell) -> tuple[int, ...]:
        """Note numbers of the caveats about how a cell was measured (not its spread); a caveat
        every cell shares has no number (it is said once, among the warnings)."""
        return tuple(sorted({self._number(c.text) for c in cell.caveats if c.code not in QUALITY_CODES} - {0}))

    def ratio_marks(self, row: Row, target: str) -> tuple[int, ...]:
        """A ratio's own flags (too wide to rank, drift the interleaving could not cancel), and
        how both of its sides were measured: the target's and the baseline's caveats."""
        cell = row.cells[target]
        if cell.comparison is None:
            return ()
        own = tuple(self._number(c.text) for c in cell.caveats if c.code in RATIO_CODES)
        both = self.measurement_marks(cell) + self.measurement_marks(row.cells[self.summary.baseline])
        return tuple(sorted(set(own + both) - {0}))


def column_heading(report: Report, label: str) -> str:
    """A target's column as every format names it: 'native (baseline)'."""
    return f"{label} (baseline)" if label == report.summary.baseline else label


def group_heading(group: MetricGroup) -> str:
    """'read IOPS (higher is better)'; the rows summary.py adds for workloads that never
    produced their metric carry the pseudo-metric 'error'."""
    if group.metric.name == "error":
        return "workloads without a successful sample (see the notes)"
    better = "higher is better" if group.metric.higher_is_better else "lower is better"
    return f"{group.metric.label} ({better})"
