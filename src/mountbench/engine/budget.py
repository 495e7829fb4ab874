"""--budget: how long each fio sample may run so that the first rounds of every cell fit
in part of the budget, leaving the rest for the comparisons still undecided after them.

fio's own start-up and exit (~0.3 s a process, kinds/fio.py FIO_FIXED_COST_S) is paid by
every sample and counted; workloads that cannot be shortened (tree, application
start-up) are counted at their own estimate. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.kinds import kind_of
from mountbench.model import Workload

FIRST_ROUNDS_SHARE = 0.6  # of the budget, for the first rounds; the rest goes to undecided comparisons
MIN_RUNTIME_S = 0.5  # shorter fio samples say more about fio's start-up than about the storage
FIXED_COST_S = 0.3  # fio's start-up and exit per sample
OTHER_KIND_S = 2.0  # a workload of another kind with no duration bound


UNTIL_RUNTIME_S = MIN_RUNTIME_S  # --until's fio samples when no --runtime or --budget says otherwise (until_runtime)


def until_runtime(workloads: Sequence[Workload]) -> float | None:
    """The runtime of --until's fio samples when neither --runtime nor --budget is given: the shortest
    sample that still measures storage (UNTIL_RUNTIME_S, 0.5 s), not the preset's 2.5 s. --until
    replicates rounds; a round costs its samples' runtime plus fio's start-up (about 0.25 s a process)
    and the round's layout. At 2.5 s three minutes held five rounds; at 0.5 s twelve rounds of two targets
    took 114 s (quiet A/A tmpfs). Longer samples average the noise within a sample (bench/variance.py,
    quiet tmpfs: for 4K random I/O the noise between back-to-back 0.5 s samples, 3 %, is all noise within
    the sample, as fio's 100 ms intervals predict), but what a round replicates (a layout, the moment's
    load) only more rounds average, and the run level (analysis/runlevel.py) no rounds at all. None when
    no workload's kind takes a runtime."""
    if not any(kind_of(w.kind).takes_runtime for w in workloads):
        return None
    return UNTIL_RUNTIME_S


def default_budget(preset_budget_s: float, targets: int) -> float:
    """A presets' default budget is for two targets (one comparison a workload); every target
    more adds its share, so that each cell still gets its planned rounds: 36 s for two targets
    of the quick preset, 54 s for three. One target keeps the two-target budget."""
    return preset_budget_s * max(2, targets) / 2


@dataclass(frozen=True)
class BudgetPlan:
    runtime_s: float | None  # the runtime every fio job gets; None: keep theirs
    note: str  # what the user should know ('' when the budget is comfortable)


def plan_runtime(workloads: Sequence[Workload], targets: int, rounds: int, budget_s: float) -> BudgetPlan:
    """``rounds``: warm-up plus the minimum measured rounds every cell gets. Whether --runtime
    shortens a workload, its kind says (WorkloadKind.takes_runtime)."""
    fio = [w for w in workloads if kind_of(w.kind).takes_runtime]
    others = sum(w.description.duration_bound_s or OTHER_KIND_S for w in workloads if w not in fio)
    if not fio:
        return BudgetPlan(None, "")
    longest = max((w.description.duration_bound_s or 60.0) for w in fio)
    per_round = FIRST_ROUNDS_SHARE * budget_s / max(1, rounds) / max(1, targets)
    runtime = (per_round - others - FIXED_COST_S * len(fio)) / len(fio)
    if runtime >= longest:
        return BudgetPlan(None, "")
    if runtime < MIN_RUNTIME_S:
        first_rounds = rounds * targets * (others + len(fio) * (MIN_RUNTIME_S + FIXED_COST_S))
        if first_rounds <= budget_s:  # they fit, with less left over for the undecided comparisons
            return BudgetPlan(MIN_RUNTIME_S, "")
        needed = first_rounds / FIRST_ROUNDS_SHARE
        return BudgetPlan(
            MIN_RUNTIME_S,
            f"the budget of {budget_s:g} s is tight for {len(workloads)} workloads x {targets} targets x {rounds} "
            f"rounds: every fio job runs {MIN_RUNTIME_S:g} s and the run may stop before every cell has its "
            f"rounds (about {needed:.0f} s would fit them)",
        )
    return BudgetPlan(round(runtime, 2), "")
