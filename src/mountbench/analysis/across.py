"""A run against an earlier run of the same workloads (`run --against`): regressed, improved, within
the threshold, or undecided.

An earlier run is not a paired round: nothing that hit one run's rounds hit the other's. Each side's
samples are its own group (Welch on the logs, evidence.unpaired), and the run is a level of variance
of its own: each target's level moves between runs (the machine's state, where the files landed) by
its ``level`` spread (analysis/runlevel.py: calibrated by `mountbench calibrate`, else its filesystem
type's default), so the ratio's variance carries both sides' (runlevel.level_variance):

    se² = s_then²/n_then + s_now²/n_now + τ²_then + τ²_now.

More rounds shrink the first two terms, never the last two: with the defaults (a tmpfs's level moves
±8–15 % a run) no number of rounds shows a tmpfs within ±10 % of its last run, and an undecided
comparison says so instead of promising rounds.

Where the store holds earlier runs of the same storage, measured the same way (MIN_SHOWN or more),
they show how far its level really moved between runs, under the conditions it was run in (a busy
machine moves it far more than a quiet one): the variance of their mean log values beyond what their
samples explain (DerSimonian and Laird's moment estimate), with runs − 1 degrees of freedom. It is
used when it is larger than the record's, as evidence.across_runs takes the larger of the prior's run
level and what the runs show, and each output says so.

Every (workload, headline metric, target) is one comparison; together they are one family
(family.decide_family: Holm's step-down at 5 %, differences and sameness apart), with the threshold
as the precision. Verdicts, with the threshold T:
- *regressed* / *improved*: called different (the interval excludes 1) and the estimate lies beyond
  ±T, worse / better (by the metric's direction);
- *within the threshold*: shown the same within ±T (two one-sided tests), or called different with
  the estimate inside ±T (a real change too small to matter, as criterion.rs's "change within noise
  threshold");
- *undecided*: neither; it says the bound the interval did show and what would decide it.

Pure: runs in, an Against out.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mountbench.analysis import evidence as ev
from mountbench.analysis.comparable import signature
from mountbench.analysis.decided import moderation_group, usable_samples
from mountbench.analysis.family import decide_family
from mountbench.analysis.metrics import describe
from mountbench.analysis.reach import Reach, reach
from mountbench.analysis.runlevel import access_class, default_for, level_variance
from mountbench.analysis.stats import Comparison
from mountbench.model import RunData, RunLevel, TargetRecord, Workload

DEFAULT_THRESHOLD = 0.10  # without --fail-on: a change smaller than ±10 % is within the threshold
REGRESSED, IMPROVED, UNDECIDED, NO_DATA = "regressed", "improved", "undecided", "no data"
WITHIN = "within the threshold"
VERDICTS = (REGRESSED, IMPROVED, WITHIN, UNDECIDED, NO_DATA)

Key = tuple[str, str, str]  # (workload, metric, target in the run)


@dataclass(frozen=True)
class Pair:
    """A target of the run and the target of the baseline it is compared with. ``renamed``: the
    baseline's label when it differs; ``across``: what differs in their storage when the user paired
    them across storage ('' when they measured the same path and filesystem)."""

    target: str
    baseline: str
    across: str = ""

    @property
    def renamed(self) -> bool:
        return self.target != self.baseline


@dataclass(frozen=True)
class Outcome:
    """One (workload, headline metric, target) against the baseline."""

    target: str
    baseline_target: str
    workload: str
    title: str
    metric: str
    verdict: str  # one of VERDICTS
    comparison: Comparison | None  # now over then (the family's decision and interval); None: no data
    then: tuple[float, ...]  # the baseline's samples (the metric's values)
    now: tuple[float, ...]
    how: str = ""  # within the threshold: "shown the same" or "a real change, within it"; no data: why
    reach: Reach | None = None  # undecided: what its interval bounds, what would decide it
    shown_runs: int = 0  # the run level came from this many earlier runs of the storage (0: the targets' records)

    @property
    def higher_is_better(self) -> bool:
        return describe(self.metric).higher_is_better


@dataclass(frozen=True)
class Against:
    """A run decided against a baseline run."""

    run_id: str
    baseline_id: str
    threshold: float
    pairs: tuple[Pair, ...]
    outcomes: tuple[Outcome, ...]
    size: int  # comparisons in the family (with an interval)
    levels: tuple[tuple[str, RunLevel, RunLevel], ...] = ()  # (target, its run level now, the baseline's)

    def of(self, verdict: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.verdict == verdict]

    @property
    def regressed(self) -> list[Outcome]:
        return self.of(REGRESSED)

    def cases(self) -> dict[tuple[str, str], list[Outcome]]:
        """(target, workload) -> its outcomes (one per headline metric), in the run's order."""
        found: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
        for outcome in self.outcomes:
            found[(outcome.target, outcome.workload)].append(outcome)
        return dict(found)


def level_of(record: TargetRecord) -> RunLevel:
    """The run level a target's record carries (calibrated or default when it ran), else its filesystem
    type's default (runs stored before run levels were recorded)."""
    info = record.info
    if info is not None and info.run_level is not None:
        return info.run_level
    return default_for(info.fstype if info is not None else "")


MIN_SHOWN = 3  # earlier runs of a storage, at least, before their spread says how far its level moves
Earlier = Mapping[str, Sequence[tuple[RunData, str]]]  # a baseline target -> (run, its label there) of its storage


