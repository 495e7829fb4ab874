"""Immutable records of what a probe observed, JSON-safe for the store: `mountbench probe`'s,
and those a lab stores with its run (its mounts probed inside, MountProbe and LabProbe; the cloud
lab's sync with the remote, CloudProbe). On the ground floor, so that a lab's facts record
(labfacts.py) holds them as they are; probe/ measures them, report/ reads them. Imports plain.py
only.

Verdict vocabulary (the same everywhere, in every format):

- ``yes``: the capability works the way POSIX/Linux local filesystems behave.
- ``no``: the capability's own call was refused; ``step`` names that call and ``errno``
  the error (EPERM, EINVAL, ENOTSUP...).
- ``differs``: the calls succeeded but the observed behaviour is not the local one
  (st_nlink wrong, mtime kept to 2 s, lock not enforced...), or a helper step the probe
  needed failed (``step`` names it), so the capability could not be shown to work;
  ``detail`` says which.
- ``hung``: the probe did not finish within its timeout and was killed.
- ``needs root``: the probe was not attempted because it needs root.
- ``skipped``: not attempted (the target was unusable or became unresponsive).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from mountbench.plain import PlainRecord, to_plain

Verdict = Literal["yes", "no", "differs", "hung", "needs root", "skipped"]
Severity = Literal["data loss"]

YES: Verdict = "yes"
NO: Verdict = "no"
DIFFERS: Verdict = "differs"
HUNG: Verdict = "hung"
NEEDS_ROOT: Verdict = "needs root"
SKIPPED: Verdict = "skipped"
VERDICTS: tuple[Verdict, ...] = (YES, NO, DIFFERS, HUNG, NEEDS_ROOT, SKIPPED)

# A finding that loses or corrupts data (contents lost, torn appends, a non-atomic
# replace): shown first in every output, whatever else the probe found.
DATA_LOSS: Severity = "data loss"

Scalar = int | float | str | None


def _check_verdict(verdict: str) -> None:
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; expected one of {VERDICTS}")


@dataclass(frozen=True)
class Finding:
    """What one capability function observed, before it is labelled with its capability.

    ``step`` names the call that failed (the capability's own call for "no", a helper
    step for "differs"). ``reported``: ``value`` is a figure the mount reports about
    itself (statfs sizes, st_blocks), not something the probe measured.
    ``severity`` is "data loss" for findings that lose or corrupt data.
    """

    verdict: Verdict
    detail: str = ""
    errno: str | None = None
    value: Scalar = None
    unit: str | None = None
    step: str | None = None
    severity: Severity | None = None
    reported: bool = False

    def __post_init__(self) -> None:
        _check_verdict(self.verdict)


@dataclass(frozen=True)
class ProbeResult(PlainRecord):
    """The verdict on one capability of one target."""

    capability: str
    title: str
    verdict: Verdict
    errno: str | None = None
    detail: str = ""
    value: Scalar = None
    unit: str | None = None
    duration_ms: float | None = None
    step: str | None = None
    severity: Severity | None = None
    reported: bool = False

    def __post_init__(self) -> None:
        _check_verdict(self.verdict)

    @classmethod
    def from_finding(
        cls, capability: str, title: str, finding: Finding, duration_ms: float | None = None
    ) -> ProbeResult:
        return cls(
            capability=capability,
            title=title,
            verdict=finding.verdict,
            errno=finding.errno,
            detail=finding.detail,
            value=finding.value,
            unit=finding.unit,
            duration_ms=duration_ms,
            step=finding.step,
            severity=finding.severity,
            reported=finding.reported,
        )


@dataclass(frozen=True)
class FsInfo(PlainRecord):
    """Where a target lives: its mount (from /proc/self/mountinfo) and statvfs figures."""

    fstype: str | None = None
    source: str | None = None
    mountpoint: str | None = None
    options: str | None = None
    statvfs: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TargetProbe(PlainRecord):
    """All probe results for one target directory.

    ``scratch`` is the scratch directory's path; ``cleanup`` says what became of it:
    "removed", or why it was left behind (it then holds only what the probe created).
    ``error`` is set when the target could not be probed at all (every result "skipped"
    or "hung"). ``swept`` says which scratch directories of killed probes were removed
    first (or why looking for them failed). ``gone`` says why the mount stopped answering
    for good during the probe (its daemon died), or is None.
    """

    path: str
    fs: FsInfo
    results: tuple[ProbeResult, ...]
    scratch: str | None = None
    cleanup: str = "removed"
    error: str | None = None
    started: str | None = None
    duration_s: float | None = None
    swept: tuple[str, ...] = ()
    gone: str | None = None

    def result(self, capability: str) -> ProbeResult:
        """The result for one capability id (KeyError if it was not probed)."""
        for r in self.results:
            if r.capability == capability:
                return r
        raise KeyError(capability)


# -- coherence between two views ----------------------------------------------------------


@dataclass(frozen=True)
class DelaySummary:
    """Aggregate of visibility delays; ``None`` delays (not seen in time) count as unseen."""

    total: int
    seen: int
    median_ms: float | None
    min_ms: float | None
    max_ms: float | None


def summarize_delays(delays_ms: tuple[float | None, ...] | list[float | None]) -> DelaySummary:
    """Median, min and max of the delays that were seen (pure; plain numpy)."""
    # imported here: the probe agent, which runs in the lab's emulated guest, needs none of numpy
    import numpy as np

    seen = np.array([d for d in delays_ms if d is not None], dtype=float)
    if seen.size == 0:
        return DelaySummary(len(delays_ms), 0, None, None, None)
    return DelaySummary(
        total=len(delays_ms),
        seen=int(seen.size),
        median_ms=float(np.median(seen)),
        min_ms=float(seen.min()),
        max_ms=float(seen.max()),
    )


@dataclass(frozen=True)
class VisibilityResult(PlainRecord):
    """How long after an operation through A it became visible through B, per repetition.

    A ``None`` delay means not seen within the timeout (or the repetition hung: ``hung``).
    """

    operation: str
    delays_ms: tuple[float | None, ...]
    hung: int = 0
    notes: tuple[str, ...] = ()

    @property
    def summary(self) -> DelaySummary:
        return summarize_delays(self.delays_ms)


STALE_OUTCOMES = ("fresh", "stale", "torn", "missing", "unseen", "hung")


@dataclass(frozen=True)
class StaleReadResult(PlainRecord):
    """What B read right after A replaced a file, per repetition.

    outcomes: "fresh" (new content and size), "stale" (the old version, whole),
    "torn" (a mix: size of one version with data of the other, short or mixed data),
    "missing" (B found no file), "unseen" (B never showed even the old version: no
    measurement), "hung". ``fresh_after_ms`` is how long B then took
    to read the new version (None: not within the timeout).
    """

    mode: str
    outcomes: tuple[str, ...]
    fresh_after_ms: tuple[float | None, ...]
    observed: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        return {k: self.outcomes.count(k) for k in STALE_OUTCOMES if k in self.outcomes}

    @property
    def summary(self) -> DelaySummary:
        return summarize_delays(self.fresh_after_ms)


@dataclass(frozen=True)
class InotifyResult(PlainRecord):
    """inotify events seen through B for changes made through A, per repetition."""

    expected: tuple[str, ...]
    received: tuple[tuple[str, ...], ...]
    first_event_ms: tuple[float | None, ...]
    error: str | None = None

    @property
    def complete(self) -> int:
        """Repetitions in which every expected event arrived."""
        return sum(1 for r in self.received if set(self.expected) <= set(r))

    @property
    def summary(self) -> DelaySummary:
        return summarize_delays(self.first_event_ms)


@dataclass(frozen=True)
class LockResult(PlainRecord):
    """Whether a lock held through A blocked a second process locking through B.

    ``blocked`` per repetition: True, False, or None (the attempt hung or failed: see
    ``notes``).
    """

    kind: str
    blocked: tuple[bool | None, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CoherenceResult(PlainRecord):
    """Coherence of two views (A and B) of one directory, measured A -> B.

    ``error`` is set when a view stopped answering and the remaining checks were not run
    (they are recorded as hung). ``cleanup`` says what became of the scratch directory.
    ``clock_resolution_ms``: when A and B are on two machines (the lab's host and guest, two clients),
    how well their clocks were matched, so how far each delay may be off either way (None:
    one machine, one clock).
    """

    view_a: str
    view_b: str
    repeat: int
    timeout_s: float
    visibility: tuple[VisibilityResult, ...]
    stale_reads: tuple[StaleReadResult, ...]
    inotify: InotifyResult
    locks: tuple[LockResult, ...]
    cleanup: str = "removed"
    error: str | None = None
    started: str | None = None
    duration_s: float | None = None
    swept: tuple[str, ...] = ()
    clock_resolution_ms: float | None = None

    def visibility_of(self, operation: str) -> VisibilityResult:
        for v in self.visibility:
            if v.operation == operation:
                return v
        raise KeyError(operation)


# -- one stored probe: everything a `mountbench probe` command measured ----------------------


@dataclass(frozen=True)
class ProbeReport:
    """The targets probed, the view pairs measured, and the local reference they are read
    against: the same capabilities and coherence checks on a local directory, measured
    during the same command (``None`` when not measured, as in probes stored before)."""

    targets: tuple[TargetProbe, ...] = ()
    coherence: tuple[CoherenceResult, ...] = ()
    reference: TargetProbe | None = None
    reference_coherence: CoherenceResult | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "targets": [t.to_dict() for t in self.targets],
            "coherence": [c.to_dict() for c in self.coherence],
            "reference": {
                "target": self.reference.to_dict() if self.reference else None,
                "coherence": self.reference_coherence.to_dict() if self.reference_coherence else None,
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProbeReport:
        ref = data.get("reference") or {}
        return cls(
            targets=tuple(TargetProbe.from_dict(t) for t in data.get("targets", [])),
            coherence=tuple(CoherenceResult.from_dict(c) for c in data.get("coherence", [])),
            reference=TargetProbe.from_dict(ref["target"]) if ref.get("target") else None,
            reference_coherence=CoherenceResult.from_dict(ref["coherence"]) if ref.get("coherence") else None,
        )


# -- `mountbench lab --probe`: the guest's mounts, probed inside and across the VM boundary ---------


@dataclass(frozen=True)
class MountProbe(PlainRecord):
    """One lab mount as `lab --probe` saw it.

    ``capabilities``: the capability probe run inside the guest on the mount. For a mount
    that shows a host directory (``shared``), coherence both ways across the VM boundary:
    ``to_guest`` (the host changes its directory, the guest observes its mount) and
    ``to_host`` (the reverse). ``errors`` says why a part was not measured.
    """

    label: str  # the mount's label: the run's target label
    guest_path: str
    shared: bool
    capabilities: TargetProbe | None = None
    to_guest: CoherenceResult | None = None
    to_host: CoherenceResult | None = None
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabProbe(PlainRecord):
    """What `mountbench lab --probe` measured, stored with the lab's run.

    ``reference``: the capability probe on the guest's own tmpfs; ``reference_coherence``:
    the coherence checks with A and B one directory of the guest's tmpfs (as on one local
    filesystem, under the same emulation). ``errors``: parts of the probe that failed as a
    whole (the guest's probe command, the agent).
    """

    mounts: tuple[MountProbe, ...]
    repeat: int
    timeout_s: float
    reference: TargetProbe | None = None
    reference_coherence: CoherenceResult | None = None
    errors: tuple[str, ...] = ()

    def mount(self, label: str) -> MountProbe:
        for m in self.mounts:
            if m.label == label:
                return m
        raise KeyError(label)

    def as_report(self) -> ProbeReport:
        """The capability matrix and coherence pairs as one `mountbench probe` report."""
        return ProbeReport(
            targets=tuple(m.capabilities for m in self.mounts if m.capabilities is not None),
            coherence=tuple(c for m in self.mounts for c in (m.to_guest, m.to_host) if c is not None),
            reference=self.reference,
            reference_coherence=self.reference_coherence,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"version": 1, **to_plain(self)}


# -- `mountbench cloudlab`: each target's sync with the remote, and how each was made -------------------


@dataclass(frozen=True)
class SyncResult(PlainRecord):
    """What the five checks saw, one entry per repetition (None: not seen within the timeout,
    or the step failed: ``notes`` says which)."""

    repeat: int
    timeout_s: float
    round_trip_ms: tuple[float | None, ...] = ()  # one mkdir + one rmdir through the mount
    first_read_ms: tuple[float, ...] = ()  # 4 KiB reads of a file only the remote had (misses)
    reread_ms: tuple[float, ...] = ()  # the same blocks read again (hits, when the mount caches)
    at_close: tuple[bool | None, ...] = ()  # on the remote when close() returned
    close_delay_ms: tuple[float | None, ...] = ()  # close() returned → whole file on the remote
    at_fsync: tuple[bool | None, ...] = ()  # on the remote when fsync() returned (file still open)
    fsync_ms: tuple[float | None, ...] = ()  # how long fsync() took
    fsync_delay_ms: tuple[float | None, ...] = ()  # fsync() returned → whole file on the remote
    remote_create_ms: tuple[float | None, ...] = ()  # created on the remote → shown by the mount
    remote_change: tuple[str, ...] = ()  # what the mount read right after: fresh, stale, torn, ...
    remote_change_fresh_ms: tuple[float | None, ...] = ()
    notes: tuple[str, ...] = ()
    cleanup: str = "removed"


@dataclass(frozen=True)
class CloudMountProbe(PlainRecord):
    """One cloud-drive target as the cloud lab probed it: what the mount supports, and the
    sync checks between it and the remote's directory (None for the local baseline)."""

    label: str
    path: str
    remote_path: str | None
    capabilities: TargetProbe | None = None
    sync: SyncResult | None = None
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class CloudTarget(PlainRecord):
    """How one target of a cloud-lab run was made: its cache mode and the wire to the remote."""

    label: str
    mode: str | None  # None: the local baseline
    rtt_ms: float | None
    bandwidth_kbps: int | None = None
    options: tuple[str, ...] = ()  # the mount's command-line options as run


@dataclass(frozen=True)
class TreeLag(PlainRecord):
    """A tree of ``files`` written through one mount: when its last file was closed, how long
    until the remote held every file (None: not within ``timeout_s``), and how many the remote
    held at that last close and at the end of the wait. ``alone``: written through this mount
    alone (False: runs before issue 49 wrote through every mount of the run at once, on one proxy)."""

    label: str
    files: int
    write_s: float
    lag_s: float | None
    at_close: int
    on_remote: int
    timeout_s: float
    alone: bool = False


@dataclass(frozen=True)
class CloudProbe(PlainRecord):
    """What `mountbench cloudlab` measured besides the benchmark, stored with its run."""

    targets: tuple[CloudTarget, ...]
    mounts: tuple[CloudMountProbe, ...]
    repeat: int
    timeout_s: float
    tools: dict[str, str] = field(default_factory=dict)  # rclone, toxiproxy versions
    errors: tuple[str, ...] = ()
    # the read workloads' phases by name: "cold", or "warm:<its cold workload>" (labs/cloud/phases.py)
    phases: dict[str, str] = field(default_factory=dict)
    tree_lag: tuple[TreeLag, ...] = ()  # per cloud mount: how long a written tree took to reach the remote

    def target(self, label: str) -> CloudTarget | None:
        return next((t for t in self.targets if t.label == label), None)

    def mount(self, label: str) -> CloudMountProbe | None:
        return next((m for m in self.mounts if m.label == label), None)

    def to_dict(self) -> dict[str, Any]:
        return {"version": 1, **to_plain(self)}

    def lag(self, label: str) -> TreeLag | None:
        return next((t for t in self.tree_lag if t.label == label), None)
