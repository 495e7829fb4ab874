"""The registry of workload kinds. Adding a kind: one module in this package that
implements kinds.base.WorkloadKind, and one line in KINDS below."""

from __future__ import annotations

from collections.abc import Iterable

from mountbench.errors import UsageError
from mountbench.kinds import fio, fioclients, http, startup, tree
from mountbench.kinds.base import Adjustments, RunnerSetup, WorkloadKind, generic_description
from mountbench.model import Description, Workload
from mountbench.runners.base import Runner

KINDS: dict[str, WorkloadKind] = {
    fio.KIND.name: fio.KIND,
    tree.KIND.name: tree.KIND,
    fioclients.KIND.name: fioclients.KIND,
    http.KIND.name: http.KIND,
    startup.KIND.name: startup.KIND,
}

__all__ = ["KINDS", "Adjustments", "RunnerSetup", "describe", "kind_of", "make_runners"]


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


def make_runners(kinds: Iterable[str], setup: RunnerSetup) -> dict[str, Runner]:
    """One runner per kind the run uses (fio's is always made: it knows the run's clock)."""
    wanted = dict.fromkeys(["fio", *kinds])
    return {name: kind_of(name).make_runner(setup) for name in wanted}
