"""Every comparison a run can show, decided once: the one family of the run (analysis/family.py) over
every workload, every metric and every target against the baseline.

Views choose what to display (the headline metrics, --unit's family, --metric's, a sweep's points);
none decides: they read the comparison this module decided for the (workload, metric, target) they
show, so one ratio has one verdict and one interval in every table, note, chart and format.

For each comparison: its evidence at the levels of the run's design (analysis/evidence.py: paired
rounds of one run, the runs as a level when merged, Welch with each side's level across runs when
the sides never ran together), its run-level variance from each target's record
(analysis/runlevel.py: calibrated, or its filesystem type's default), its stage (analysis/family.py:
headline metric, host cost, anything else), and whether it is the same measurement as another (a
block size fixes bandwidth/IOPS: one hypothesis). Variances are moderated per kind of metric
(analysis/moderate.py) with the target and the access class (large or small blocks) as the prior's
design.

Pure: RunData in, a Decided out (kept for the last few inputs: every view of one report asks).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.analysis import evidence as ev
from mountbench.analysis.evidence import Evidence, Moderation
from mountbench.analysis.family import COST, HEADLINE, OTHER, Family, decide_family
from mountbench.analysis.metrics import COST_METRICS, split_metric
from mountbench.analysis.multiclient import CLIENTS_LEFT_OUT, comparable
from mountbench.analysis.runlevel import access_class, default_for, level_variance, paired_variance
from mountbench.analysis.stats import look_share, precision_of, same_share
from mountbench.model import Caveat, RunData, RunLevel, Sample, Workload

ComparisonKey = tuple[str, str, str]  # (workload, metric, target): one comparison with the baseline
NOT_COMPARED = ("noise.",)  # what else the machine did: described, never a comparison of the targets
THROUGHPUT = frozenset({"iops", "bw", "bytes", "bytes_per_s", "requests_per_s", "requests"})


@dataclass(frozen=True)
class Decided:
    """The run's family, what borrowing did per kind of metric, and each target's run level (and whether
    it was its own calibration or its filesystem type's default)."""

    family: Family[ComparisonKey]
    moderations: tuple[Moderation, ...] = ()
    run_levels: tuple[tuple[str, RunLevel], ...] = ()  # (target label, what its comparisons used)
    # twin → the comparison it is the same measurement as (bandwidth and IOPS of one job): decided there, at
    # that comparison's stage, so what its note advises is counted at that stage too
    aliases: tuple[tuple[ComparisonKey, ComparisonKey], ...] = ()

    @classmethod
    def empty(cls) -> Decided:
        return cls(decide_family({}))

    def run_level(self, target: str) -> RunLevel | None:
        return dict(self.run_levels).get(target)

    def stage_of(self, key: ComparisonKey) -> int:
        """The stage a comparison was decided at: its twin's, for the same measurement in another unit."""
        source = dict(self.aliases).get(key, key)
        return self.family.stage_of.get(source, HEADLINE)


def usable_samples(samples: Sequence[Sample], metric: str, show: str = "") -> tuple[list[Sample], tuple[Caveat, ...]]:
    """A cell's successful samples with ``metric``, in the order they were taken, and the caveat of those
    left out: a client lost mid-run makes the later samples' aggregate one over fewer clients, another
    quantity (analysis/multiclient.comparable: the rule the per-client figures follow too)."""
    ok = sorted((s for s in samples if s.ok and metric in s.metrics), key=lambda s: (s.started_at, s.round))
    kept, fewer = comparable(ok)
    if not fewer:
        return kept, ()
    listed = f"; '{show}' lists them" if show else ""
    return kept, (
        Caveat(
            CLIENTS_LEFT_OUT,
            f"{fewer} sample(s) that ran on fewer clients than asked are left out of these statistics (not "
            f"comparable with those on all){listed}",
        ),
    )


_CACHE: list[tuple[tuple[RunData, ...], str, Decided]] = []  # the runs themselves: a view asks of the same objects
_CACHE_SIZE = 8


def decide_runs(runs: Sequence[RunData], baseline: str) -> Decided:
    """Every comparison of ``runs`` with ``baseline``, decided as one family."""
    for cached, cached_baseline, found in _CACHE:
        if (
            cached_baseline == baseline
            and len(cached) == len(runs)
            and all(a is b for a, b in zip(cached, runs, strict=True))
        ):
            return found
    found = _decide(runs, baseline)
    _CACHE.append((tuple(runs), baseline, found))
    del _CACHE[:-_CACHE_SIZE]
    return found


def run_levels(runs: Sequence[RunData]) -> dict[str, RunLevel]:
    """Each target's run level: the one its record carries (calibrated or default when it ran), else its
    filesystem type's default (runs stored before run levels were recorded)."""
    levels: dict[str, RunLevel] = {}
    for run in runs:
        for record in run.targets:
            label = record.target.label
            if label in levels:
                continue
            info = record.info
            if info is not None and info.run_level is not None:
                levels[label] = info.run_level
            else:
                levels[label] = default_for(info.fstype if info is not None else "")
    return levels


def stage_of_metric(workload: Workload, metric: str) -> int:
    if metric in workload.description.headline:
        return HEADLINE
    if metric in COST_METRICS:
        return COST
    return OTHER


def moderation_group(metric: str) -> str:
    """Comparisons whose variances share a prior: one kind of metric (throughput in any unit, a latency
    percentile, a time, a CPU figure), whatever its direction."""
    name = split_metric(metric)[1]
    return "throughput" if name in THROUGHPUT else name


def _decide(runs: Sequence[RunData], baseline: str) -> Decided:
    levels = run_levels(runs)
    configs = [run.config for run in runs]
    precision = precision_of(configs)
    by_cell: dict[tuple[str, str], dict[str, list[Sample]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for sample in run.samples:
            if sample.ok:
                by_cell[(sample.workload, sample.target)][run.id].append(sample)
    workloads: dict[str, Workload] = {}
    for run in runs:
        for workload in run.workloads:
            workloads.setdefault(workload.name, workload)
    found: dict[ComparisonKey, Evidence] = {}
    stages: dict[ComparisonKey, int] = {}
    aliases: dict[ComparisonKey, ComparisonKey] = {}
    targets = list(dict.fromkeys(label for run in runs for label in run.target_labels()))
    for name, workload in workloads.items():
        base_runs = by_cell.get((name, baseline), {})
        metrics = sorted({m for samples in base_runs.values() for s in samples for m in s.metrics})
        metrics = [m for m in metrics if not m.startswith(NOT_COMPARED)]
        metrics.sort(key=lambda m: stage_of_metric(workload, m))  # earlier stages first: twins point back
        access = access_class(workload.description)
        for label in targets:
            if label == baseline or (name, label) not in by_cell:
                continue
            seen: list[tuple[tuple[float, ...], ComparisonKey]] = []
            for metric in metrics:
                evidence = _evidence(by_cell[(name, label)], base_runs, metric, levels, label, baseline, access)
                if evidence is None:
                    continue
                key = (name, metric, label)
                found[key] = evidence
                stages[key] = stage_of_metric(workload, metric)
                if evidence.fingerprint and len(evidence.fingerprint) > 1:
                    twin = next((k for f, k in seen if _same_measurement(f, evidence.fingerprint)), None)
                    if twin is None:
                        seen.append((evidence.fingerprint, key))
                    else:
                        aliases[key] = twin
    distinct = {key: e for key, e in found.items() if key not in aliases}
    comparisons, moderations = ev.decide(distinct, precision)
    for key, twin in aliases.items():
        comparisons[key] = comparisons[twin]
    shares = {key: min(look_share(c, max(1, int(comparisons[key].n))) for c in configs) for key in comparisons}
    same = {key: min(same_share(c, max(1, int(comparisons[key].n))) for c in configs) for key in comparisons}
    family = decide_family(comparisons, shares, same_shares=same, stage_of=stages, aliases=aliases)
    used = tuple((label, levels[label]) for label in targets if label in levels)
    return Decided(family, moderations, used, tuple(aliases.items()))


TWIN_TOLERANCE = 1e-6  # per-round log ratios this close are one measurement (fio rounds bandwidth and IOPS apart)


def _same_measurement(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Do two comparisons' per-round log ratios agree round by round (bandwidth and IOPS of one job at one
    block size: fio writes them rounded apart, so exactly equal they are not)?"""
    return len(a) == len(b) and all(abs(x - y) <= TWIN_TOLERANCE for x, y in zip(a, b, strict=True))


def _evidence(
    target_runs: dict[str, list[Sample]],
    base_runs: dict[str, list[Sample]],
    metric: str,
    levels: dict[str, RunLevel],
    label: str,
    baseline: str,
    access: str,
) -> Evidence | None:
    """The comparison's evidence at the levels its samples allow (module doc)."""
    own, base = levels[label], levels[baseline]
    tags = {"group": moderation_group(metric), "labels": (label, access)}
    common = [run for run in target_runs if run in base_runs]
    paired_runs = [pairs for run in common if (pairs := _pairs(target_runs[run], base_runs[run], metric)) is not None]
    if paired_runs and len(paired_runs) == len(common):
        run_var, run_df = paired_variance(own, base, access)
        values = [[(float(b.metrics[metric]), float(t.metrics[metric])) for b, t in pairs] for pairs in paired_runs]
        within = _within([s for pairs in paired_runs for pair in pairs for s in pair], metric)
        if len(values) == 1:
            return ev.paired(values[0], run_var, run_df, within=within, **tags)
        return ev.across_runs(values, run_var, run_df, within=within, **tags)
    values = [float(s.metrics[metric]) for samples in target_runs.values() for s in usable_samples(samples, metric)[0]]
    bases = [float(s.metrics[metric]) for samples in base_runs.values() for s in usable_samples(samples, metric)[0]]
    if len(common) == len(target_runs) == len(base_runs) == 1:
        run_var, run_df = paired_variance(own, base, access)  # one run whose rounds do not pair: its own level
    else:
        run_var, run_df = level_variance(own, base, access)
    return ev.unpaired(bases, values, run_var, run_df, **tags)


def _pairs(target: list[Sample], base: list[Sample], metric: str) -> list[tuple[Sample, Sample]] | None:
    """(baseline, target) samples of every round in which both sides have one usable sample; None when a
    round holds two samples of one side (nothing pairs them by design) or no round has both."""
    own, _ = usable_samples(target, metric)
    theirs, _ = usable_samples(base, metric)
    by_round: dict[int, Sample] = {}
    for sample in theirs:
        if sample.round in by_round:
            return None
        by_round[sample.round] = sample
    rounds = [s.round for s in own]
    if len(set(rounds)) != len(rounds):
        return None
    pairs = [(by_round[s.round], s) for s in own if s.round in by_round]
    if not pairs or any(not math.isfinite(float(s.metrics[metric])) for pair in pairs for s in pair):
        return None
    return pairs


MIN_INTERVALS = 3  # a sample's series of fewer intervals predicts nothing of its noise


def _within(samples: Sequence[Sample], metric: str) -> float:
    """What the samples' own intervals (fio's 100 ms log of the metric: Sample.series) predict the variance
    of one round's log ratio to be, as a log: each side's variance of its sample mean, var(log interval) / k,
    averaged over the rounds, both sides added. nan when a sample has no usable series of the metric. Under
    normal noise a sample's mean and its intervals' spread are independent, so this predicts the rounds'
    spread without being made of it (what the prior's design may follow: moderate.design_matrix)."""
    total = 0.0
    for sample in samples:
        series = [v for v in sample.series.get(metric, ()) if v > 0]
        if len(series) < MIN_INTERVALS:
            return math.nan
        logs = [math.log(v) for v in series]
        mean = sum(logs) / len(logs)
        total += sum((v - mean) ** 2 for v in logs) / (len(logs) - 1) / len(logs)
    if total <= 0:
        return math.nan
    return math.log(2 * total / len(samples))
