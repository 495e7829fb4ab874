"""What every report format says, worked out once from the runs.

- Columns: one per target; when the runs come from more than one host every
  column is named ``label@host``, so a column always says where it was measured.
  The same label, host and path in several runs is one column (samples pooled).
- Summaries: the comparison table (summary.summarize_runs), latency percentile
  curves (study S4) and bandwidth against block size when the workloads form a
  sweep (study S3). Statistics come from summary/stats; nothing here computes any.
- Warnings: hosts that differ in ways that matter (fio, kernel, CPU, RAM),
  workloads defined differently in merged runs, runs that did not complete.
- Notes: caveats and errors numbered once, in reading order (the summary grid
  first), so Markdown, HTML, CSV and the charts all use the same numbers. A cell's
  marks sit on its value; a ratio's marks (its own flags and how both sides were
  measured) sit on the comparison.
- The answer first: the summary grid (grid.py) and one headline per compared target
  (phrasing.headlines).

Pure: RunData in, Report out; renderers only format a Report.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from mountbench import model
from mountbench.analysis import sequential
from mountbench.analysis.drift import ALPHA, MIN_CHANGE
from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.stats import CONFIDENCE, OUTLIER_Z, clearly_best, peak_and_knee
from mountbench.analysis.summary import Cell, Row, RunSummary, only_workloads, summarize_runs
from mountbench.errors import UsageError
from mountbench.fio.sweeps import fixed_options
from mountbench.fio.sweeps import label as sweep_label
from mountbench.model import Caveat, RunData, TargetInfo
from mountbench.report.cells import Footnotes
from mountbench.report.grid import Grid, build_grid
from mountbench.report.phrasing import Headline, headlines
from mountbench.units import format_bytes, format_seconds

# Caveats about the statistics rather than the measurement: error bars already show them.
QUALITY_CODES = model.QUALITY_CODES
# Flags about a ratio rather than a value: they sit on the comparison, not on the median.
RATIO_CODES = frozenset({model.WIDE_RATIO, model.RATIO_DRIFT, model.RATIO_STEADY})

# Host facts whose difference makes numbers from two hosts hard to compare.
HOST_FACTS = (
    ("fio_version", "fio version"),
    ("kernel", "kernel"),
    ("cpu_model", "CPU"),
    ("cpu_count", "CPU count"),
    ("ram_bytes", "RAM"),
    ("os", "OS"),
)

MIN_SWEEP_POINTS = 3


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
class SweepOptimum:
    """One target's best point along a sweep and its knee, read from the medians."""

    peak: int  # index into the sweep's points
    knee: int  # the smallest value reaching 90 % of the peak (stats.peak_and_knee)
    clear: bool = True  # no other point's interval reaches the peak's (stats.clearly_best)


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

    @property
    def block_sizes(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.numbers)


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

    @property
    def adaptive(self) -> bool:
        """Did any run choose its rounds per cell (--until, --budget)?"""
        return any(run.config.until is not None for run in self.runs)

    @property
    def headlines(self) -> list[Headline]:
        """One sentence per compared target over the grid's comparisons."""
        return headlines(self.grid.rows(), self.summary.targets, self.summary.baseline)

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


def build_report(
    runs: Sequence[RunData], *, baseline: str | None = None, metrics: Sequence[str] = (), unit: str = "auto"
) -> Report:
    """Everything a report shows. Raises UsageError for a bad baseline or a metric no run has.
    ``unit`` chooses the summary grid's family (grid.UNIT_CHOICES)."""
    if not runs:
        raise UsageError("no runs to report; give a run id or --from FILE.json")
    runs = unique_runs(runs)
    labelled, columns = label_columns(runs)
    summary = summarize_runs(labelled, baseline=_resolve_baseline(baseline, columns), metrics=metrics)
    grid = build_grid(labelled, summary, unit)  # --metric drives the summary at a glance and the headline
    groups = group_by_metric(summary)
    curves = percentile_curves(labelled, summary.baseline, metrics)
    found = find_sweeps(labelled, summary.baseline)
    sweeps = (*found.sweeps, *found.grids)
    shared = shared_caveats(_noted_rows(groups, curves, sweeps, grid.rows()), summary.targets)
    notes, marks = number_notes(groups, curves, sweeps, summary.targets, first=grid.rows(), shared=shared)
    return Report(
        runs=tuple(labelled),
        summary=summary,
        columns=tuple(columns),
        groups=groups,
        percentiles=curves,
        sweeps=found.sweeps,
        warnings=tuple(
            host_warnings(runs)
            + workload_warnings(runs)
            + status_warnings(runs)
            + list(found.warnings)
            + [f"every value: {text}" for text in shared]
        ),
        notes=tuple(notes),
        marks=marks,
        grids=found.grids,
        grid=grid,
        stops=stop_reasons(runs, columns),
    )


