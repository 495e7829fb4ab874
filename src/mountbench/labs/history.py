"""The first ETA of a lab's run, learnt from this machine's earlier runs of that lab.

engine/history.py learns what each (target, workload) cost from earlier runs on the same target
path, and `run` gives it to the progress bar. A lab's targets are made anew every run, at new
paths (the cloud lab's ``.../cloudlab/<id>/mnt/off-20ms``) or at the same paths with other storage
behind them (the QEMU guest's /mnt/<slug>): a lab says when an earlier run's target is this run's
(``same``: the cloud lab, the same cache mode, RTT and bandwidth; the QEMU lab, the same label:
type and every option), and that target is read at this run's path (``now``), the others left out.
Without this the QEMU guest's first ETA knew only the plan's bounds ("at most 302 s of I/O" for 32
minutes, issue 37) and the cloud lab's jumped as each mount took its first sample (issue 36).
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Callable, Mapping, Sequence

from mountbench.engine.history import learnt_costs
from mountbench.model import RunData, Target, Workload
from mountbench.store import Store

LEARN_FROM = 10  # the last complete runs of the lab on this machine it learns from
LOOKED_AT = 5 * LEARN_FROM  # the most recent runs it loads to find them

Same = Callable[[RunData, str], bool]  # (an earlier run, one of its target labels) -> is it this run's


def earlier_runs(store: Store, lab: str, command: str, hostname: str | None = None) -> list[RunData]:
    """This machine's last complete runs of the lab named ``lab`` (made by ``mountbench COMMAND``,
    stored under ``hostname``: this machine's name unless the lab stores another); nothing from a
    database that does not exist yet (read, never made)."""
    if not store.path.is_file():
        return []
    here = hostname or socket.gethostname()  # as host/facts.py records it
    rows = [r for r in store.list_runs() if r["hostname"] == here and r["status"] == "complete"]
    rows = [r for r in rows if str(r["command"]).split()[1:2] == [command]][-LOOKED_AT:]
    runs = [store.load_run(r["id"]) for r in rows]
    return [run for run in runs if run.config.lab is not None and run.config.lab.name == lab][-LEARN_FROM:]


def moved(run: RunData, now: Mapping[str, Target], same: Same) -> RunData:
    """``run`` with each target that is this run's (in ``now`` by its label there, and ``same``) at
    this run's path, the others left out."""
    kept = [
        dataclasses.replace(r, target=dataclasses.replace(r.target, path=now[r.target.label].path))
        for r in run.targets
        if r.target.label in now and same(run, r.target.label)
    ]
    return dataclasses.replace(run, targets=tuple(kept))


def learnt_here(
    earlier: Sequence[RunData], now: Mapping[str, Target], workloads: Sequence[Workload], same: Same
) -> Mapping[tuple[str, str], float]:
    """(this run's target label, workload name) -> what one sample cost in the ``earlier`` runs.
    ``now``: an earlier run's target label -> this run's target (a lab may label it otherwise: the
    QEMU guest's run knows a mount by its slug)."""
    return learnt_costs([moved(run, now, same) for run in earlier], list(now.values()), workloads)
