"""The first ETA of a QEMU-lab run, learnt from this machine's earlier lab runs.

The guest's `mountbench run` starts with a fresh database every time, so engine/history.py
found nothing to learn from there, and its first ETA knew only the plan's bounds (issue 37:
"at most 302 s of I/O" for 32 minutes, a layout over sshfs in the emulated guest taking
two minutes). The host keeps every lab run it brought home: here the host reads its last
complete ones, learns what each (mount, workload) cost as engine/history.py does, and the
guest run is handed those costs (run's hidden --learnt-json). A mount is the same mount
when its label (type and every option) is; it is at the same guest path (/mnt/<slug>)
as it was, or moved there.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

from mountbench.engine.history import learnt_costs
from mountbench.labfacts import QemuLabFacts
from mountbench.labs.qemu.mounts.base import LabMount
from mountbench.model import RunData, Target, Workload
from mountbench.store import Store

LEARN_FROM = 10  # the last complete lab runs on this machine it learns from


def earlier_lab_runs(db: Path) -> list[RunData]:
    """This machine's last complete QEMU-lab runs (stored with the guest's host record, 'lab
    guest on <this host>'); nothing from a database that does not exist yet (read, never made)."""
    if not db.is_file():
        return []
    here = f"lab guest on {socket.gethostname()}"  # as labs/qemu/run.py stores it
    with Store(db, writer=False) as store:
        rows = [r for r in store.list_runs() if r["hostname"] == here and r["status"] == "complete"]
        runs = [store.load_run(r["id"]) for r in rows[-LEARN_FROM:]]
    return [run for run in runs if isinstance(run.config.lab, QemuLabFacts)]


def moved_to(run: RunData, mounts: Sequence[LabMount]) -> RunData:
    """``run`` with each target that is one of ``mounts`` (the same label) at its guest path
    today, the others left out."""
    paths = {m.label: m.guest_path for m in mounts}
    kept = [
        dataclasses.replace(r, target=dataclasses.replace(r.target, path=paths[r.target.label]))
        for r in run.targets
        if r.target.label in paths
    ]
    return dataclasses.replace(run, targets=tuple(kept))


def learnt_for_guest(
    earlier: Sequence[RunData], mounts: Sequence[LabMount], workloads: Sequence[Workload]
) -> Mapping[tuple[str, str], float]:
    """(guest target label: the mount's slug, workload name) -> what one sample cost in the
    earlier lab runs, for the mounts the guest run measures."""
    targets = [Target(m.slug, m.guest_path) for m in mounts]
    return learnt_costs([moved_to(run, mounts) for run in earlier], targets, workloads)


def learnt_json(learnt: Mapping[tuple[str, str], float]) -> str:
    """The costs as run's --learnt-json takes them: [[target, workload, seconds], ...]."""
    return json.dumps([[target, workload, round(seconds, 3)] for (target, workload), seconds in learnt.items()])
