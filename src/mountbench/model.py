"""The immutable records that flow from plan to store to reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Caveat codes. The text shown to people is in Caveat.text; codes let tests and
# exports recognise a caveat without parsing prose.
ODIRECT_REFUSED = "odirect-refused"
PAGE_CACHE = "page-cache"
CACHE_NOT_DROPPED = "cache-not-dropped"
ENGINE_FALLBACK = "engine-fallback"
NOCACHE_MACOS = "f-nocache"
UNSTABLE = "unstable"
OUTLIERS = "outliers"
FEW_SAMPLES = "few-samples"
# caveats about a cell's spread, derived from its samples, not about how they were measured
QUALITY_CODES = frozenset({UNSTABLE, OUTLIERS, FEW_SAMPLES})
RUNTIME_CAPPED = "runtime-capped"
EMULATED = "emulated"
HOST_CACHE = "host-cache"


@dataclass(frozen=True)
class Caveat:
    """A fact that limits how far a number can be trusted, shown next to it."""

    code: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "text": self.text}

    @classmethod
    def from_dict(cls, data: dict[str, str]) -> Caveat:
        return cls(code=data["code"], text=data["text"])


@dataclass(frozen=True)
class Target:
    """A directory under test, as given on the command line."""

    label: str
    path: str  # absolute, resolved


@dataclass(frozen=True)
class TargetInfo:
    """What inspecting a target found; recorded with the run."""

    fstype: str
    mount_point: str
    mount_source: str
    mount_options: str
    free_bytes: int
    total_bytes: int
    odirect: bool
    odirect_detail: str  # "accepted" or the errno name/message

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TargetInfo:
        return cls(**data)


@dataclass(frozen=True)
class Workload:
    """One named unit of work run against every target.

    ``kind`` selects the runner ("fio" here; other runners add kinds). ``spec``
    is the runner's JSON-safe description (for fio: the option list of one job).
    """

    name: str
    kind: str
    title: str
    source: str  # "preset:quick", "job:/path/to/file.fio"
    spec: dict[str, Any] = field(hash=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "title": self.title,
            "source": self.source,
            "spec": self.spec,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Workload:
        return cls(data["name"], data["kind"], data["title"], data["source"], data["spec"])


WARMUP_BASE = -1000  # warm-up k (0-based) is round WARMUP_BASE + k: below every stored round


@dataclass(frozen=True)
class PlanItem:
    """One sample to take: a (target, workload) pair in a given round."""

    round: int  # 0-based repetition index; negative for a warm-up, which is run but never stored
    position: int  # order within the round
    target: str  # label
    workload: str  # name
    estimate_s: float

    @property
    def warmup(self) -> bool:
        return self.round < 0

    @property
    def name(self) -> str:
        """'round 2' or 'warm-up 1', as progress and plans print it."""
        return f"warm-up {self.round + 1 - WARMUP_BASE}" if self.warmup else f"round {self.round + 1}"


@dataclass(frozen=True)
class Sample:
    """The outcome of one plan item: metrics on success, the engine's message on failure."""

    target: str
    workload: str
    round: int
    ok: bool
    metrics: dict[str, float] = field(hash=False, compare=False)
    caveats: tuple[Caveat, ...] = ()
    error: str = ""
    started_at: float = 0.0
    wall_s: float = 0.0
    cache_action: str = ""  # what was done about caches before this sample
    raw: str = ""  # the engine's raw output (fio JSON), kept in the store


@dataclass(frozen=True)
class TargetRecord:
    """A target as stored with its run: where it was and what it was."""

    target: Target
    info: TargetInfo | None  # None only when inspection failed before anything ran


@dataclass(frozen=True)
class RunData:
    """Everything stored about one run; what reports and exports are made from."""

    id: str
    created_at: float
    finished_at: float | None
    status: str  # running | complete | interrupted | failed
    command: str
    config: dict[str, Any] = field(hash=False, compare=False)
    host: dict[str, Any] = field(hash=False, compare=False)
    targets: tuple[TargetRecord, ...] = ()
    workloads: tuple[Workload, ...] = ()
    samples: tuple[Sample, ...] = ()

    def target_labels(self) -> list[str]:
        return [record.target.label for record in self.targets]

    def workload(self, name: str) -> Workload:
        for workload in self.workloads:
            if workload.name == name:
                return workload
        raise KeyError(name)
