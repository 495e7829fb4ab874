"""The first ETA of a cloud-lab run, learnt from this machine's earlier cloud-lab runs.

engine/history.py learns what each (target, workload) cost from earlier runs on the same target
path, and `run` gives it to the progress bar; the cloud lab gave it nothing, so its ETA knew only
the plan's estimates (fio's time bound; a tree's size) until each mount had taken a sample: a
cloud mount's sample costs what the lab does around it (the layout over the capped wire, the
uploads waited for, the cold and warm steps) and rclone's own pace, and its ETA jumped as each
target took its first. Here a target is the same target when it is the same mount: its label
(cache mode and RTT) at the same bandwidth, or the local disk, since a lab's mounts are new
directories every run (``.../cloudlab/<id>/mnt/off-20ms``). Earlier runs are read with their
targets moved to this run's paths, and engine/history.py does the rest.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Mapping, Sequence

from mountbench.engine.history import learnt_costs
from mountbench.labfacts import CloudLabFacts
from mountbench.labs.cloud.matrix import LOCAL
from mountbench.model import RunData, Target, Workload
from mountbench.probe.remotesync import CloudProbe, CloudTarget
from mountbench.store import Store

LEARN_FROM = 10  # the last complete cloud-lab runs on this machine it learns from


def _wire(target: CloudTarget) -> tuple[object, ...]:
    return target.mode, target.rtt_ms, target.bandwidth_kbps


def moved_here(run: RunData, targets: Sequence[Target], described: Mapping[str, CloudTarget]) -> RunData | None:
    """``run`` (an earlier cloud-lab run) with each target that is one of this run's (the same
    label, mode, RTT and bandwidth; or the local disk) at this run's path, the others left out;
    None for a run of another kind."""
    if not isinstance(run.config.lab, CloudLabFacts):
        return None
    then = {t.label: t for t in CloudProbe.from_dict(run.config.lab.probe).targets}
    now = {t.label: t for t in targets}
    kept = []
    for record in run.targets:
        label = record.target.label
        if label not in now:
            continue
        if label != LOCAL and (
            label not in then or label not in described or _wire(then[label]) != _wire(described[label])
        ):
            continue
        kept.append(dataclasses.replace(record, target=dataclasses.replace(record.target, path=now[label].path)))
    return dataclasses.replace(run, targets=tuple(kept))


def learnt_costs_here(
    store: Store, targets: Sequence[Target], workloads: Sequence[Workload], described: Sequence[CloudTarget]
) -> Mapping[tuple[str, str], float]:
    """(target label, workload name) -> what one sample cost in this machine's last complete
    cloud-lab runs; nothing from a database that does not exist yet."""
    if not store.path.is_file():
        return {}
    here = socket.gethostname()  # as host/facts.py records it
    rows = [r for r in store.list_runs() if r["hostname"] == here and r["status"] == "complete"]
    rows = [r for r in rows if " cloudlab" in f" {r['command']}"][-LEARN_FROM:]
    by_label = {t.label: t for t in described}
    runs = [moved_here(store.load_run(r["id"]), targets, by_label) for r in rows]
    return learnt_costs([r for r in runs if r is not None], targets, workloads)
