"""From stored runs to the comparison table: rows of workload metrics, columns of
targets, each cell a summary with its ratio to the baseline and its caveats.

Paired or unpaired, by design: a cell is compared with the baseline's cell round by
round (stats.paired_compare) when the design paired them, before any value is seen: both
cells come from one run (whose plan runs the targets of a workload back to back in every
round), no round appears twice in either, and every round of the compared target has a
baseline sample (under --until the baseline may have more: rounds it ran for another
target's comparison, left out of this one). Otherwise the samples have nothing that pairs
them (runs merged into one table, a round whose baseline sample failed) and the ratio is
unpaired (stats.compare, Welch on the logs). Comparison.paired says which.

The run's comparisons are one family, decided once (analysis/family.py: Holm's step-down,
one level stated once): RunSummary.family, whose decisions the cells carry. Views must not
re-summarise subsets of the runs to get intervals (a subset is another family, with other
levels): they read this one.

Pure: takes RunData, returns plain dataclasses that reports render.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from mountbench import model
from mountbench.analysis import plausible, quality, stats
from mountbench.analysis.decided import ComparisonKey, Decided, decide_runs, usable_samples
from mountbench.analysis.family import Family
from mountbench.analysis.metrics import MetricInfo, describe, headline_metrics, metric_matches
from mountbench.analysis.reach import Reach, reach
from mountbench.analysis.stats import Comparison, Summary, last_look_share, precision_of, summarize
from mountbench.errors import UsageError
from mountbench.model import Caveat, RunData, Sample


@dataclass(frozen=True)
class Cell:
    target: str
    summary: Summary | None  # None when no sample succeeded
    comparison: Comparison | None  # None for the baseline itself or when no ratio exists
    caveats: tuple[Caveat, ...]
    errors: tuple[str, ...]  # distinct failure messages
    failed: int
    values: tuple[float, ...]  # in the order they were measured
    rounds: tuple[int, ...] = ()  # the round of each value
    wall_s: float | None = None  # the median sample's wall time (what another round of this cell costs)
    # an undecided comparison's reach (analysis/reach.py), as its note says it: the headline says the same
    reach: Reach | None = None

    @property
    def drifted(self) -> bool:
        return any(c.code in (model.DRIFT, model.MACHINE_DRIFT) for c in self.caveats)


@dataclass(frozen=True)
class Row:
    workload: str
    title: str
    metric: MetricInfo
    cells: dict[str, Cell]


@dataclass(frozen=True)
class RunSummary:
    run_ids: tuple[str, ...]
    targets: tuple[str, ...]
    baseline: str
    rows: tuple[Row, ...]
    # every comparison of the runs with the baseline, every metric, decided as one family (decided.py,
    # family.py): the cells carry its decisions, whichever metrics this summary shows
    decided: Decided = dataclasses.field(default_factory=Decided.empty, compare=False)

    @property
    def family(self) -> Family[ComparisonKey]:
        return self.decided.family


def summarize_runs(
    runs: Sequence[RunData],
    *,
    baseline: str | None = None,
    metrics: Sequence[str] = (),
    only: Collection[str] | None = None,
) -> RunSummary:
    """Build the table. ``metrics`` are aliases (``iops``, ``lat-p99``, full names);
    empty means each workload's headline metrics. ``only``: the workloads whose rows a view wants (all when
    None); the comparisons are the runs' one family either way (a view never decides a subset again)."""
    targets = _target_columns(runs)
    if not targets:
        raise UsageError("the run has no targets to report")
    chosen_baseline = baseline or _configured_baseline(runs) or targets[0]
    if chosen_baseline not in targets:
        raise UsageError(
            f"baseline {chosen_baseline!r} is not a target of this run; choose one of: {', '.join(targets)}"
        )
    samples = [s for run in runs for s in run.samples]
    by_key: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for run in runs:
        for sample in run.samples:
            by_key[(sample.workload, sample.target)].append(sample)
    rows: list[Row] = []
    matched_any = not metrics
    show = f"mountbench show {runs[0].id if len(runs) == 1 else 'RUN'} --samples"
    configs = [run.config for run in runs]
    decided = decide_runs(runs, chosen_baseline)
    family = decided.family
    built: list[Built] = []
    for workload in workloads_of(runs):
        if only is not None and workload.name not in only:
            continue
        available = sorted({m for s in samples if s.workload == workload.name and s.ok for m in s.metrics})
        if metrics:
            names = [m for m in available if any(metric_matches(alias, m) for alias in metrics)]
            matched_any = matched_any or bool(names)
        else:
            names = headline_metrics(workload, available) or _fallback_metrics(by_key, workload.name)
        for name in names:
            info = describe(name)
            cells = {
                label: _cell(label, by_key.get((workload.name, label), []), info, label == chosen_baseline, show)
                for label in targets
            }
            built.append((workload, info, cells))
    repeat = min(c.repeat for c in configs)
    max_repeat = max(c.max_repeat for c in configs)
    adaptive = any(c.until is not None for c in configs)
    built = _with_drift_flags(built, chosen_baseline, show)
    for workload, info, cells, ratio_tests, threshold in built:
        base = cells[chosen_baseline]
        done = {}
        for label, cell in cells.items():
            key = (workload.name, info.name, label)
            level_last = _advised_level(family, decided.stage_of(key), repeat)
            odds = Odds(precision_of(configs), max_repeat, level_last, adaptive=adaptive)
            comparison = family.comparisons.get(key)
            done[label] = _with_comparison(cell, base, chosen_baseline, comparison, odds, info.higher_is_better,
                                           ratio_tests.get(label), threshold)  # fmt: skip
        cells = done
        rows.append(Row(workload.name, workload.title, info, cells))
    rows = _with_plausibility(rows, runs, samples, targets, chosen_baseline)
    if not matched_any:
        raise UsageError(
            f"no workload in this run has metric {', '.join(metrics)}; try iops, bw, lat-mean, lat-p99 or a full "
            "name such as read.lat_p99.9"
        )
    return RunSummary(tuple(run.id for run in runs), tuple(targets), chosen_baseline, tuple(rows), decided)