def stop_reasons(runs: Sequence[RunData], columns: Sequence[Column]) -> dict[tuple[str, str], sequential.Stop]:
    """Each run's cells by the rule that run used, keyed by the report's column labels."""
    stops: dict[tuple[str, str], sequential.Stop] = {}
    for run in runs:
        shown = {c.original: c.label for c in columns if run.id in c.run_ids}
        try:
            summary = summarize_runs([run])
        except UsageError:  # its baseline is another run's target: compare within the run itself
            summary = summarize_runs([run], baseline=run.targets[0].target.label)
        for (workload, target), stop in sequential.stop_reasons(summary, run.config, run.status).items():
            stops[(workload, shown.get(target, target))] = stop
    return stops


def rounds_rows(report: Report) -> list[tuple[str, list[str]]]:
    """(workload title, per target 'N · reason') for the rounds table of an adaptive report."""
    rows = []
    for workload in dict.fromkeys(row.workload for row in report.summary.rows):
        title = next(row.title for row in report.summary.rows if row.workload == workload)
        cells = []
        for target in report.summary.targets:
            stop = report.stops.get((workload, target))
            cells.append(f"{stop.rounds} · {stop.reason}" if stop else "–")
        rows.append((title, cells))
    return rows


def rounds_legend(report: Report) -> str:
    """What the reasons in the rounds table mean, for the ones it uses."""
    used = dict.fromkeys(stop.reason for stop in report.stops.values())
    return "; ".join(f"{reason}: {sequential.STOP_WORDS[reason]}" for reason in used)


def unique_runs(runs: Sequence[RunData]) -> list[RunData]:
    """The same run named twice (a store id and an exported file) counts once."""
    seen: dict[str, RunData] = {}
    for run in runs:
        seen.setdefault(run.id, run)
    return list(seen.values())


# --- columns and hosts ----------------------------------------------------------------


def host_names(runs: Sequence[RunData]) -> dict[str, str]:
    """Run id -> host name; two different machines sharing a hostname get -2, -3 suffixes."""
    prints: dict[str, tuple] = {run.id: _host_fingerprint(run) for run in runs}
    by_name: dict[str, list[tuple]] = defaultdict(list)
    for run in runs:
        name = str(run.host.get("hostname") or "?")
        if prints[run.id] not in by_name[name]:
            by_name[name].append(prints[run.id])
    names = {}
    for run in runs:
        name = str(run.host.get("hostname") or "?")
        index = by_name[name].index(prints[run.id])
        names[run.id] = name if index == 0 else f"{name}-{index + 1}"
    return names


def _host_fingerprint(run: RunData) -> tuple:
    return (str(run.host.get("hostname", "")), *(str(run.host.get(key, "")) for key, _ in HOST_FACTS))


def label_columns(runs: Sequence[RunData]) -> tuple[list[RunData], list[Column]]:
    """Relabel targets so that each column is one (label, host, path); see the module doc."""
    hosts = host_names(runs)
    multi_host = len(set(hosts.values())) > 1
    keys: dict[tuple[str, str, str], list[str]] = {}
    for run in runs:
        for record in run.targets:
            keys.setdefault((record.target.label, hosts[run.id], record.target.path), []).append(run.id)
    display = _display_labels(keys, multi_host)
    columns = []
    for key, run_ids in keys.items():
        label, host, path = key
        info = next(r.info for run in runs if run.id == run_ids[0] for r in run.targets if r.target.label == label)
        columns.append(Column(display[key], label, host, tuple(run_ids), path, info))
    relabelled = [
        _relabel(run, {r.target.label: display[(r.target.label, hosts[run.id], r.target.path)] for r in run.targets})
        for run in runs
    ]
    return relabelled, columns


