"""Workload kinds: one module per kind, and the registry (KINDS, below).

A kind (fio.py, tree.py, http.py, startup.py, fioclients.py) knows everything about its
workloads: how presets and job files define them, their Description (made once, when the
workload is made), how overrides and --sweep apply, and the runner that takes their
samples (kinds/runner.py is the interface; kinds/engines/ holds the http kind's nginx and
wrk; fiofiles.py, fioseries.py and trees.py serve the fio and tree kinds). Nothing outside
this package names a kind or reads a workload's ``spec``: the rest reads the Description.

A kind declares its own run options (kinds.base.KindOption: --file-state, --tree, --app-tree):
the CLI makes their flags, the codec stores them, and only the kind reads their values.

Adding a kind: one module implementing kinds.base.WorkloadKind, one line in KINDS.
May import: the ground floor, analysis/ (pure), fio/, host/, clients/ (fioclients).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mountbench.clients.addresses import ClientSpec
from mountbench.errors import UsageError
from mountbench.kinds import fio, fioclients, http, startup, tree
from mountbench.kinds.base import (
    Adjustments,
    KindOption,
    RunnerSetup,
    WorkloadKind,
    generic_description,
    new_workload,
)
from mountbench.kinds.runner import Runner
from mountbench.model import Description, KindOptions, Workload

KINDS: dict[str, WorkloadKind] = {
    fio.KIND.name: fio.KIND,
    tree.KIND.name: tree.KIND,
    fioclients.KIND.name: fioclients.KIND,
    http.KIND.name: http.KIND,
    startup.KIND.name: startup.KIND,
}

__all__ = ["KINDS", "Adjustments", "KindOption", "RunnerSetup", "declared_options", "describe", "from_preset",
           "given_options", "host_facts", "kind_of", "load_job_file", "make_runners", "make_workload", "on_clients",
           "options_from_json", "options_to_json", "preset_alone", "resolved_options"]  # fmt: skip


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


def preset_alone(options: KindOptions) -> str | None:
    """The preset a kind's option given alone selects (kinds' preset_alone: --tree, the tree
    preset), the first kind's that has one."""
    adjustments = Adjustments(options=options)
    return next((p for kind in KINDS.values() if (p := kind.preset_alone(adjustments)) is not None), None)


def load_job_file(path: Path) -> list[Workload]:
    """The workloads of a --job file: fio's job file format, which the fio kind reads."""
    return fio.KIND.load_job_file(path)


def on_clients(workloads: Sequence[Workload], clients: Sequence[ClientSpec], counts: Sequence[int]) -> list[Workload]:
    """`run --client`: the workloads run on several machines at once (the fioclients kind)."""
    return fioclients.client_workloads(workloads, clients, counts)


# --- the run options kinds declare (each kind's ``options``) ------------------------------------


def declared_options() -> list[KindOption]:
    """Every kind's run options, in the registry's order (cli/options.py makes their flags)."""
    return [option for kind in KINDS.values() for option in kind.options]


def given_options(raw: Mapping[str, Any]) -> KindOptions:
    """The kinds' options the command line gives (``raw``: click's values by parameter name)."""
    return _given({option.name: option.read(raw) for option in declared_options()})


def resolved_options(given: KindOptions) -> KindOptions:
    """Every kind option a run uses: those given, the defaults for the rest (a RunConfig's)."""
    return KindOptions.of({option.name: given.get(option.name) or option.default for option in declared_options()})


def options_to_json(options: KindOptions) -> dict[str, Any]:
    """Each declared option under its name, as a stored config keeps it (its default when not given, null when none)."""
    values = resolved_options(options)
    return {option.name: _json(values.get(option.name)) for option in declared_options()}


def options_from_json(data: Mapping[str, Any], *, stored: bool) -> KindOptions:
    """The kinds' options from their JSON form (options_to_json's). ``stored``: a run's config,
    complete (an option missing from it is what the versions before it did, or its default);
    else options as given."""
    values = {
        option.name: option.from_json(data[option.name])
        if data.get(option.name) is not None
        else (option.before or option.default if stored else None)
        for option in declared_options()
    }
    return KindOptions.of(values) if stored else _given(values)


def _given(values: Mapping[str, Any]) -> KindOptions:
    """Options as given: one at its default is not given."""
    defaults = {option.name: option.default for option in declared_options()}
    return KindOptions.of({name: value for name, value in values.items() if value != defaults[name]})


def _json(value: Any) -> Any:
    return value.to_json() if value is not None else None
