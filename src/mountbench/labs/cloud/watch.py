"""Host cost of a cloud-drive target (study S1's measure, as ``run --watch`` takes it):
the rclone mount serving the target and the rclone serving the remote, with their
descendants, measured around each sample's timed part by host.watch's Window.

The lab's rclone processes are this process's children, which ``--watch`` deliberately
never counts (they would be the workload); this watch names them by PID instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mountbench import model
from mountbench.host.procfs import ProcStat, descendants
from mountbench.host.watch import Measured, Role, Window
from mountbench.model import Caveat


class ServingWindow:
    def __init__(self, label: str, pids: list[int], caveats: tuple[Caveat, ...] = ()) -> None:
        self.label = label
        self.pids = pids
        self.caveats = caveats
        self.window = Window(self._find).start()

    def _find(self, table: Mapping[int, ProcStat]) -> dict[int, Role]:
        return dict.fromkeys(descendants(table, [p for p in self.pids if p in table], set()), Role())

    def stop(self) -> Measured:
        cost = self.window.stop()
        caveats = self.caveats
        if any(pid not in self.window.final for pid in self.pids):
            caveats += (Caveat(model.HOST_COST_PARTIAL, f"host cost of {self.label}: an rclone process exited during "
                                                       "this sample"),)  # fmt: skip
        return Measured(cost if cost.processes else None, caveats)


class ServingWatch:
    """What the session calls around each timed part (the interface of host.watch.SampleWatch).
    ``caveats``: per target, what its cache mode puts on every number (labs/cloud/caveats.py), carried
    onto each sample with the cost."""

    def __init__(
        self, serving_pids: Callable[[str], list[int]], caveats: Mapping[str, tuple[Caveat, ...]] | None = None
    ) -> None:
        self.serving_pids = serving_pids
        self.caveats = dict(caveats or {})

    def start(self, target: str | None = None) -> ServingWindow | None:
        pids = self.serving_pids(target) if target is not None else []
        return ServingWindow(target or "", pids, self.caveats.get(target or "", ())) if pids else None
