"""Build and order the plan: targets × workloads × repetitions, in seeded rounds.

Each round runs every (target, workload) pair once, in an order shuffled by the
seed, so slow drift of the machine (thermal, background load, a filling disk) hits
every target alike instead of all of one target's samples. Within a round the
targets of one workload run back to back (the workloads' order is shuffled): the
samples of one round that a ratio compares are seconds apart, so a burst of load on
a shared VM tends to hit both sides of it instead of one.

The targets' order within a workload is counterbalanced, not left to chance: one
order shuffled by the seed, turned by one place every round (a, b / b, a / a, b ...
for two targets). Shuffled afresh each round, three rounds put the same target first
every time in a quarter of all runs, and whatever going first or second does (a
device cache warmed by the other's sample, the drift within a round) then becomes a
difference between the targets; turned, every target takes every place as often as
the rounds allow.

Warm-up rounds (hyperfine's --warmup) come first: every pair runs and its
numbers are thrown away, so the first measured sample does not pay for cold
metadata, a cold binary or a fresh filesystem's first allocations.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mountbench.analysis.plausible import LOCAL_FSTYPES, RAM_FSTYPES
from mountbench.model import WARMUP_BASE, PlanItem


@dataclass(frozen=True)
class LayoutPace:
    """How fast the plan assumes a target lays out working files, from its filesystem type
    (layout_pace): a bound where a slow mount may be this slow, a fair figure where it cannot."""

    rate_bps: float
    where: str  # the targets it is assumed for, as the first line says it: 'on a local disk'


# A network, VM or FUSE mount, or any filesystem not known to be local: its bound must hold
# however slow the mount is (issue 37: sshfs in the QEMU lab's emulated guest laid out quick's
# 256 MiB in 122-156 s, 1.7-2.2 MB/s, every round). The ETA paces a target's later layouts by
# its first (cli/progress.py), so a fast FUSE mount's bound lasts one layout.
SLOW_PACE = LayoutPace(2e6, "on a network, VM or FUSE mount")
# A local block filesystem: a hard disk's or a cloud volume's base throughput. (256 MiB took 0.5 s
# on this VM's virtio disk, 3.6-6.6 s on the lab guest's emulated one; a 2 MB/s bound made a local
# quick run's first line say 15 minutes for a 107 s run.)
LOCAL_PACE = LayoutPace(50e6, "on a local disk")
# RAM (tmpfs, ramfs): 256 MiB took 0.3-0.6 s here (35 MB/s in the lab's emulated guest, where every
# timed part ran past its bound too).
RAM_PACE = LayoutPace(500e6, "in RAM")


def layout_pace(fstype: str) -> LayoutPace:
    """The pace the plan assumes for laying out working files on a filesystem of ``fstype``
    (as /proc/mounts names it: 'ext4', 'fuse.sshfs', '9p'); a FUSE filesystem over a block
    device (fuseblk) is FUSE, and one not named here is slow."""
    if fstype in RAM_FSTYPES:
        return RAM_PACE
    return LOCAL_PACE if fstype in LOCAL_FSTYPES else SLOW_PACE


@dataclass(frozen=True)
class LaysOut(PlanItem):
    """A plan item whose sample lays out working files first (engine/session.py with_layouts):
    ``layout_s`` of its estimate is that layout, at its target's ``pace``."""

    layout_s: float = 0.0
    pace: LayoutPace = SLOW_PACE


def layout_of(item: PlanItem) -> float:
    """The part of ``item``'s estimate that lays out working files (0 for most)."""
    return item.layout_s if isinstance(item, LaysOut) else 0.0


def build_plan(
    targets: Sequence[str],
    workloads: Sequence[str],
    repeat: int,
    seed: int,
    estimates: Mapping[tuple[str, str], float],
    warmup: int = 0,
) -> list[PlanItem]:
    """Warm-up rounds, then the measured rounds (whose order does not depend on ``warmup``)."""
    order = target_order(targets, seed)
    measured = _rounds(range(repeat), order, workloads, random.Random(seed), estimates)
    warm_rng = random.Random(f"warm-up {seed}")
    return _rounds(range(WARMUP_BASE, WARMUP_BASE + warmup), order, workloads, warm_rng, estimates) + measured


def target_order(targets: Sequence[str], seed: int) -> list[str]:
    """The run's base order of the targets within a workload (turned by one place each round):
    the same for the planned rounds and the added ones, whatever order ``targets`` come in."""
    order = sorted(targets)
    random.Random(f"{seed} target order").shuffle(order)
    return order


def turned(order: Sequence[str], round_index: int) -> list[str]:
    """``order`` turned by ``round_index`` places: round 0 as is, round 1 from the second, ..."""
    if not order:
        return []
    shift = round_index % len(order)
    return [*order[shift:], *order[:shift]]


def _rounds(
    indices: range,
    targets: Sequence[str],
    workloads: Sequence[str],
    rng: random.Random,
    estimates: Mapping[tuple[str, str], float],
) -> list[PlanItem]:
    items: list[PlanItem] = []
    for round_index in indices:
        pairs = _blocks([(t, w) for w in workloads for t in targets], rng, turned(targets, round_index))
        items += [
            PlanItem(round_index, position, t, w, estimates.get((t, w), 0.0)) for position, (t, w) in enumerate(pairs)
        ]
    return items


def _blocks(pairs: list[tuple[str, str]], rng: random.Random, order: Sequence[str]) -> list[tuple[str, str]]:
    """The (target, workload) pairs with each workload's targets back to back: the workloads
    in a shuffled order, the targets within each in ``order`` (this round's turn)."""
    workloads = list(dict.fromkeys(w for _, w in pairs))
    rng.shuffle(workloads)
    place = {target: index for index, target in enumerate(order)}
    ordered = []
    for workload in workloads:
        ordered += sorted((pair for pair in pairs if pair[1] == workload), key=lambda pair: place.get(pair[0], 0))
    return ordered


def pending_items(plan: Sequence[PlanItem], done: set[tuple[str, str, int]]) -> list[PlanItem]:
    """What is left to run: measured items not yet stored, and the warm-ups of the pairs
    that still have some (a resumed run warms up again: the machine has changed since)."""
    measured = [i for i in plan if not i.warmup and (i.target, i.workload, i.round) not in done]
    unfinished = {(i.target, i.workload) for i in measured}
    return [i for i in plan if i.warmup and (i.target, i.workload) in unfinished] + measured


def remaining_estimate(items: Sequence[PlanItem], spent_s: float, spent_estimate_s: float) -> float:
    """Seconds left: the plan's estimate for what remains, corrected by how the
    finished items compared with their estimates (clamped to 0.5x–3x)."""
    factor = 1.0
    if spent_estimate_s > 0 and spent_s > 0:
        factor = min(3.0, max(0.5, spent_s / spent_estimate_s))
    return sum(item.estimate_s for item in items) * factor


def extra_round(
    round_index: int,
    pairs: Sequence[tuple[str, str]],
    seed: int,
    estimates: Mapping[tuple[str, str], float],
) -> list[PlanItem]:
    """One more measured round of the given (target, workload) pairs (adaptive repetitions),
    shuffled by the run's seed and the round's number like every other round."""
    targets = list(dict.fromkeys(t for t, _ in pairs))
    order = target_order(targets, seed)
    shuffled = _blocks(list(pairs), random.Random(f"{seed} round {round_index}"), turned(order, round_index))
    return [
        PlanItem(round_index, position, t, w, estimates.get((t, w), 0.0)) for position, (t, w) in enumerate(shuffled)
    ]
