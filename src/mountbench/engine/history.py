"""What each (target, workload) took on this machine before: the first ETA of a run, learnt
before it is shown (issue 37: the tree preset's first ETA said 14m33s, the plan's upper bounds,
for a run that took under 3 minutes).

A past sample's whole cost (its setup, cache drop, the timed part and storing) is the time from
its start to the next sample's start in the same run; a run's last sample, or one followed by a
pause (an interrupted run resumed later), counts its timed part alone. A workload is the same
workload when its name, kind and description (every option, as its kind describes it) are the
same; a target, when its path is. A failed sample is no cost of its workload: it measured no
work (sshfs failing after 175 s in the QEMU lab, 58× its fio bound), so it is left out.
Pure: stored runs in, seconds out.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from mountbench.model import RunData, Target, Workload

PAUSE_S = 300.0  # a gap this much longer than the sample's own time is a pause, not its cost


def workload_key(workload: Workload) -> tuple[str, str, str]:
    return workload.name, workload.kind, repr(workload.description.to_dict())


def item_costs(runs: Iterable[RunData]) -> dict[tuple[str, tuple[str, str, str]], list[float]]:
    """(target path, workload key) -> the whole cost of each past sample that did not fail, in seconds."""
    found: dict[tuple[str, tuple[str, str, str]], list[float]] = {}
    for run in runs:
        paths = {record.target.label: str(record.target.path) for record in run.targets}
        keys = {w.name: workload_key(w) for w in run.workloads}
        ordered = sorted((s for s in run.samples if s.started_at > 0), key=lambda s: s.started_at)
        for sample, following in zip(ordered, [*ordered[1:], None], strict=True):
            gap = following.started_at - sample.started_at if following is not None else 0.0
            cost = gap if 0 < gap <= sample.wall_s + PAUSE_S else sample.wall_s
            if cost > 0 and sample.ok and sample.target in paths and sample.workload in keys:
                found.setdefault((paths[sample.target], keys[sample.workload]), []).append(cost)
    return found


def learnt_costs(
    runs: Iterable[RunData], targets: Sequence[Target], workloads: Sequence[Workload]
) -> Mapping[tuple[str, str], float]:
    """(target label, workload name) -> what one sample of it is expected to cost, from the
    same workload on the same path before, else on any path; pairs never seen are left out.
    The mean, not the median: an ETA adds the costs up, and a cost paid once in a run (the
    first round's git repository, a cache filled once) is part of the sum a median leaves out
    (issue 37: the tree preset's first ETA with history said 2m37s, the median, for 3m32s)."""
    costs = item_costs(runs)
    anywhere: dict[tuple[str, str, str], list[float]] = {}
    for (_, key), seconds in costs.items():
        anywhere.setdefault(key, []).extend(seconds)
    found = {}
    for workload in workloads:
        key = workload_key(workload)
        for target in targets:
            seen = costs.get((str(target.path), key)) or anywhere.get(key)
            if seen:
                found[(target.label, workload.name)] = statistics.fmean(seen)
    return found