def _display_labels(keys: dict[tuple[str, str, str], list[str]], multi_host: bool) -> dict[tuple[str, str, str], str]:
    display = {key: f"{key[0]}@{key[1]}" if multi_host else key[0] for key in keys}
    counts = Counter(display.values())
    for key, run_ids in keys.items():
        if counts[display[key]] > 1:  # same label and host, different paths: name the run
            display[key] = f"{display[key]}@{run_ids[0]}"
    return display


def _relabel(run: RunData, names: dict[str, str]) -> RunData:
    if all(old == new for old, new in names.items()):
        return run
    targets = tuple(
        dataclasses.replace(r, target=dataclasses.replace(r.target, label=names[r.target.label])) for r in run.targets
    )
    samples = tuple(dataclasses.replace(s, target=names.get(s.target, s.target)) for s in run.samples)
    config = run.config
    if config.baseline in names:
        config = dataclasses.replace(config, baseline=names[config.baseline])
    return dataclasses.replace(run, targets=targets, samples=samples, config=config)


def _resolve_baseline(baseline: str | None, columns: Sequence[Column]) -> str | None:
    """Accept a column label, or a run's own label when it names one column only."""
    if baseline is None or any(c.label == baseline for c in columns):
        return baseline
    matches = [c.label for c in columns if c.original == baseline]
    if len(matches) > 1:
        raise UsageError(f"--baseline {baseline!r} names several columns; choose one of: {', '.join(matches)}")
    return matches[0] if matches else baseline


def host_warnings(runs: Sequence[RunData]) -> list[str]:
    """One sentence per host fact that differs between the merged runs' hosts."""
    hosts = host_names(runs)
    facts_by_host = {hosts[run.id]: run.host for run in runs}
    if len(facts_by_host) < 2:
        return []
    warnings = []
    for key, name in HOST_FACTS:
        values = {host: _fact_text(key, facts.get(key)) for host, facts in facts_by_host.items()}
        if len(set(values.values())) > 1:
            listed = "; ".join(f"{host}: {value}" for host, value in values.items())
            warnings.append(f"hosts differ in {name} ({listed}): compare their columns with care")
    return warnings


def _fact_text(key: str, value: object) -> str:
    if value in (None, ""):
        return "unknown"
    if key == "ram_bytes":
        return format_bytes(float(value))  # type: ignore[arg-type]
    return str(value)


def workload_warnings(runs: Sequence[RunData]) -> list[str]:
    """A workload name whose description (every option, as its kind describes it) differs between
    runs is not one workload."""
    specs: dict[str, dict[str, object]] = defaultdict(dict)
    for run in runs:
        for workload in run.workloads:
            specs[workload.name].setdefault(repr((workload.kind, workload.description.to_dict())), run.id)
    return [
        f"workload {name!r} is defined differently in runs {', '.join(by_spec.values())}: its cells mix different work"
        for name, by_spec in specs.items()
        if len(by_spec) > 1
    ]


def status_warnings(runs: Sequence[RunData]) -> list[str]:
    return [
        f"run {run.id} failed: every sample failed; each cell shows its error"
        if run.status == "failed"
        else f"run {run.id} is {run.status}: some cells may have fewer samples; 'mountbench run --resume {run.id}' "
        "completes it"
        for run in runs
        if run.status != "complete"
    ]


# --- grouping and notes ---------------------------------------------------------------------


def group_by_metric(summary: RunSummary) -> tuple[MetricGroup, ...]:
    """Rows grouped per metric, metrics in order of first appearance."""
    grouped: dict[str, list[Row]] = {}
    infos: dict[str, MetricInfo] = {}
    for row in summary.rows:
        grouped.setdefault(row.metric.name, []).append(row)
        infos[row.metric.name] = row.metric
    return tuple(MetricGroup(infos[name], tuple(rows)) for name, rows in grouped.items())


def group_heading(group: MetricGroup) -> str:
    """'read IOPS (higher is better)'; the rows summary.py adds for workloads that never
    produced their metric carry the pseudo-metric 'error'."""
    if group.metric.name == "error":
        return "workloads without a successful sample (see the notes)"
    better = "higher is better" if group.metric.higher_is_better else "lower is better"
    return f"{group.metric.label} ({better})"