def _advised_level(family: Family[ComparisonKey], stage: int, repeat: int) -> Callable[[int], float]:
    """n → the level the last look of `--until P% --max-repeat n` would test at in this family's stage."""
    step = family.step_alphas.get(stage, family.alpha)
    return lambda n: 1 - step * last_look_share(repeat, n)


def _with_plausibility(
    rows: list[Row], runs: Sequence[RunData], samples: Sequence[Sample], targets: Sequence[str], baseline: str
) -> list[Row]:
    """The rows with the caveats of numbers that cannot be what they claim (analysis/plausible.py)."""
    fstypes = {r.target.label: r.info.fstype for run in runs for r in run.targets if r.info is not None}
    values = {(row.workload, row.metric.name, t): cell.values for row in rows for t, cell in row.cells.items()}
    by_cell = plausible.write_faster_than_read(values, workloads_of(runs), targets)
    latencies: dict[tuple[str, str], list[float]] = defaultdict(list)
    for sample in samples:
        if sample.ok:
            found = [v for m, v in sample.metrics.items() if m.endswith(".lat_mean") and v > 0]
            if found:
                latencies[(sample.workload, sample.target)].append(min(found))
    medians = {key: float(sorted(v)[len(v) // 2]) for key, v in latencies.items()}
    by_cell |= plausible.below_mount_latency(medians, fstypes)
    by_metric = plausible.faster_than_ram(values, targets, baseline, fstypes)
    if not by_cell and not by_metric:
        return rows
    out = []
    for row in rows:
        cells = {}
        for label, cell in row.cells.items():
            extra = [by_cell.get((row.workload, label)), by_metric.get((row.workload, row.metric.name, label))]
            added = tuple(c for c in extra if c is not None and c not in cell.caveats)
            cells[label] = dataclasses.replace(cell, caveats=cell.caveats + added) if added else cell
        out.append(dataclasses.replace(row, cells=cells))
    return out


def _fallback_metrics(by_key: dict[tuple[str, str], list[Sample]], workload: str) -> list[str]:
    """A workload whose every sample failed still gets a row, so its errors show."""
    if any(key[0] == workload for key in by_key):
        return ["error"]
    return []


def _cell(label: str, samples: list[Sample], info: MetricInfo, baseline: bool, show: str) -> Cell:
    metric = info.name
    ok, left_out = usable_samples(samples, metric, show)
    failed = [s for s in samples if not s.ok]
    values = tuple(float(s.metrics[metric]) for s in ok)
    caveats = _merge_caveats(s.caveats for s in samples) + left_out
    summary = summarize(values) if values else None
    walls = sorted(s.wall_s for s in ok if s.wall_s)
    return Cell(
        target=label,
        summary=summary,
        comparison=None,
        caveats=caveats,
        errors=tuple(dict.fromkeys(s.error for s in failed)),
        failed=len(failed),
        values=values,
        rounds=tuple(s.round for s in ok),
        wall_s=walls[len(walls) // 2] if walls else None,
    )


@dataclass(frozen=True)
class Odds:
    """What an undecided comparison's note needs to say what deciding it would take."""

    precision: float
    max_repeat: int
    level_last: Callable[[int], float]  # the level the advised command's last look at n rounds tests at
    adaptive: bool  # --until (or a budget) already added rounds: do not advise it again


Built = tuple[model.Workload, MetricInfo, dict[str, Cell]]


def _with_drift_flags(
    built: Sequence[Built], baseline: str, show: str
) -> list[tuple[model.Workload, MetricInfo, dict[str, Cell], dict[str, quality.DriftTests], float]]:
    """Each cell with its flags of change over the run (a step, a trend, a cold start) and each comparison's
    per-round ratio tests, all judged at one false-discovery threshold over the summary's cells
    (quality.discovery_threshold): testing each at 5 % flagged drift in 28 % of a stationary run's cells."""
    tests: dict[tuple[int, str], quality.DriftTests] = {}
    ratios: dict[tuple[int, str], quality.DriftTests] = {}
    for index, (_, _, cells) in enumerate(built):
        base = cells[baseline]
        for label, cell in cells.items():
            if cell.summary is None:
                continue
            tests[(index, label)] = quality.drift_tests(cell.values)
            if label != baseline and base.values:
                ratios[(index, label)] = quality.ratio_tests(
                    list(zip(cell.rounds, cell.values, strict=True)), list(zip(base.rounds, base.values, strict=True))
                )
    threshold = quality.discovery_threshold([p for t in (*tests.values(), *ratios.values()) for p in t.p_values])
    out = []
    for index, (workload, info, cells) in enumerate(built):
        flagged = {}
        for label, cell in cells.items():
            if cell.summary is None:
                flagged[label] = cell
                continue
            extra = quality.cell_caveats(
                cell.summary, cell.values, info, baseline=label == baseline, show_command=show, rounds=cell.rounds,
                tests=tests[(index, label)], threshold=threshold,
            )  # fmt: skip
            flagged[label] = dataclasses.replace(cell, caveats=cell.caveats + extra)
        ratio_of = {label: found for (i, label), found in ratios.items() if i == index}
        out.append((workload, info, flagged, ratio_of, threshold))
    return out


def _with_comparison(
    cell: Cell,
    base: Cell,
    baseline: str,
    comparison: Comparison | None,
    odds: Odds | None = None,
    higher_is_better: bool = True,
    ratio_tests: quality.DriftTests | None = None,
    threshold: float = quality.FDR,
) -> Cell:
    """The cell with its decided comparison (None: no ratio exists) and the caveats of its ratio."""
    if cell.target == baseline or not cell.values or not base.values:
        return cell
    shown = None
    found = None
    if comparison is not None and comparison.verdict == stats.UNDECIDED and odds is not None:
        found = reach(comparison, odds.precision, odds.max_repeat, odds.level_last)
        per_round = (cell.wall_s or 0.0) + (base.wall_s or 0.0)
        shown = quality.Shown(found, cell.target, baseline, per_round or None, odds.adaptive, higher_is_better)
    extra = quality.ratio_caveats(
        comparison,
        list(zip(cell.rounds, cell.values, strict=True)),
        list(zip(base.rounds, base.values, strict=True)),
        drifted=cell.drifted or base.drifted,
        baseline=baseline,
        shown=shown,
        tests=ratio_tests,
        threshold=threshold,
    )
    return dataclasses.replace(cell, comparison=comparison, caveats=cell.caveats + extra, reach=found)


def _merge_caveats(groups: Iterable[Iterable[Caveat]]) -> tuple[Caveat, ...]:
    return tuple(dict.fromkeys(c for group in groups for c in group))


def _target_columns(runs: Sequence[RunData]) -> list[str]:
    labels: list[str] = []
    for run in runs:
        for label in run.target_labels():
            if label not in labels:
                labels.append(label)
    return labels


def _configured_baseline(runs: Sequence[RunData]) -> str | None:
    for run in runs:
        if run.config.baseline:
            return run.config.baseline
    return None


def workloads_of(runs: Sequence[RunData]) -> list[model.Workload]:
    """Every workload of the runs once, by name, in the order they first appear."""
    seen: dict[str, model.Workload] = {}
    for run in runs:
        for workload in run.workloads:
            seen.setdefault(workload.name, workload)
    return list(seen.values())
