"""One family of comparisons per run, decided once by Holm's step-down procedure, so that
every view, format and chart shows the same decision at the same level.

Why one family: a run's headline ("b is slower in all 6 workloads, c the same in 4") is one
claim made of all its comparisons with the baseline. At 95 % each, an A/A run of 6
workloads calls some difference in up to 26 % of runs; the family-wise error rate (the
chance that any comparison of the run is called different when it is not) is kept at 5 %.
The family is every comparison the run's summary makes with its baseline (every target,
every workload, each headline metric: analysis/summary.py builds it) that has an interval.

Why Holm (1979): Bonferroni tests every one of m comparisons at 5 %/m. Holm tests the
smallest p-value at 5 %/m, the next at 5 %/(m − 1), ... and stops at the first that fails:
the same 5 % family-wise guarantee under any dependence between the comparisons, never
fewer differences found than Bonferroni, and more whenever several are clear (on different
storage most are). The p-values are those of the t statistic of each log ratio (paired or
Welch: stats.py).

One level, stated once: every interval of the family is shown at 1 − 5 %/(m − r), r being
the differences Holm found (95 % when it found all m): the level Holm's last step tested
at. At that level an interval excludes 1 exactly when Holm calls its comparison different,
so a verdict and its interval never disagree. For the comparisons not called different these
are (two-sided) Strassburger and Bretz's (2008) intervals compatible with Holm, so "the same"
and the bound an undecided comparison states (reach.py) hold together with the directions of
the differences in 95 % of runs (tests/analysis/test_family.py simulates it); for the ones
called different the claim is the direction, and the ends are the estimate at that level.

Sameness, a family of its own. "The same within ±5 %" is a claim of another kind: its null is that
the ratio lies beyond ±5 %, tested by two one-sided t tests (Schuirmann 1987, stats.equivalence_p).
The run's comparisons are one family for it too, decided by Holm at 5 %, so that at most 5 % of runs
call anything the same that is not. One comparison cannot be wrong both ways (the partitioning
principle: its true ratio is either exactly 1, where only "different" can be wrong, or beyond
±5 %, where only "the same" can, or in between, where neither can), so a run whose comparisons
are all truly equal (A/A) or all truly far apart makes any wrong claim in at most 5 % of runs; a run
mixing exact equality and differences just beyond ±5 % could reach 10 % in all. What a comparison
called the same shows is the interval its tests decided with, at 1 − 2 × its step's error (it lies
within ±5 %; Family.same_level, stated once). Measured by simulation (tests/analysis/
test_sequential.py): an A/A pair at a per-round spread of 4 % is called the same within ±5 % in 87 %
of comparisons by --until's twelfth round, where requiring the difference family's interval to lie
within ±5 % gave 20 %.

Adaptive runs (--until): a comparison that stopped at look k may spend only its share of the
error (stats.look_share, analysis/sequential.py). Its p-value is divided by that share before
Holm (a p-value that stays valid whichever look stopped it: the shares of all looks add up
to 1), and its interval is computed at 1 − share × 5 %/(m − r). The level stated once is
still the family's (Family.level); each interval's own is on its Comparison.
Sameness spends its 5 % over the looks by its own shares (stats.same_share: none before the
eighth round, where ±5 % cannot be shown at a strict level, equal shares from there), since
each kind of claim may spread its error over the looks as it needs.

Views must not re-summarise subsets of a run to get intervals: a subset is a smaller family
decided at other levels, and one ratio would get two intervals in one report. Every view
reads the family the run's summary computed (RunSummary.family, or the cells it decided).

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


@dataclass(frozen=True)
class Family(Generic[K]):
    """A run's comparisons, decided together."""

    comparisons: Mapping[K, Comparison]  # each with Holm's decision and its interval at the family's level
    different: frozenset[K]  # what Holm called different (their intervals exclude 1)
    adjusted: Mapping[K, float]  # Holm-adjusted p-values (nan without an interval)
    size: int  # m: the comparisons with an interval, the ones the error is shared among
    alpha: float = FAMILY_ALPHA
    same: frozenset[K] = frozenset()  # what the sameness Holm called the same (within ±precision)
    same_adjusted: Mapping[K, float] = field(default_factory=dict)  # its Holm-adjusted p-values

    @property
    def same_alpha(self) -> float:
        """The error the sameness Holm's last rejecting step tested at, 5 %/(m − s + 1) for s called the
        same: every sameness interval is shown at 1 − 2 × that (times its look's share under --until),
        where each lies within ±precision; nan when none was called the same."""
        if not self.same:
            return math.nan
        return self.alpha / max(1, self.size - len(self.same) + 1)

    @property
    def same_level(self) -> float:
        """The level to state once for the intervals of the comparisons called the same (nan: none)."""
        return 1 - 2 * self.same_alpha

    @property
    def step_alpha(self) -> float:
        """The error Holm's last step tested at, 5 %/(m − r); 5 % when every comparison differs."""
        return self.alpha / max(1, self.size - len(self.different))

    @property
    def level(self) -> float:
        """The level to state once for the family's intervals (each interval's own level in a
        fixed-size run; an adaptive run's looks spend a share of its error: the module doc)."""
        return 1 - self.step_alpha

    def level_at(self, config: RunConfig | None = None) -> Callable[[int], float]:
        """n → the level an interval from n rounds would be computed at in this family (its look's
        share of the error under ``config``'s --until; the family's level without ``config``):
        what reach.reach plans more rounds with."""
        step_alpha = self.step_alpha
        if config is None:
            return lambda n: 1 - step_alpha
        return lambda n: 1 - look_share(config, n) * step_alpha