def _noted_rows(
    groups: Sequence[MetricGroup], curves: Sequence[PercentileCurve], sweeps: Sequence[Sweep | SweepGrid],
    first: Sequence[Row] = (),
) -> list[Row]:  # fmt: skip
    """Every row whose cells carry note marks, in the order the documents show them."""
    rows = list(first) + [row for group in groups for row in group.rows]
    rows += [row for curve in curves for row in curve.rows]
    return rows + [row for sweep in sweeps for row in sweep.rows]


def shared_caveats(rows: Sequence[Row], targets: Sequence[str]) -> tuple[str, ...]:
    """Caveats about the samples' statistics that every measured cell carries (a 2-repeat run:
    'fewer than 3 samples' on each): said once, not as a [1] on every number. Only where there
    are several cells to share it; a caveat about how a number was measured (buffered, an
    emulated engine) stays next to each number it affects."""
    cells = [row.cells[t] for row in rows for t in targets if row.cells[t].summary is not None]
    if len(cells) < 2:
        return ()
    common = [c.text for c in cells[0].caveats if c.code in QUALITY_CODES]
    for cell in cells[1:]:
        texts = {c.text for c in cell.caveats}
        common = [text for text in common if text in texts]
    return tuple(dict.fromkeys(common))


def number_notes(
    groups: Sequence[MetricGroup],
    curves: Sequence[PercentileCurve],
    sweeps: Sequence[Sweep | SweepGrid],
    targets: Sequence[str],
    *,
    first: Sequence[Row] = (),
    shared: Sequence[str] = (),
) -> tuple[list[str], dict[tuple[str, str, str], tuple[int, ...]]]:
    """Number caveats and errors in the order the document shows them: ``first`` (the
    summary grid's rows), then the tables. ``shared`` caveats (on every cell) get no number."""
    notes = Footnotes.empty()
    marks: dict[tuple[str, str, str], tuple[int, ...]] = {}
    for row in _noted_rows(groups, curves, sweeps, first):
        for label in targets:
            cell = row.cells[label]
            # a ratio's own caveat where no ratio is shown would be a note nothing refers to
            unshown = [c.text for c in cell.caveats if c.code in RATIO_CODES and cell.comparison is None]
            marks[(row.workload, row.metric.name, label)] = tuple(notes.marks(cell, skip=[*shared, *unshown]))
    return notes.texts, marks


def measurement_caveats(report: Report) -> list[Caveat]:
    """Distinct caveats about how numbers were measured, in note order."""
    seen: dict[Caveat, None] = {}
    for row in report.summary.rows:
        for cell in row.cells.values():
            for caveat in cell.caveats:
                if caveat.code not in QUALITY_CODES:
                    seen.setdefault(caveat)
    return sorted(
        (c for c in seen if c.text in report.notes), key=lambda c: report.notes.index(c.text)
    )  # a caveat every cell shares is among the warnings, not a note


# --- percentile curves (S4) ---------------------------------------------------------------


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
    summary = summarize_runs(only_workloads(runs, names), baseline=baseline, metrics=present)
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


# --- sweeps (S3) ------------------------------------------------------------------------------


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
    summary = summarize_runs(only_workloads(runs, names), baseline=baseline, metrics=metrics)
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
    """The workload's options apart from the swept ones (fio.sweeps.fixed_options)."""
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
            optima={t: _optimum(rows, t) for t in targets},
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
        best = {t: _best_cell(cells, t, first_row.metric.higher_is_better) for t in targets}
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
            clear={t: _best_is_clear(cells, best[t], t, first_row.metric.higher_is_better) for t in targets},
            fixed=fixed,
        )
    return None


def _value_label(value: model.SweepValue) -> str:
    """Sizes in fio's binary suffixes whatever the job file wrote (1m -> 1M); counts as numbers."""
    return sweep_label(value.option, value.number)


def _optimum(rows: Sequence[Row], target: str) -> SweepOptimum | None:
    summaries = [row.cells[target].summary for row in rows]
    better = rows[0].metric.higher_is_better if rows else True
    found = peak_and_knee([s.median if s else None for s in summaries], higher_is_better=better)
    if found is None:
        return None
    intervals = [(s.ci_low, s.ci_high) if s else None for s in summaries]
    return SweepOptimum(found[0], found[1], clearly_best(intervals, found[0], higher_is_better=better))


