"""Build and order the plan: targets × workloads × repetitions, in seeded rounds.

Each round runs every (target, workload) pair once, shuffled by the seed, so
slow drift of the machine (thermal, background load, a filling disk) hits
every target alike instead of all of one target's samples.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from mountbench.model import PlanItem


def build_plan(
    targets: Sequence[str],
    workloads: Sequence[str],
    repeat: int,
    seed: int,
    estimates: Mapping[tuple[str, str], float],
) -> list[PlanItem]:
    rng = random.Random(seed)
    items: list[PlanItem] = []
    for round_index in range(repeat):
        pairs = [(t, w) for w in workloads for t in targets]
        rng.shuffle(pairs)
        items += [
            PlanItem(round_index, position, t, w, estimates.get((t, w), 0.0)) for position, (t, w) in enumerate(pairs)
        ]
    return items


def remaining_estimate(items: Sequence[PlanItem], spent_s: float, spent_estimate_s: float) -> float:
    """Seconds left: the plan's estimate for what remains, corrected by how the
    finished items compared with their estimates (clamped to 0.5x–3x)."""
    factor = 1.0
    if spent_estimate_s > 0 and spent_s > 0:
        factor = min(3.0, max(0.5, spent_s / spent_estimate_s))
    return sum(item.estimate_s for item in items) * factor
