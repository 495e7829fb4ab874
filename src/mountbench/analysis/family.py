"""One family of comparisons per run, over every metric any view or format can show, decided once:
every table, note, chart and format reads the same decision, and no view decides again.

Why one family: a run's headline ("b is slower in all 6 workloads, c the same in 4") is one claim made
of all its comparisons with the baseline. At 95 % each, an A/A run of 6 workloads would call some
difference in up to 26 % of runs; the family-wise error rate (the chance that any comparison of the
run is called different when it is not) is kept at 5 %.

Stages (gatekeeping): what the run is for comes first. A comparison is one (workload, metric, target)
against the baseline; its stage is
  1. the workload's headline metrics (the figures the summary shows: bandwidth or IOPS per direction,
     a tree's time, requests/s);
  2. what serving them cost the host (--watch: CPU, memory);
  3. every other metric (mean latency, percentiles, fio's CPU figures, the other unit of a headline
     figure that is not the same measurement), which --unit and --metric show.
The 5 % is shared out once, 80 % to stage 1 and 10 % to each of the others (a stage with no
comparison gives its share to stage 1). Within a stage, Holm's step-down (1979): the smallest
p-value is tested at the stage's share over its open comparisons, and every rejection leaves the
rest a larger part. A stage that rejects all its comparisons passes its whole share on: to stage 2,
then 3, then back to 1 (a far-apart run decides its latency percentiles with all of the 5 %). This is
a graphical procedure in the sense of Bretz et al. (2009, "A graphical approach to sequentially
rejective multiple test procedures"): Holm within a stage, the limit of ε-weighted edges to the next
stage, and the initial weights above; it controls the family-wise error at 5 % under any dependence
between the comparisons, and its decisions do not depend on the order they are made in.

One measurement, one test: two metrics whose per-round ratios are equal (a fixed block size makes the
bandwidth and IOPS of one job the same measurement) are one hypothesis, decided once, shown in both
units (analysis/summary.py passes such twins as aliases).

Intervals: every interval is shown at the level its stage stopped at (1 − the last per-comparison
share the stage tested with, times its look's share under --until): an interval excludes 1 exactly
when its comparison is called different, in every view. What every format says of them is one
sentence, the family's: the intervals hold for all of the run's comparisons together at 95 %
(:attr:`Family.level`). For the comparisons not called different these are Strassburger and Bretz's
(2008) intervals compatible with a Bonferroni-based procedure; for those called different the claim is
the direction, and the ends are the estimate at that level.

Sameness, a family of its own: "the same within ±5 %" is a claim of another kind (its null: the ratio
lies beyond ±5 %), tested by two one-sided t tests (Schuirmann 1987, stats.equivalence_p), with the
same stages and the same procedure, so that at most 5 % of runs call anything the same that is not.
One comparison cannot be wrong both ways (its true ratio is either exactly 1, where only "different"
can be wrong, or beyond ±5 %, where only "the same" can, or in between, where neither can); a run
mixing exact equality and differences just beyond ±5 % could reach 10 % in all. A comparison called
both different and the same is *different, within ±precision*: a real difference too small to matter
(criterion.rs's "change within noise threshold"). A comparison called the same shows the interval its
tests decided with, at 1 − 2 × its share: within ±precision.

Adaptive runs (--until, a budget): a comparison that stopped at look k may spend only its look's share
of the error (stats.look_share, analysis/sequential.py); its p-value is divided by that share before
the procedure (valid whichever look stopped it: the shares add up to 1), and its interval is computed
at 1 − share × its stage's last share.

Pure: comparisons in, decisions out.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from mountbench.analysis.stats import CONFIDENCE, Comparison, as_same, at_level, equivalence_p, look_share
from mountbench.model import RunConfig

K = TypeVar("K", bound=Hashable)

FAMILY_ALPHA = 1 - CONFIDENCE  # the family-wise error rate: 5 %
HEADLINE, COST, OTHER = 1, 2, 3
STAGES = (HEADLINE, COST, OTHER)
STAGE_SHARES = {HEADLINE: 0.8, COST: 0.1, OTHER: 0.1}
STAGE_WORDS = {HEADLINE: "headline metrics", COST: "host cost", OTHER: "other metrics"}


@dataclass(frozen=True)
class Family(Generic[K]):
    """A run's comparisons, decided together."""

    comparisons: Mapping[K, Comparison]  # each with its decision, its interval at its stage's last share
    different: frozenset[K]  # called different (their intervals exclude 1)
    size: int  # hypotheses with an interval (twins counted once)
    alpha: float = FAMILY_ALPHA
    same: frozenset[K] = frozenset()  # called the same (within ±precision)
    stage_of: Mapping[K, int] = field(default_factory=dict)
    step_alphas: Mapping[int, float] = field(default_factory=dict)  # stage → its last per-comparison share
    same_step_alphas: Mapping[int, float] = field(default_factory=dict)

    @property
    def level(self) -> float:
        """The one level every format states: all of the run's intervals hold together at 1 − alpha."""
        return 1 - self.alpha

    @property
    def step_alpha(self) -> float:
        """The headline stage's last per-comparison share (its intervals' own level is 1 − that)."""
        return self.step_alphas.get(HEADLINE, self.alpha)

    @property
    def within_precision(self) -> frozenset[K]:
        """Called different and the same: a real difference inside ±precision."""
        return self.different & self.same

    def level_at(self, config: RunConfig | None = None, stage: int = HEADLINE) -> Callable[[int], float]:
        """n → the level an interval from n rounds would be computed at in this family's ``stage`` (its
        look's share of the error under ``config``'s --until): what reach.reach plans more rounds with."""
        step = self.step_alphas.get(stage, self.alpha * STAGE_SHARES[stage])
        if config is None:
            return lambda n: 1 - step
        return lambda n: 1 - look_share(config, n) * step