def _best_cell(cells: dict[tuple[int, int], Row], target: str, higher_is_better: bool) -> tuple[int, int] | None:
    keys = sorted(cells)
    found = peak_and_knee(
        [cells[k].cells[target].summary.median if cells[k].cells[target].summary else None for k in keys],
        higher_is_better=higher_is_better,
    )
    return keys[found[0]] if found else None


def _best_is_clear(cells: dict[tuple[int, int], Row], best: tuple[int, int] | None, target: str, higher: bool) -> bool:
    if best is None:
        return False
    keys = sorted(cells)
    summaries = [cells[k].cells[target].summary for k in keys]
    intervals = [(s.ci_low, s.ci_high) if s else None for s in summaries]
    return clearly_best(intervals, keys.index(best), higher_is_better=higher)


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


# --- environment facts shared by the text formats ---------------------------------------------------


def all_workloads(report: Report) -> list[model.Workload]:
    seen: dict[str, model.Workload] = {}
    for run in report.runs:
        for workload in run.workloads:
            seen.setdefault(workload.name, workload)
    return list(seen.values())


def cache_actions(run: RunData) -> list[tuple[str, int]]:
    """What was done about caches before the run's samples, with counts, most frequent first."""
    counts = Counter(s.cache_action or "not recorded" for s in run.samples)
    return counts.most_common()


def run_hosts(report: Report) -> dict[str, dict]:
    """Host name -> host facts, in run order."""
    names = host_names(report.runs)
    return {names[run.id]: run.host for run in report.runs}


def host_of_run(report: Report, run_id: str) -> str:
    return host_names(report.runs)[run_id]


def repetitions(report: Report) -> str:
    """'5', or for adaptive runs 'between 3 and 12' (the rounds table has each cell's count)."""
    values = sorted(
        {
            str(r.config.repeat) if r.config.until is None else f"{r.config.repeat}–{r.config.max_repeat}"
            for r in report.runs
        }
    )
    return ", ".join(values)


def warmup_phrase(report: Report) -> str:
    """', after 1 warm-up round thrown away' when any run warmed up, else ''."""
    counts = sorted({run.config.warmup for run in report.runs})
    if counts == [0]:
        return ""
    plural = "s" if counts != [1] else ""
    return f", after {', '.join(map(str, counts))} warm-up round{plural} thrown away"


FILE_STATE_FACTS = {
    "per-round": "fio working files laid out anew and written fully before each round (the layout is part of "
    "what the rounds replicate)",
    "steady": "fio working files written fully once before round 1 (every round reads the same files)",
    "fresh": "fio working files laid out anew for every sample",
    "reused": "fio working files laid out by the first sample and reused (round 1 may differ)",
}


def run_facts(run: RunData) -> list[str]:
    """How a run was made, as short phrases: repetitions and seed, size and runtime
    overrides, what was asked about caches. Shared by the Markdown and HTML reports."""
    config = run.config
    facts = [f"{config.repeat} repetitions (seed {config.seed})"]
    if config.until is not None:
        budget = f", budget {format_seconds(config.budget)}" if config.budget else ""
        facts = [
            f"{config.repeat}–{config.max_repeat} rounds per cell (--until {config.until:.0%}{budget}; "
            f"seed {config.seed})"
        ]
    if config.warmup:
        facts.append(f"{config.warmup} warm-up round{'s' if config.warmup != 1 else ''} first, not counted")
    if config.size:
        facts.append(f"working set {format_bytes(float(config.size))}")
    if config.runtime:
        facts.append(f"runtime {format_seconds(float(config.runtime))} per fio job")
    facts.append(f"drop caches: {config.drop_caches}")
    facts.append(FILE_STATE_FACTS.get(config.file_state, f"fio working files: {config.file_state}"))
    if run.host.get("fio_clocksource"):
        facts.append(f"fio clocksource: {run.host['fio_clocksource']} (chosen once for every job)")
    return facts