def shown_level(
    runs: Sequence[tuple[RunData, str]], workload: Workload, metric: str
) -> tuple[float, float, int] | None:
    """(the variance of one target's level between runs, its degrees of freedom, the runs) as ``runs`` of one
    storage show it for ``workload``'s ``metric``: their mean logs' variance less the mean of their squared
    standard errors, at least 0 (DerSimonian–Laird). Runs whose workload had other options, or with fewer
    than two usable samples, are left out; None with fewer than MIN_SHOWN runs left."""
    means, errors = [], []
    wanted = signature(workload)
    for run, label in runs:
        own = next((w for w in run.workloads if w.name == workload.name), None)
        if own is None or signature(own) != wanted:
            continue
        samples = [s for s in run.samples if s.target == label and s.workload == workload.name]
        logs = [math.log(float(s.metrics[metric])) for s in usable_samples(samples, metric)[0]
                if float(s.metrics[metric]) > 0]  # fmt: skip
        if len(logs) < 2:
            continue
        means.append(statistics.fmean(logs))
        errors.append(statistics.variance(logs) / len(logs))
    if len(means) < MIN_SHOWN:
        return None
    return max(0.0, statistics.variance(means) - statistics.fmean(errors)), len(means) - 1.0, len(means)


def decide_against(
    run: RunData,
    baseline: RunData,
    pairs: Sequence[Pair],
    threshold: float = DEFAULT_THRESHOLD,
    earlier: Earlier | None = None,
) -> Against:
    """Every (workload, headline metric, paired target) of ``run`` against ``baseline``'s samples of the
    paired target, decided as one family at ``threshold`` (module doc). ``earlier``: the stored runs of
    each baseline target's storage, measured as it was (the baseline among them), from which its level's
    movement between runs is read where they show more than the records say."""
    records = {r.target.label: r for r in run.targets}
    base_records = {r.target.label: r for r in baseline.targets}
    base_workloads = {w.name for w in baseline.workloads}
    evidence: dict[Key, ev.Evidence] = {}
    cells: dict[Key, tuple[Pair, str, tuple[float, ...], tuple[float, ...], str]] = {}
    shown: dict[Key, int] = {}
    for pair in pairs:
        own, theirs = level_of(records[pair.target]), level_of(base_records[pair.baseline])
        for workload in run.workloads:
            if workload.name not in base_workloads:
                continue
            now_samples = [s for s in run.samples if s.target == pair.target and s.workload == workload.name]
            then_samples = [s for s in baseline.samples if s.target == pair.baseline and s.workload == workload.name]
            access = access_class(workload.description)
            run_var, run_df = level_variance(own, theirs, access)
            for metric in _headline(workload.description.headline, now_samples, then_samples):
                now = tuple(float(s.metrics[metric]) for s in usable_samples(now_samples, metric)[0])
                then = tuple(float(s.metrics[metric]) for s in usable_samples(then_samples, metric)[0])
                key = (workload.name, metric, pair.target)
                why = _missing(now, then)
                cells[key] = (pair, workload.title, then, now, why)
                tags = {"group": moderation_group(metric), "labels": (pair.target, access)}
                level, level_df = run_var, run_df
                history = shown_level((earlier or {}).get(pair.baseline, ()), workload, metric)
                if history is not None and not pair.across and 2 * history[0] > level:  # both sides' levels
                    level, level_df, shown[key] = 2 * history[0], history[1], history[2]
                found = None if why else ev.unpaired(then, now, level, level_df, **tags)
                if found is not None:  # spreads alike in kind: moderated together, as a run's are
                    evidence[key] = dataclasses.replace(found, moderate=found.df > 0)
    comparisons, _ = ev.decide(evidence, threshold)
    family = decide_family(comparisons)
    margin = math.log1p(threshold)
    outcomes = []
    for key, (pair, title, then, now, why) in cells.items():
        workload, metric, target = key
        decided = family.comparisons.get(key)
        if decided is None:
            outcomes.append(Outcome(target, pair.baseline, workload, title, metric, NO_DATA, None, then, now,
                                    why or "no ratio (a value of 0)"))  # fmt: skip
            continue
        verdict, how, bound = _verdict(decided, key in family.different, key in family.same, margin, metric)
        if verdict == UNDECIDED and decided.has_interval:
            bound = reach(decided, threshold, run.config.max_repeat)
        outcomes.append(Outcome(target, pair.baseline, workload, title, metric, verdict, decided, then, now, how,
                                bound, shown.get(key, 0)))  # fmt: skip
    levels = tuple((p.target, level_of(records[p.target]), level_of(base_records[p.baseline])) for p in pairs)
    return Against(run.id, baseline.id, threshold, tuple(pairs), tuple(outcomes), family.size, levels)


def _headline(headline: Sequence[str], now: Sequence, then: Sequence) -> list[str]:
    """The workload's headline metrics either side measured (a metric neither has is no comparison)."""
    present = {m for s in [*now, *then] if s.ok for m in s.metrics}
    return [m for m in headline if m in present]


def _missing(now: Sequence[float], then: Sequence[float]) -> str:
    if not then:
        return "no sample in the baseline"
    if not now:
        return "no sample in this run (every one failed)"
    return ""


def _verdict(
    comparison: Comparison, different: bool, same: bool, margin: float, metric: str
) -> tuple[str, str, Reach | None]:
    if not comparison.has_interval:
        return UNDECIDED, "one sample a side gives no interval", None
    estimate = math.log(comparison.ratio)
    if different and abs(estimate) > margin:
        worse = (estimate < 0) == describe(metric).higher_is_better
        return (REGRESSED if worse else IMPROVED), "", None
    if different:
        return WITHIN, "a real change, within the threshold", None
    if same:
        return WITHIN, "shown within the threshold (two one-sided tests)", None
    return UNDECIDED, "", None
