"""Reads that reach the remote: every sample on a cloud mount starts from the remote, and a
read workload is measured in two named phases, **cold** and **warm**.

Before each sample on a cloud mount (after the runner's own untimed setup, which lays the
working files out through the mount), :class:`PhasedRunner`

1. waits until every mount has uploaded everything written through it (rclone's remote control),
   so no upload of an earlier sample competes with this one and every file is on the remote
   (before a sample on the local disk too); then, on a cloud mount, the delay is started afresh
   (CloudLab.fresh_delay, while nothing is in flight): every sample meets the same fresh proxy;
2. for a read workload (one that only reads: its description's directions), makes each working
   file one that only the remote has (CloudLab.make_cold: the mount's cache entry is dropped):
   **cold**, the first read crosses the wire, whatever the cache mode;
3. for the workload's **warm** twin (``NAME-warm``, added when a cache mode of the run keeps
   reads), runs the workload once more, untimed, before the timed run: **warm**, what the
   cache serves after a read. Between that read and the timed one only rclone's cache files of
   the working files leave the page cache (CloudLab.evict_cached), never the whole page cache
   (the session's drop is not asked for): rclone's cache serves the timed reads from its disk,
   as the local disk's samples read from the disk. A mode without a read cache has no warm
   phase of its own: its warm sample skips that untimed read (it would change nothing but the
   time taken), reads from the remote as the cold one does (the page cache dropped), and says so.

Every such sample carries a caveat naming its phase (``cloud-cold``, ``cloud-warm``), and the
titles say it, so each format shows which figure is which. After each sample on a cloud
mount, the delay's memory guard (delay.py) is asked whether it tripped: the sample then fails
with its reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mountbench.kinds import kind_of
from mountbench.kinds.runner import Runner
from mountbench.labs.cloud.cloudlab import CloudLab
from mountbench.model import Caveat, Outcome, Prepared, RunSettings, TargetContext, Workload, WorkloadFailed

WARM_SUFFIX = "-warm"
COLD = "cloud-cold"  # caveat codes
WARM = "cloud-warm"
SETTLE_TIMEOUT_S = 600.0  # a mount's uploads may take this long before a sample fails
EVICTED_ONLY = "warm phase: only rclone's cache files of the working files were evicted from the page cache"


def reads_only(workload: Workload) -> bool:
    return tuple(workload.description.directions) == ("read",)


def with_phases(workloads: Sequence[Workload], warm: bool) -> tuple[list[Workload], dict[str, str]]:
    """The workloads with each read workload titled as its cold phase and, when ``warm``, followed
    by its warm twin; and the phase of each such workload by name ("cold", or "warm:<cold name>")."""
    found: list[Workload] = []
    phases: dict[str, str] = {}
    for workload in workloads:
        if not reads_only(workload):
            found.append(workload)
            continue
        kind = kind_of(workload.kind)
        found.append(kind.renamed(workload, workload.name, f"{workload.title}, cold"))
        phases[workload.name] = "cold"
        if warm:
            twin = workload.name + WARM_SUFFIX
            found.append(kind.renamed(workload, twin, f"{workload.title}, warm"))
            phases[twin] = f"warm:{workload.name}"
    return found, phases


def phase_caveat(phase: str, caches_reads: bool, mode: str) -> Caveat:
    if phase == "cold":
        return Caveat(COLD, "cold: each working file was only on the remote when the timed part began (uploads "
                            "done, the mount's cache entry dropped): the first read crosses the wire")  # fmt: skip
    if caches_reads:
        return Caveat(WARM, f"warm: read after the same workload read these files once (untimed); vfs-cache-mode "
                            f"{mode} serves from its disk cache what that read fetched. Only rclone's cache files of "
                            "the working files were evicted from the page cache before the timed read (the page "
                            "cache was not dropped): its cache is read from the disk, as the local disk's samples "
                            "are")  # fmt: skip
    return Caveat(WARM, f"warm: vfs-cache-mode {mode} keeps no read cache, so a warm read is a read from the "
                        "remote as the cold one (no untimed read was made first)")  # fmt: skip


class PhasedRunner:
    """A runner as the cloud lab runs it (the module docstring): every hook of ``inner``, with the
    lab's steps around its setup and run on cloud mounts."""

    def __init__(self, inner: Runner, lab: CloudLab, phases: Mapping[str, str]) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.lab = lab
        self.phases = dict(phases)

    def check(self, workloads: list[Workload]) -> None:
        self.inner.check(workloads)

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        return self.inner.space_needed(workload)

    def shrink_hint(self, workloads: Sequence[Workload]) -> str:
        return self.inner.shrink_hint(workloads)

    def ready(self, contexts: list[TargetContext]) -> None:
        self.inner.ready(contexts)

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        prepared = self.inner.prepare(workload, ctx, settings)
        if self._warm_from_cache(workload.name, ctx.target.label) and prepared.buffered:
            # the whole page cache is not dropped between the untimed read and the timed one: only
            # rclone's cache files of the working files leave it (setup)
            return dataclasses.replace(prepared, buffered=False, uncached_why=EVICTED_ONLY)
        return prepared

    def _warm_from_cache(self, workload: str, label: str) -> bool:
        """A warm sample on a mount that keeps reads: its cache serves it after an untimed read."""
        mount = next((m for m in self.lab.mounts if m.label == label), None)
        phase = self.phases.get(workload, "")
        return mount is not None and phase.startswith("warm") and mount.spec.mode.caches_reads

    def layout_bytes(self, prepared: Prepared, first_in_round: bool, first_in_run: bool) -> int:
        return self.inner.layout_bytes(prepared, first_in_round, first_in_run)

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        self.inner.setup(prepared, ctx, settings)
        # every mount's uploads done, this one's and the last sample's: none runs during the timed part
        others = [m for m in self.lab.mounts if m.error is None and m.label != ctx.target.label]
        waits = [self.lab.settle(m, SETTLE_TIMEOUT_S) for m in others]
        mount = self.lab.mount_for(ctx.target.label)
        if mount is None:
            if any(waits):
                raise WorkloadFailed(next(w for w in waits if w))
            return
        why = self.lab.settle(mount, SETTLE_TIMEOUT_S) or next((w for w in waits if w), None)
        if why is None:
            self.lab.fresh_delay()  # nothing in flight now: every sample meets the same fresh proxy
        phase = self.phases.get(prepared.workload.name)
        if why is None and phase is not None:
            why = self.lab.make_cold(mount, ctx.scratch)
        if why is None and self._warm_from_cache(prepared.workload.name, mount.label):
            self._inner_run(prepared, ctx, settings)  # the read the warm phase comes after (untimed)
            why = self.lab.evict_cached(mount, ctx.scratch)
        why = self.lab.delay_trouble() or why
        if why is not None:
            raise WorkloadFailed(why)

    def _inner_run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        """The inner runner's run; a failure while the delay's guard tripped says so first (the
        reads that hung on the stopped proxy are its doing, not the mount's)."""
        try:
            return self.inner.run(prepared, ctx, settings)
        except WorkloadFailed as failure:
            why = self.lab.delay_trouble()
            if why is None:
                raise
            raise WorkloadFailed(f"{why} ({failure})", failure.raw) from None

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        outcome = self._inner_run(prepared, ctx, settings)
        mount = self.lab.mount_for(ctx.target.label)
        if mount is None:
            return outcome
        why = self.lab.delay_trouble()
        if why is not None:
            raise WorkloadFailed(why, outcome.raw)
        phase = self.phases.get(prepared.workload.name)
        if phase is None:
            return outcome
        caveat = phase_caveat(phase.split(":")[0], mount.spec.mode.caches_reads, mount.spec.mode.name)
        return dataclasses.replace(outcome, caveats=(*outcome.caveats, caveat))

    def cached_files(self, prepared: Prepared, ctx: TargetContext) -> list[Path] | None:
        return self.inner.cached_files(prepared, ctx)

    def cleanup(self, ctx: TargetContext) -> None:
        self.inner.cleanup(ctx)

    def close(self) -> list[str]:
        return self.inner.close()

    def host_facts(self) -> dict[str, Any]:
        return self.inner.host_facts()


def phased(runners: Mapping[str, Runner], lab: CloudLab, phases: Mapping[str, str]) -> dict[str, Runner]:
    return {kind: PhasedRunner(runner, lab, phases) for kind, runner in runners.items()}