def methodology(report: Report) -> list[str]:
    """How the numbers were made and compared, one paragraph each; every document prints these."""
    seeds = ", ".join(str(run.config.seed) for run in report.runs)
    fio = ", ".join(sorted({str(run.host.get("fio_version") or "?") for run in report.runs}))
    adaptive = adaptive_methodology(report)
    return [
        f"Every (target, workload) pair ran {repetitions(report)} measured times in interleaved rounds"
        f"{warmup_phrase(report)}: each round runs every pair once, in an order shuffled by the seed "
        f"({seeds}), so drift hits every target alike; within a round the targets of one workload run back to "
        "back, so a burst of load tends to hit both sides of a comparison, and take turns going first (one "
        "seeded order, turned by one place each round), so going first or second favours none of them. Unless "
        "--file-state says otherwise, fio's working files are laid out anew before each round, so the "
        "interval covers what differs between two files of one filesystem, not only round-to-round noise.",
        *_methods(report, fio),
        "O_DIRECT is probed on every target with a real aligned write and read; a direct workload on a target "
        "that refuses it runs buffered and its cells say so.",
        "A buffered workload whose working set is under twice the RAM may be served by the page cache and is "
        "marked; as root, caches are dropped before buffered samples, and what was done is recorded per sample.",
        "Median: its interval comes from order statistics (distribution-free) and states the confidence it "
        "really has (75% with 3 samples).",
        "Comparison with the baseline: the ratio of geometric means, with an interval from Welch's t on the "
        'logarithms, said as a factor of at least 1 and the way it goes ("6.20× slower"), with the interval '
        f"turned the same way. A target's comparisons in one table are one claim (its headline), so their "
        f"intervals hold together: each is at 1 − {1 - CONFIDENCE:.2g}/m, m being how many that target makes "
        f"(Bonferroni), and all of them cover their ratios at once with at least {CONFIDENCE:.0%} confidence; "
        "at 95% each, two directories of one filesystem compared in 6 workloads would show some difference in up "
        "to a quarter of runs. Each interval states its level. Three verdicts: faster/slower when the interval "
        "excludes 1; "
        '"≈ same" only when the whole interval lies within ±5% of 1 (an equivalence test; --until\'s precision '
        'when given); "undecided" otherwise (an interval that contains 1 is no evidence of sameness), with '
        'what would decide it, and "too wide to rank" when its ends are more than 100× apart. For the last two '
        "the interval is the target's speed ÷ the baseline's. The headline counts each verdict apart. CSV and "
        "JSON carry the verdict (better, worse, same, undecided, unknown) and the raw ratio (target ÷ baseline "
        "of the metric itself) next to the factor.",
        "Drift: the samples of each cell, in the order they were taken, are tested for a trend (Mann–Kendall, "
        f"p < {ALPHA:g}, and a change of at least {MIN_CHANGE:.0%} from the first rounds to the last); a trend on the "
        "baseline is drift of the machine. Interleaved rounds keep ratios fair under slow drift, which the "
        "per-round ratios show; a trend in them means the drift was too large for that. A first sample far from "
        f"the rest (a cold start) is flagged, and outliers are samples with a modified z-score above {OUTLIER_Z}; "
        "'mountbench show RUN --samples' lists every sample in the order it was taken.",
        *adaptive,
    ]


def _methods(report: Report, fio: str) -> list[str]:
    """How each kind of workload in the report measures, as its kind says (one sentence each)."""
    said = dict.fromkeys(w.description.method for w in all_workloads(report) if w.description.method)
    return [" ".join([*said, f"fio version: {fio}."])]


def adaptive_methodology(report: Report) -> list[str]:
    """How --until/--budget chose the rounds and kept the intervals honest (empty for fixed runs)."""
    adaptive = [run.config for run in report.runs if run.config.until is not None]
    if not adaptive:
        return []
    precision = ", ".join(sorted({f"{c.until:.0%}" for c in adaptive}))
    most = ", ".join(sorted({str(c.max_repeat) for c in adaptive}))
    budget = ", ".join(sorted({format_seconds(c.budget) for c in adaptive if c.budget}))
    return [
        f"Adaptive rounds (--until {precision}, at most {most} rounds"
        + (f", budget {budget}" if budget else "")
        + "): after the first rounds, more interleaved, seeded rounds only for the comparisons not yet "
        "decided, that is whose ratio interval neither excludes 1 (ranked), nor lies within the precision of 1 "
        "(the same), nor is narrower than the precision. Looking after every round would make a 95% interval "
        "cover far less than 95%, so the error is spent over the looks (alpha spending with a Bonferroni "
        "bound): the interval at look k has level 1 − 0.05·6/(π²k²), and these shares add up to under 5% "
        "however many looks there are; a comparison's interval is the one at its last look, and states its "
        "level. The rounds table says how many rounds each cell got and why it stopped.",
    ]