def holm(p_values: Mapping[K, float], alpha: float = FAMILY_ALPHA) -> tuple[frozenset[K], float]:
    """Holm's step-down over ``p_values`` (nan: no test, left out): the rejected keys and the share the
    last step tested at (alpha/(m − r), or the last rejection's when all were rejected)."""
    return staged({key: HEADLINE for key in p_values}, p_values, alpha, {HEADLINE: 1.0})


def staged(
    stage_of: Mapping[K, int],
    p_values: Mapping[K, float],
    alpha: float = FAMILY_ALPHA,
    shares: Mapping[int, float] | None = None,
    steps: dict[int, float] | None = None,
) -> tuple[frozenset[K], float]:
    """The graphical procedure of the module doc over ``p_values`` (nan: not tested) in their stages:
    the rejected keys, and the headline stage's last per-comparison share. ``steps``, when given, gets
    every stage's last per-comparison share."""
    open_by_stage: dict[int, list[tuple[float, K]]] = {}
    for key, p in p_values.items():
        if not math.isnan(p):
            open_by_stage.setdefault(stage_of[key], []).append((p, key))
    for items in open_by_stage.values():
        items.sort(key=lambda item: item[0])
    weights = _initial_weights(alpha, shares or STAGE_SHARES, set(open_by_stage))
    last: dict[int, float] = {}
    rejected: set[K] = set()
    order = sorted(weights)
    changed = True
    while changed:
        changed = False
        for stage in order:
            items = open_by_stage.get(stage)
            while items:
                share = weights[stage] / len(items)
                last[stage] = share
                p, key = items[0]
                if p > share:
                    break
                items.pop(0)
                rejected.add(key)
                changed = True
            if items == [] and weights[stage] > 0:  # exhausted: its weight goes on to the next open stage
                following = [s for s in order[order.index(stage) + 1 :] + order if open_by_stage.get(s)]
                if following:
                    weights[following[0]] += weights[stage]
                    weights[stage] = 0.0
                    changed = True
    if steps is not None:
        steps.update(last)
    return frozenset(rejected), last.get(HEADLINE, alpha)


def _initial_weights(alpha: float, shares: Mapping[int, float], present: set[int]) -> dict[int, float]:
    """Each stage's share of ``alpha``; an empty stage's share goes to the first present stage."""
    weights = {stage: 0.0 for stage in shares}
    first = min(present) if present else min(shares)
    for stage, share in shares.items():
        weights[stage if stage in present else first] += alpha * share
    return weights


def decide_family(
    comparisons: Mapping[K, Comparison],
    shares: Mapping[K, float] | None = None,
    alpha: float = FAMILY_ALPHA,
    same_shares: Mapping[K, float] | None = None,
    stage_of: Mapping[K, int] | None = None,
    aliases: Mapping[K, K] | None = None,
) -> Family[K]:
    """Decide ``comparisons`` (any level: only their estimates, standard errors and p-values are used) as
    one family at family-wise error ``alpha``, for differences and, apart, for sameness. ``shares``: the
    share of the difference error each comparison's look may spend (stats.look_share), ``same_shares`` of
    the sameness error; 1 for all when None (a fixed-size run). ``stage_of``: each comparison's stage
    (HEADLINE when None). ``aliases``: twin → the comparison it is the same measurement as (decided once,
    given the same decision)."""
    aliases = dict(aliases or {})
    stages = {key: (stage_of or {}).get(key, HEADLINE) for key in comparisons}
    tested = {key: c for key, c in comparisons.items() if key not in aliases}
    share = {key: (shares or {}).get(key, 1.0) for key in comparisons}
    same_share = {key: (same_shares or {}).get(key, 1.0) for key in comparisons}
    spent = {key: _spent(c.p_value if c.has_interval else math.nan, share[key]) for key, c in tested.items()}
    steps: dict[int, float] = {}
    different, _ = staged({k: stages[k] for k in tested}, spent, alpha, steps=steps)
    equivalent = {key: _spent(equivalence_p(c), same_share[key]) for key, c in tested.items()}
    same_steps: dict[int, float] = {}
    same, _ = staged({k: stages[k] for k in tested}, equivalent, alpha, steps=same_steps)
    decided: dict[K, Comparison] = {}
    for key in comparisons:
        source = aliases.get(key, key)
        c = comparisons[key]
        stage = stages[source]
        step = steps.get(stage, alpha * STAGE_SHARES[stage])
        if source in same and source not in different:
            decided[key] = as_same(c, same_share[source] * same_steps[stage])
            continue
        shown = at_level(c, 1 - share[source] * step)
        if c.has_interval:
            # the interval's level and the decision agree by construction; twins' floating ends too
            shown = dataclasses.replace(shown, significant=source in different, same=source in same)
        decided[key] = shown
    size = sum(1 for p in spent.values() if not math.isnan(p))
    different_all = frozenset(k for k in comparisons if aliases.get(k, k) in different)
    same_all = frozenset(k for k in comparisons if aliases.get(k, k) in same)
    return Family(decided, different_all, size, alpha, same_all, stages, steps, same_steps)


def _spent(p_value: float, share: float) -> float:
    """A p-value divided by its look's share of the error (nan stays nan; none at a look with no share)."""
    if math.isnan(p_value):
        return math.nan
    return min(1.0, p_value / share) if share > 0 else 1.0
