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
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from mountbench import model
from mountbench.analysis import plausible, quality, stats
from mountbench.analysis.family import Family, decide_family
from mountbench.analysis.metrics import MetricInfo, describe, headline_metrics, metric_matches
from mountbench.analysis.multiclient import CLIENTS_LEFT_OUT, comparable
from mountbench.analysis.reach import reach
from mountbench.analysis.stats import (
    CONFIDENCE,
    Comparison,
    Summary,
    compare,
    look_share,
    paired_compare,
    precision_of,
    same_share,
    summarize,
)
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

    @property
    def drifted(self) -> bool:
        return any(c.code in (model.DRIFT, model.MACHINE_DRIFT) for c in self.caveats)


@dataclass(frozen=True)
class Row:
    workload: str
    title: str
    metric: MetricInfo
    cells: dict[str, Cell]


ComparisonKey = tuple[str, str, str]  # (workload, metric, target): one comparison with the baseline


@dataclass(frozen=True)
class RunSummary:
    run_ids: tuple[str, ...]
    targets: tuple[str, ...]
    baseline: str
    rows: tuple[Row, ...]
    # every comparison of the table with the baseline, decided as one family (family.py); the cells carry the same
    family: Family[ComparisonKey] = dataclasses.field(default_factory=lambda: decide_family({}), compare=False)


def summarize_runs(
    runs: Sequence[RunData],
    *,
    baseline: str | None = None,
    metrics: Sequence[str] = (),
) -> RunSummary:
    """Build the table. ``metrics`` are aliases (``iops``, ``lat-p99``, full names);
    empty means each workload's headline metrics."""
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
    origins: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in runs:
        for sample in run.samples:
            by_key[(sample.workload, sample.target)].append(sample)
            origins[(sample.workload, sample.target)].add(run.id)
    rows: list[Row] = []
    matched_any = not metrics
    show = f"mountbench show {runs[0].id if len(runs) == 1 else 'RUN'} --samples"
    configs = [run.config for run in runs]
    built: list[tuple[model.Workload, MetricInfo, dict[str, Cell]]] = []
    for workload in workloads_of(runs):
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
    family = _decided_family(built, chosen_baseline, configs, origins)
    odds = Odds(precision_of(configs), max(c.max_repeat for c in configs), family.level_at(configs[0]),
                adaptive=any(c.until is not None for c in configs))  # fmt: skip
    for workload, info, cells in built:
        base = cells[chosen_baseline]
        cells = {
            label: _with_comparison(
                cell,
                base,
                chosen_baseline,
                family.comparisons.get((workload.name, info.name, label)),
                odds,
                info.higher_is_better,
            )
            for label, cell in cells.items()
        }
        rows.append(Row(workload.name, workload.title, info, cells))
    rows = _with_plausibility(rows, runs, samples, targets, chosen_baseline)
    if not matched_any:
        raise UsageError(
            f"no workload in this run has metric {', '.join(metrics)}; try iops, bw, lat-mean, lat-p99 or a full "
            "name such as read.lat_p99.9"
        )
    return RunSummary(tuple(run.id for run in runs), tuple(targets), chosen_baseline, tuple(rows), family)


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
    ok = sorted((s for s in samples if s.ok and metric in s.metrics), key=lambda s: (s.started_at, s.round))
    failed = [s for s in samples if not s.ok]
    # a client lost mid-run: the later samples' aggregate is over fewer clients, another quantity
    # than the earlier ones'. Where a cell has both, its statistics are over all its clients only.
    ok, fewer = comparable(ok)
    left_out: tuple[Caveat, ...] = ()
    if fewer:
        left_out = (Caveat(CLIENTS_LEFT_OUT, f"{fewer} sample(s) that ran on fewer clients than asked are left "
                                             f"out of these statistics (not comparable with those on all); "
                                             f"'{show}' lists them"),)  # fmt: skip
    values = tuple(float(s.metrics[metric]) for s in ok)
    caveats = _merge_caveats(s.caveats for s in samples) + left_out
    summary = summarize(values) if values else None
    if summary is not None:
        rounds = tuple(s.round for s in ok)
        caveats += quality.cell_caveats(summary, values, info, baseline=baseline, show_command=show, rounds=rounds)
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


def _decided_family(
    built: Sequence[tuple[model.Workload, MetricInfo, dict[str, Cell]]],
    baseline: str,
    configs: Sequence[model.RunConfig],
    origins: dict[tuple[str, str], set[str]],
) -> Family[ComparisonKey]:
    """Every ratio of the table to the baseline, paired where one run's design paired it
    (``origins``: the runs each (workload, target)'s samples come from), decided as one family."""
    precision = precision_of(configs)
    found: dict[ComparisonKey, Comparison] = {}
    shares: dict[ComparisonKey, float] = {}
    same_shares: dict[ComparisonKey, float] = {}
    for workload, info, cells in built:
        for label, cell in cells.items():
            if label == baseline:
                continue
            one_run = len(origins[(workload.name, label)] | origins[(workload.name, baseline)]) == 1
            comparison = ratio_to_baseline(cell, cells[baseline], precision, paired_by_design=one_run)
            if comparison is not None:
                key = (workload.name, info.name, label)
                found[key] = comparison
                # an adaptive run's look spends its share of the error (sequential.py); merged runs: the strictest
                shares[key] = min(look_share(config, comparison.n) for config in configs)
                same_shares[key] = min(same_share(config, comparison.n) for config in configs)
    return decide_family(found, shares, same_shares=same_shares)


