"""Workload kinds: one module per kind, and the registry (KINDS, below).

A kind (fio.py, tree.py, http.py, startup.py, fioclients.py) knows everything about its
workloads: how presets and job files define them, their Description (made once, when the
workload is made), how overrides and --sweep apply, and the runner that takes their
samples (kinds/runner.py is the interface; kinds/engines/ holds the http kind's nginx and
wrk; fiofiles.py, fioseries.py and trees.py serve the fio and tree kinds). Nothing outside
this package names a kind or reads a workload's ``spec``: the rest reads the Description.

Adding a kind: one module implementing kinds.base.WorkloadKind, one line in KINDS.
May import: model, errors, units, analysis (pure), fio/, host/, clients/ (fioclients).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mountbench.clients.addresses import ClientSpec
from mountbench.errors import UsageError
from mountbench.kinds import fio, fioclients, http, startup, tree
from mountbench.kinds.base import Adjustments, RunnerSetup, WorkloadKind, generic_description, new_workload
from mountbench.kinds.fiofiles import FILE_STATES
from mountbench.kinds.runner import Runner
from mountbench.kinds.trees import PROFILES as TREE_PROFILES
from mountbench.model import Description, Workload

KINDS: dict[str, WorkloadKind] = {
    fio.KIND.name: fio.KIND,
    tree.KIND.name: tree.KIND,
    fioclients.KIND.name: fioclients.KIND,
    http.KIND.name: http.KIND,
    startup.KIND.name: startup.KIND,
}

__all__ = ["FILE_STATES", "KINDS", "TREE_PROFILES", "Adjustments", "RunnerSetup", "describe", "from_preset",
           "host_facts", "kind_of", "load_job_file", "make_runners", "make_workload", "on_clients",
           "preset_alone"]  # fmt: skip


def kind_of(name: str) -> WorkloadKind:
    try:
        return KINDS[name]
    except KeyError:
        raise UsageError(
            f"workload kind {name!r} is unknown to this mountbench (known: {', '.join(KINDS)}); upgrade mountbench"
        ) from None


def describe(workload: Workload) -> Description:
    """The kind's description; a generic one for kinds this version does not know."""
    kind = KINDS.get(workload.kind)
    return kind.describe(workload) if kind is not None else generic_description(workload)


def from_preset(preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
    """One ``[[jobs]]`` entry of a preset file, read by its kind (``kind = "tree"``; fio's when absent)."""
    return kind_of(entry.get("kind", fio.KIND.name)).from_preset(preset, data, entry)


def make_workload(name: str, kind: str, title: str, source: str, spec: dict[str, Any]) -> Workload:
    """A workload of the named kind, described by it (a generic description for kinds
    this version does not know)."""
    known = KINDS.get(kind)
    if known is not None:
        return new_workload(known, name, title, source, spec)
    draft = Workload(name, kind, title, source, spec, Description(summary=""))
    return replace(draft, description=generic_description(draft))


def make_runners(kinds: Iterable[str], setup: RunnerSetup) -> dict[str, Runner]:
    """One runner per kind the run uses (fio's is always made: it chooses the run's clock)."""
    wanted = dict.fromkeys([fio.KIND.name, *kinds])
    return {name: kind_of(name).make_runner(setup) for name in wanted}


def host_facts(runners: Mapping[str, Runner]) -> dict[str, Any]:
    """What the runners record in the run's host facts (fio: its clock), in the runners' order:
    a later one may say more (the clients of `run --client`: each chooses its own clock)."""
    facts: dict[str, Any] = {}
    for runner in runners.values():
        facts |= runner.host_facts()
    return facts


def preset_alone(adjustments: Adjustments) -> str | None:
    """The preset an override given alone selects (kinds' preset_alone), the first kind's that has one."""
    return next((p for kind in KINDS.values() if (p := kind.preset_alone(adjustments)) is not None), None)


def load_job_file(path: Path) -> list[Workload]:
    """The workloads of a --job file: fio's job file format, which the fio kind reads."""
    return fio.KIND.load_job_file(path)


def on_clients(workloads: Sequence[Workload], clients: Sequence[ClientSpec], counts: Sequence[int]) -> list[Workload]:
    """`run --client`: the workloads run on several machines at once (the fioclients kind)."""
    return fioclients.client_workloads(workloads, clients, counts)
