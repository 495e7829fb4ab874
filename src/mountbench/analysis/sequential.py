"""Adaptive repetitions (--until, --budget): which comparisons are decided, and how the
intervals keep the confidence they claim when the number of samples depends on the data.

Optional stopping: looking at an interval after every round and stopping once it
excludes 1 would make a nominal 95 % interval cover far less than 95 % of the time.
mountbench looks at a comparison only at a few planned rounds (a group-sequential design:
stats.look_points, --repeat and then half as many rounds again each time: 3, 5, 8, 12 under
the defaults) and spends the 5 % error over those looks (alpha spending with a Bonferroni
bound): the interval at look j of J is computed at level 1 − 0.05 · (1/j) / H_J, H_J = 1 +
1/2 + … + 1/J. These shares add up to 1, so every look of a comparison covers the true ratio
at once with probability ≥ 95 %, and the interval at whichever look stopped it does too. The
first look gets the largest share (48 % of the error under the defaults), because with three
samples a strict level costs the most (the t quantile grows fast at few degrees of freedom)
and most comparisons on different storage are decided there; the last still gets 12 %.
A comparison decided between two looks (its rounds were given to it one by one as others
needed the baseline) samples on to its next look; a run that ends between two looks (the
budget ran out, Ctrl-C) makes its last look where it stopped, with the share of the look it
was heading for.

Why not a look after every round (this module until the fourth wave, 6/(π²k²) at look k): by
round 12 a look had 0.6 % of the error left, its interval needed t ≈ 4 at the family's level,
and "the same within 5 %" was out of reach for any pair whose rounds differ by more than 3 %.

Within a look the run's comparisons are one family (analysis/family.py: Holm's step-down,
each comparison's p-value divided by its look's share), so that the 5 % holds across the
run and not per comparison. A comparison (a target against the baseline, one workload, all
of its headline metrics) is decided when, for each metric, its ratio interval
- excludes 1 (ranked: faster or slower), or
- is shown within ±precision of 1 (the same, as far as matters: the family's own sameness
  tests, which spend their error from the looks of eight rounds on, stats.same_share), or
- is no wider than ±precision (PRECISE: known to the precision, whatever it is; said as
  such, Stop.reason and Comparison.precise, not as "undecided"), at a look where sameness
  was tested: before that it samples on, since stopping it would take away its chance to be
  shown the same (an A/A pair's comparisons are often this narrow by the second look).
Without a baseline to compare with (one target), a cell is decided when the interval of its
geometric mean lies within ±precision of it, under the same error control: Student's t on
the logs with the spread floor (stats.geomean_interval, the statistic ratios use), at its
look's share of the 5 %, shared among the run's cells with two samples or more (Bonferroni:
there is no null to step down from). The median's distribution-free interval cannot serve:
with n ≤ 5 it is [min, max] at 50–94 %, and at the level alpha spending asks of a first look
(97 %) it needs 7 samples, at later looks 13.

Pure: RunData in, decisions out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.analysis.decided import decide_runs
from mountbench.analysis.family import COST, HEADLINE
from mountbench.analysis.stats import DIFFERS, Comparison, geomean_interval, interval_level, is_look
from mountbench.analysis.stats import SAME as STATS_SAME
from mountbench.analysis.summary import Cell, RunSummary, summarize_runs
from mountbench.model import RunConfig, RunData

RANKED = "ranked"
SAME = "same"
PRECISE = "precise"
UNDECIDED = "undecided"
FAILED = "failed"  # no successful sample: more rounds will not decide it


@dataclass(frozen=True)
class Decision:
    workload: str
    target: str  # the compared target (or the only one, without a baseline)
    state: str  # RANKED, SAME, PRECISE, UNDECIDED, FAILED
    rounds: int  # measured samples of the target
    distance: float  # how far from decided: log-width of the interval over the precision's (0 when decided)
    at_look: bool = True  # may the run stop it at these rounds (stats.is_look)? Else it samples on to its next look


def decide(run: RunData, precision: float) -> list[Decision]:
    """One decision per (workload, target) that is compared (every target but the baseline,
    or the single target when there is no other): for each, the run's family's verdicts on the
    comparisons its headline view shows (its headline metrics and what they cost the host)."""
    labels = run.target_labels()
    if len(labels) < 2:
        return decide_summary(summarize_runs([run]), precision, run.config)
    family = decide_runs([run], run.config.baseline).family
    ok: dict[tuple[str, str], int] = defaultdict(int)
    for sample in run.samples:
        ok[(sample.workload, sample.target)] += sample.ok
    by_pair: dict[tuple[str, str], list[Comparison]] = defaultdict(list)
    for (workload, _metric, target), comparison in family.comparisons.items():
        if family.stage_of.get((workload, _metric, target)) in (HEADLINE, COST):
            by_pair[(workload, target)].append(comparison)
    decisions = []
    for workload in run.workloads:
        for target in labels:
            if target == run.config.baseline:
                continue
            n = ok[(workload.name, target)]
            if not n or not ok[(workload.name, run.config.baseline)]:
                states = [(FAILED, 0.0)]
            else:
                states = [_comparison_state(c, precision) for c in by_pair.get((workload.name, target), [])]
                states = states or [(UNDECIDED, math.inf)]
            worst = max(states, key=lambda s: s[1])
            state = UNDECIDED if any(s == UNDECIDED for s, _ in states) else worst[0]
            decisions.append(Decision(workload.name, target, state, n, worst[1], is_look(run.config, n)))
    return decisions


def decide_summary(summary: RunSummary, precision: float, config: RunConfig | None = None) -> list[Decision]:
    """:func:`decide` over a comparison table already made. ``config``: the run's, which a single
    target's cells need for the share of the error their look may spend; None: a fixed-size
    run's (every cell at its first and only look). Comparisons with a baseline carry their
    levels already (the summary's family)."""
    compared = [t for t in summary.targets if t != summary.baseline] or [summary.baseline]
    alone = compared == [summary.baseline]
    alone_family = sum(1 for row in summary.rows if len(row.cells[summary.baseline].values) >= 2) if alone else 0
    found: dict[tuple[str, str], list[tuple[str, float]]] = {}
    rounds: dict[tuple[str, str], int] = {}
    for row in summary.rows:
        for target in compared:
            cell = row.cells[target]
            key = (row.workload, target)
            rounds[key] = cell.summary.n if cell.summary else 0
            state = _alone_state(cell, precision, config, alone_family) if alone else _compared_state(cell, precision)
            found.setdefault(key, []).append(state)
    decisions = []
    for (workload, target), states in found.items():
        worst = max(states, key=lambda s: s[1])
        state = UNDECIDED if any(s == UNDECIDED for s, _ in states) else worst[0]
        n = rounds[(workload, target)]
        decisions.append(Decision(workload, target, state, n, worst[1], config is None or is_look(config, n)))
    return decisions


def _alone_state(cell: Cell, precision: float, config: RunConfig | None, family: int) -> tuple[str, float]:
    if cell.summary is None:
        return FAILED, 0.0
    interval = geomean_interval(cell.values, interval_level(config, len(cell.values), family))
    if interval is None:
        return UNDECIDED, math.inf
    center, low, high = interval
    margin = math.log1p(precision)
    half = max(math.log(high / center), math.log(center / low))
    return (PRECISE, 0.0) if half <= margin else (UNDECIDED, half / margin)


def _compared_state(cell: Cell, precision: float) -> tuple[str, float]:
    """The family's verdict on the cell's comparison (analysis/decided.py decided it)."""
    if cell.summary is None:
        return FAILED, 0.0
    return _comparison_state(cell.comparison, precision)


def _comparison_state(comparison: Comparison | None, precision: float) -> tuple[str, float]:
    if comparison is None or math.isnan(comparison.low) or comparison.low <= 0:
        return UNDECIDED, math.inf
    if comparison.verdict == DIFFERS:
        return RANKED, 0.0
    if comparison.verdict == STATS_SAME:
        return SAME, 0.0
    half = math.log(comparison.high / comparison.low) / 2
    margin = math.log1p(precision)
    if half <= margin:
        return PRECISE, 0.0
    return UNDECIDED, max(half / margin, 1.0)


def pairs_to_sample(decisions: Sequence[Decision], baseline: str) -> list[tuple[str, str]]:
    """(target, workload) pairs of the next round: every undecided target, every decided one whose
    rounds are not one of --until's looks (it may stop only at a look: it samples on to the next),
    and the baseline of each workload that has one (a ratio needs both sides from the same rounds)."""
    pairs: list[tuple[str, str]] = []
    for decision in decisions:
        if decision.state == FAILED or (decision.state != UNDECIDED and decision.at_look):
            continue
        pairs.append((decision.target, decision.workload))
        if decision.target != baseline and (baseline, decision.workload) not in pairs:
            pairs.append((baseline, decision.workload))
    return pairs


# Why a cell got the rounds it got (reports say it next to the count).
FIXED = "fixed"  # no --until: --repeat rounds for every cell
MAX_REPEAT = "max-repeat"  # still undecided at --max-repeat rounds
BUDGET = "budget"  # still undecided when --budget ran out
INTERRUPTED = "interrupted"  # the run stopped before the cell was decided
BASELINE = "baseline"  # sampled alongside the comparisons that needed it

STOP_WORDS = {
    RANKED: "its ratio interval excludes 1",
    SAME: "shown within the precision of 1 (the same)",
    PRECISE: "its interval is no wider than ±precision but neither excludes 1 nor was it shown within ±precision "
    "of 1: known to the precision",
    FAILED: "no successful sample",
    FIXED: "a fixed number of rounds (--repeat)",
    MAX_REPEAT: "still undecided at --max-repeat",
    BUDGET: "still undecided when the budget ran out",
    INTERRUPTED: "the run stopped first",
    BASELINE: "sampled in every round a comparison with it needed",
}


@dataclass(frozen=True)
class Stop:
    rounds: int  # measured samples that count (successful)
    reason: str  # one of STOP_WORDS


def stop_reasons(summary: RunSummary, config: RunConfig, status: str) -> dict[tuple[str, str], Stop]:
    """(workload, target) → how many rounds the cell got and why it got no more. Pure:
    recomputed from the samples with the rule the run used (decide_summary)."""
    cells = {(row.workload, t): row.cells[t] for row in summary.rows for t in summary.targets}
    rounds = {key: (cell.summary.n if cell.summary else 0) for key, cell in cells.items()}
    if config.until is None:
        return {key: Stop(n, FIXED if n or cells[key].summary else FAILED) for key, n in rounds.items()}
    decided = {(d.workload, d.target): d for d in decide_summary(summary, config.until, config)}
    stops: dict[tuple[str, str], Stop] = {}
    for key, n in rounds.items():
        decision = decided.get(key)
        if decision is None:
            reason = BASELINE
        elif decision.state != UNDECIDED:
            reason = decision.state
        elif status not in ("complete", "failed"):
            reason = INTERRUPTED
        elif n >= config.max_repeat:
            reason = MAX_REPEAT
        elif config.budget is not None:
            reason = BUDGET
        else:
            reason = MAX_REPEAT  # samples failed along the way: the rounds ran out first
        stops[key] = Stop(n, reason)
    return stops