def pairs_by_round(cell: Cell, base: Cell) -> list[tuple[float, float]] | None:
    """(baseline, value) of each round of ``cell`` when the rounds pair up (no round twice in
    either cell, and a baseline sample in every round of ``cell``), else None. Only the rounds
    are read, never the values: the pairing is the design's."""
    if len(set(cell.rounds)) != len(cell.rounds) or len(set(base.rounds)) != len(base.rounds):
        return None
    by_round = dict(zip(base.rounds, base.values, strict=True))
    if not cell.rounds or any(r not in by_round for r in cell.rounds):
        return None
    return [(by_round[r], value) for r, value in zip(cell.rounds, cell.values, strict=True)]


def ratio_to_baseline(
    cell: Cell, base: Cell, precision: float, *, paired_by_design: bool, level: float = CONFIDENCE
) -> Comparison | None:
    """The cell's ratio to the baseline's cell at ``level`` (before its family decides it). When
    ``paired_by_design`` (both cells from one run) and the rounds pair up (:func:`pairs_by_round`), the
    per-round (paired) and the unpaired (Welch) intervals are both made and the wider is used: pairing
    cancels what hits both sides of a round, but not an effect of the run that repeats in every round. Two
    directories of one tmpfs keep such an effect: where each target's files land in physical memory was one
    (kinds/fiofiles.place_spacer now draws that place every round), and what is left of it is still there.
    Between quiet --until A/A runs on tmpfs, the mean per-round log ratio varied beyond what its rounds
    explain by 6.1 % (sequential) and 1.5 % (4K) before the places were drawn (six runs), 2.4 % and 0.8 %
    after (five runs): a component of the variance one run cannot measure, at the level of the run (Kalibera and
    Jones). With it, the paired interval alone gave a quiet A/A run t = 3.2 at sequential reads (b 1.07x,
    12 rounds) and, before the places were drawn, called 1.04-1.09x different in three workloads of one run;
    the unpaired interval, wider by the run's drift, called none. Pairing still keeps a comparison whose
    rounds drifted together from looking sharper than its samples. Else unpaired. None when no ratio
    exists."""
    if not cell.values or not base.values:
        return None
    unpaired = compare(base.values, cell.values, level, precision)
    pairs = pairs_by_round(cell, base) if paired_by_design else None
    if pairs is None:
        return unpaired
    paired = paired_compare(pairs, level, precision)
    if paired is None or unpaired is None:
        return paired or unpaired
    return paired if _log_span(paired) >= _log_span(unpaired) else unpaired


def _log_span(comparison: Comparison) -> float:
    """How wide an interval is on the log scale (no interval: the widest)."""
    if not comparison.has_interval or comparison.low <= 0:
        return math.inf
    return math.log(comparison.high / comparison.low)


@dataclass(frozen=True)
class Odds:
    """What an undecided comparison's note needs to say what deciding it would take."""

    precision: float
    max_repeat: int
    level_at: Callable[[int], float]  # the family's level for an interval from n rounds
    adaptive: bool  # --until (or a budget) already added rounds: do not advise it again


def _with_comparison(
    cell: Cell,
    base: Cell,
    baseline: str,
    comparison: Comparison | None,
    odds: Odds | None = None,
    higher_is_better: bool = True,
) -> Cell:
    """The cell with its decided comparison (None: no ratio exists) and the caveats of its ratio."""
    if cell.target == baseline or not cell.values or not base.values:
        return cell
    shown = None
    if comparison is not None and comparison.verdict == stats.UNDECIDED and odds is not None:
        found = reach(comparison, odds.precision, odds.max_repeat, odds.level_at)
        per_round = (cell.wall_s or 0.0) + (base.wall_s or 0.0)
        shown = quality.Shown(found, cell.target, baseline, per_round or None, odds.adaptive, higher_is_better)
    extra = quality.ratio_caveats(
        comparison,
        list(zip(cell.rounds, cell.values, strict=True)),
        list(zip(base.rounds, base.values, strict=True)),
        drifted=cell.drifted or base.drifted,
        baseline=baseline,
        shown=shown,
    )
    return dataclasses.replace(cell, comparison=comparison, caveats=cell.caveats + extra)


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


def only_workloads(runs: Sequence[RunData], names: Sequence[str] | set[str]) -> list[RunData]:
    """The runs with only the named workloads: summaries for one view need not cover all."""
    keep = set(names)
    return [
        dataclasses.replace(
            run,
            workloads=tuple(w for w in run.workloads if w.name in keep),
            samples=tuple(s for s in run.samples if s.workload in keep),
        )
        for run in runs
    ]
