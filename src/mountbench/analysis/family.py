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

Adaptive runs (--until): a comparison that stopped at look k may spend only its share of the
error (stats.look_share, analysis/sequential.py). Its p-value is divided by that share before
Holm (a p-value that stays valid whichever look stopped it: the shares of all looks add up
to 1), and its interval is computed at 1 − share × 5 %/(m − r). The level stated once is
still the family's (Family.level); each interval's own is on its Comparison.

Views must not re-summarise subsets of a run to get intervals: a subset is a smaller family
decided at other levels, and one ratio would get two intervals in one report. Every view
reads the family the run's summary computed (RunSummary.family, or the cells it decided).

Pure: comparisons in, decisions out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from mountbench.analysis.stats import CONFIDENCE, Comparison, at_level, look_share
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
) -> Family[K]:
    """Decide ``comparisons`` (any level: only their estimates, standard errors and p-values are
    used) as one family at family-wise error ``alpha``. ``shares``: the share of the error each
    comparison's look may spend (stats.look_share; 1 for all when None: a fixed-size run)."""
    share = {key: (shares or {}).get(key, 1.0) for key in comparisons}
    spent = {key: min(1.0, c.p_value / share[key]) if c.has_interval else math.nan for key, c in comparisons.items()}
    different, adjusted = holm(spent, alpha)
    size = sum(1 for p in spent.values() if not math.isnan(p))
    step_alpha = alpha / max(1, size - len(different))
    decided = {key: at_level(c, 1 - share[key] * step_alpha) for key, c in comparisons.items()}
    return Family(decided, different, adjusted, size, alpha)