def holm(p_values: Mapping[K, float], alpha: float = FAMILY_ALPHA) -> tuple[frozenset[K], dict[K, float]]:
    """Holm's step-down over ``p_values`` (nan: no test, left out): the rejected keys and each
    key's adjusted p-value (the smallest family-wise level at which it would be rejected)."""
    tested = sorted(((p, key) for key, p in p_values.items() if not math.isnan(p)), key=lambda item: item[0])
    m = len(tested)
    rejected: set[K] = set()
    adjusted: dict[K, float] = {key: math.nan for key in p_values}
    running = 0.0
    stopped = False
    for step, (p, key) in enumerate(tested):
        running = max(running, min(1.0, (m - step) * p))
        adjusted[key] = running
        if not stopped and p <= alpha / (m - step):
            rejected.add(key)
        else:
            stopped = True
    return frozenset(rejected), adjusted


def decide_family(
    comparisons: Mapping[K, Comparison],
    shares: Mapping[K, float] | None = None,
    alpha: float = FAMILY_ALPHA,
    same_shares: Mapping[K, float] | None = None,
) -> Family[K]:
    """Decide ``comparisons`` (any level: only their estimates, standard errors and p-values are
    used) as one family at family-wise error ``alpha``, for differences and, apart, for sameness.
    ``shares``: the share of the difference error each comparison's look may spend
    (stats.look_share), ``same_shares`` of the sameness error (stats.same_share); 1 for all when
    None: a fixed-size run."""
    share = {key: (shares or {}).get(key, 1.0) for key in comparisons}
    spent = {key: min(1.0, c.p_value / share[key]) if c.has_interval else math.nan for key, c in comparisons.items()}
    different, adjusted = holm(spent, alpha)
    size = sum(1 for p in spent.values() if not math.isnan(p))
    step_alpha = alpha / max(1, size - len(different))
    decided = {key: at_level(c, 1 - share[key] * step_alpha) for key, c in comparisons.items()}
    same_share = {key: (same_shares or {}).get(key, 1.0) for key in comparisons}
    equivalent = {key: _spent(equivalence_p(c), same_share[key]) for key, c in comparisons.items()}
    same, same_adjusted = holm(equivalent, alpha)
    same_alpha = alpha / max(1, size - len(same) + 1)
    for key, c in decided.items():
        if key in same and key not in different:
            decided[key] = as_same(comparisons[key], same_share[key] * same_alpha)
        elif c.has_interval:
            decided[key] = dataclasses.replace(c, same=False)
    return Family(decided, different, adjusted, size, alpha, same, same_adjusted)


def _spent(p_value: float, share: float) -> float:
    """A p-value divided by its look's share of the error (nan stays nan; none at a look with no share)."""
    if math.isnan(p_value):
        return math.nan
    return min(1.0, p_value / share) if share > 0 else 1.0
