"""The immutable records that flow from plan to store to reports."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Protocol

from mountbench.labfacts import LabFacts

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
DRIFT = "drift"  # a cell's samples trend over the run
MACHINE_DRIFT = "machine-drift"  # the baseline's do: the machine changed
FIRST_SAMPLE = "first-sample"  # the first sample stands apart from the rest (a cold start)
WIDE_RATIO = "wide-ratio"  # a ratio's interval too wide to rank the pair
RATIO_DRIFT = "ratio-drift"  # the per-round ratio trends: interleaving could not keep it fair
RATIO_STEADY = "ratio-steady"  # the machine drifted but the per-round ratio did not
# caveats derived from a cell's samples (their spread, their order in time), not about how they
# were measured; a ratio does not inherit these from its baseline (its interval already shows them)
QUALITY_CODES = frozenset(
    {UNSTABLE, OUTLIERS, FEW_SAMPLES, DRIFT, MACHINE_DRIFT, FIRST_SAMPLE, WIDE_RATIO, RATIO_DRIFT, RATIO_STEADY}
)
EMULATED = "emulated"
EMULATED_GUEST_CPU = "emulated-guest-cpu"  # a mount whose cost is guest CPU, under emulation
CACHE_SERVED_DIRECT = "direct-cached"  # direct reads the block device never saw
UNSTEADY = "unsteady"  # the sample's own time series trends (kinds/fioseries.py)
NOT_STEADY_STATE = "no-steady-state"  # fio's steadystate= criterion was not met
HOST_CACHE = "host-cache"
HOST_COST_PARTIAL = "host-cost-partial"  # a watched process was missing or exited during the sample
HTTP_ERRORS = "http-errors"  # some requests of an http sample failed
# plausibility (analysis/plausible.py, kinds/fio.py): a number that cannot be what it claims
WRITE_CACHED = "write-cached"  # direct writes faster than reads of the same pattern: a volatile cache below
FASTER_THAN_RAM = "faster-than-ram"  # a target faster than the RAM baseline
LATENCY_FLOOR = "latency-floor"  # a latency below what a network or VM mount can do
SHORT_SAMPLE = "short-sample"  # the sample stopped before its runtime, or moved I/O for under 0.5 s
# a user's job file (kinds/fio.py): what its figures are, and what mountbench changed in it
JOB_GROUPING = "job-grouping"  # sections run together as one workload, or one measured alone, and why
RATE_CAPPED = "rate-capped"  # the job caps its own rate: the figure is the cap
VERIFY_READS = "verify-reads"  # the read figures are fio's verify pass over what the job wrote
RUNTIME_ZERO = "runtime-0"  # a job's I/O took fio's 1 ms tick or less: too short to time
NO_IO = "no-io"  # a job of the workload moves no data (cpuio, null) beside those that do
RUNTIME_REPLACED = "runtime-replaced"  # --runtime replaced the file's own runtime
SIZE_REPLACED = "size-replaced"  # --size replaced fill_device
TARBALL_STRIPPED = "tarball-stripped"  # the user's tarball's owners and set-ID bits are not extracted


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
    # what a resumed run checks is still the same storage (host/targets.target_change); "" / 0:
    # recorded before these existed, or not known (a dry run)
    device: str = ""  # the target directory's device, "major:minor"
    scratch_inode: int = 0  # the run's scratch directory's inode
    instance: str = ""  # which instance of the filesystem (host/fsinstance.py): the device number is reused
    # inside a container, what the mount is there (host/container.py): "bind mount: /home/me of /dev/sda2",
    # "named volume mbvol (...)", "the container's writable layer (...)"; "" on a host
    mount_kind: str = ""
    # how much this target's results move between runs (analysis/runlevel.py); None: recorded before it
    # existed, and the analysis takes its filesystem type's default
    run_level: RunLevel | None = None

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["run_level"] = self.run_level.to_dict() if self.run_level else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TargetInfo:
        fields = dict(data)
        level = fields.pop("run_level", None)
        return cls(**fields, run_level=RunLevel.from_dict(level) if level else None)


ACCESS_CLASSES = ("large", "small", "other")  # large blocks (≥ 128 KiB), small blocks, no one block size


@dataclass(frozen=True)
class RunLevel:
    """How much one target's results move from one run to the next beyond what the rounds of one run
    show, as a standard deviation on the log scale per access class (ACCESS_CLASSES): ``paired`` for
    its effect against another target in the same rounds (what pairing cannot cancel: where a run's
    files land, the state a run starts in), ``level`` for its own level against another run's (the
    machine's state too: what a comparison across runs carries). ``df``: the degrees of freedom of the
    estimate; ``source``: "calibrated" (mountbench calibrate on this filesystem) or "default" (the
    filesystem type's, measured by bench/aa.py); ``basis``: one line saying on what and when."""

    paired: tuple[float, float, float]  # large, small, other
    level: tuple[float, float, float]
    df: float
    source: str
    basis: str

    def paired_sd(self, access: str) -> float:
        return self.paired[ACCESS_CLASSES.index(access)]

    def level_sd(self, access: str) -> float:
        return self.level[ACCESS_CLASSES.index(access)]

    def to_dict(self) -> dict[str, Any]:
        return {"paired": list(self.paired), "level": list(self.level), "df": self.df, "source": self.source,
                "basis": self.basis}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunLevel:
        def three(values: Any) -> tuple[float, float, float]:
            found = tuple(float(v) for v in values)
            if len(found) != 3 or not all(math.isfinite(v) and 0 <= v < 10 for v in found):
                raise ValueError("a run level needs three finite standard deviations (large, small, other)")
            return found  # type: ignore[return-value]

        df = float(data["df"])
        if not (df > 0):
            raise ValueError("a run level's degrees of freedom must be above 0")
        return cls(three(data["paired"]), three(data["level"]), df, str(data["source"]), str(data["basis"]))


SWEEP_OPTIONS = ("bs", "iodepth", "numjobs", "size")  # what --sweep (and sweep detection) varies


@dataclass(frozen=True)
class SweepValue:
    """One swept option's value at a point: ``bs`` = ``64k`` (65536)."""

    option: str  # one of SWEEP_OPTIONS
    value: str  # as written or generated, e.g. "64k"
    number: float  # for ordering and axes, e.g. 65536


@dataclass(frozen=True)
class SweepPoint:
    """Where a workload sits in a sweep: the workloads of one ``group`` differ in the
    swept option(s) alone. ``generated`` sweeps come from --sweep or a preset that
    declares one; the others were recognised in a job file whose sections differ in one
    option only. ``grid`` holds the further options of a grid (several --sweep), in
    --sweep order: the point's coordinates are (option, *grid)."""

    group: str
    option: str  # "bs", "iodepth", "numjobs", "size"
    value: str  # as written, e.g. "64k"
    number: float  # for ordering and axes, e.g. 65536
    generated: bool = True
    grid: tuple[SweepValue, ...] = ()

    @property
    def coordinates(self) -> tuple[SweepValue, ...]:
        return (SweepValue(self.option, self.value, self.number), *self.grid)

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in self.__dict__.items() if key != "grid"}
        data["grid"] = [dict(v.__dict__) for v in self.grid]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepPoint:
        grid = tuple(SweepValue(str(v["option"]), str(v["value"]), float(v["number"])) for v in data.get("grid") or ())
        return cls(str(data["group"]), str(data["option"]), str(data["value"]), float(data["number"]),
                   bool(data.get("generated", True)), grid)  # fmt: skip


@dataclass(frozen=True)
class SweepAxis:
    """One ``--sweep OPTION=VALUES`` (or a preset's ``[sweep]`` entry), parsed by
    sweeps.parse_sweep: the values in the order given, each as a label fio reads and a number."""

    option: str  # one of SWEEP_OPTIONS
    values: tuple[str, ...]  # e.g. ("1k", "2k", ..., "16M")
    numbers: tuple[float, ...]  # bytes or counts, in the same order
    given: str = ""  # as the user wrote it, e.g. "bs=1k..16M"

    @property
    def text(self) -> str:
        return self.given or f"{self.option}={','.join(self.values)}"

    def to_dict(self) -> dict[str, Any]:
        return {"option": self.option, "values": list(self.values), "numbers": list(self.numbers), "given": self.given}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepAxis:
        values = tuple(map(str, data["values"]))
        numbers = tuple(float(n) for n in data["numbers"])
        if len(values) != len(numbers) or not values:
            raise ValueError("a sweep needs as many numbers as values, and at least one")
        return cls(str(data["option"]), values, numbers, str(data.get("given") or ""))


@dataclass(frozen=True)
class Description:
    """What a workload is, worked out once by its kind (kinds/) when the workload is
    created, and carried with it: reports, statistics and the planner read this and
    never re-derive it from engine options."""

    summary: str  # the settings people quote, one line
    options: tuple[str, ...] = ()  # every option as given, one per entry
    headline: tuple[str, ...] = ()  # metric names people quote, best first (those present are shown)
    directions: tuple[str, ...] = ()  # "read", "write", "trim": what the workload moves
    block_size: int | None = None  # bytes, when there is one plain block size
    percentiles: tuple[float, ...] = ()  # a percentile list long enough to ask for the percentile view
    duration_bound_s: float | None = None  # upper bound of one sample's timed part; None: unbounded
    space_group: str = ""  # workloads of one group share their files on a target
    space_bytes: int | None = None  # bytes laid out on a target; None: unknown
    sweep: SweepPoint | None = None
    # for views across workloads (reports read these, never the kind's spec):
    role: str = ""  # what the workload stands for in such views, e.g. "tree copy" (pick two's tree measure)
    clients: tuple[str, ...] = ()  # run on these clients at once (run --client), by label
    origin: str = ""  # the workload this variant was made from (a multi-client job's own fio job), by name
    origin_title: str = ""
    method: str = ""  # how the kind measures, one sentence for the methodology (the same for all its workloads)
    # the access pattern apart from its direction ("" when there is none to mirror): a reading and a
    # writing workload with the same pattern are one job in two directions (plausibility checks)
    pattern: str = ""

    # fields added after runs were stored: a stored description without them gets them from its kind
    LATER: ClassVar[tuple[str, ...]] = ("role", "clients", "origin", "origin_title", "method", "pattern")

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["sweep"] = self.sweep.to_dict() if self.sweep else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Description:
        sweep = data.get("sweep")
        return cls(
            summary=str(data.get("summary", "")),
            options=tuple(map(str, data.get("options", ()))),
            headline=tuple(map(str, data.get("headline", ()))),
            directions=tuple(map(str, data.get("directions", ()))),
            block_size=_int_or_none(data.get("block_size")),
            percentiles=tuple(float(p) for p in data.get("percentiles", ())),
            duration_bound_s=_float_or_none(data.get("duration_bound_s")),
            space_group=str(data.get("space_group", "")),
            space_bytes=_int_or_none(data.get("space_bytes")),
            sweep=SweepPoint.from_dict(sweep) if sweep else None,
            role=str(data.get("role", "")),
            clients=tuple(map(str, data.get("clients", ()))),
            origin=str(data.get("origin", "")),
            origin_title=str(data.get("origin_title", "")),
            method=str(data.get("method", "")),
            pattern=str(data.get("pattern", "")),
        )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class Workload:
    """One named unit of work run against every target.

    ``kind`` names the module in kinds/ that owns it; ``spec`` is that kind's
    JSON-safe definition (for fio: the option list of one job). ``description`` is
    computed by the kind when it makes the workload (kinds.base.new_workload); runs
    stored by versions that did not record one get theirs in records.codec.
    """

    name: str
    kind: str
    title: str
    source: str  # "preset:quick", "job:/path/to/file.fio"
    spec: dict[str, Any] = field(hash=False, compare=False)
    description: Description = field(hash=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "title": self.title,
            "source": self.source,
            "spec": self.spec,
            "description": self.description.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Workload:
        """A stored workload with its stored description (records.codec supplies one when
        an older version stored none)."""
        return cls(
            data["name"],
            data["kind"],
            data["title"],
            data["source"],
            data["spec"],
            Description.from_dict(data["description"]),
        )


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
class ClientResult:
    """One client's part of a sample taken on several machines at once (``run --client``):
    its own metrics (named as a sample's), or why it delivered none."""

    client: str  # the client's label, e.g. "10.0.0.2" or "node1:8766"
    metrics: dict[str, float] = field(hash=False, compare=False)
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"client": self.client, "metrics": dict(self.metrics), "error": self.error}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClientResult:
        metrics = {str(k): float(v) for k, v in (data.get("metrics") or {}).items()}
        return cls(str(data["client"]), metrics, str(data.get("error", "")))


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
    # values over the sample's time, e.g. {"read.iops": [...], "interval_s": [0.25]} (fio's logs)
    series: dict[str, list[float]] = field(default_factory=dict, hash=False, compare=False)
    clients: tuple[ClientResult, ...] = ()  # per-client parts; ``metrics`` is then mountbench's aggregate


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
    config: RunConfig = field(hash=False, compare=False)
    host: dict[str, Any] = field(hash=False, compare=False)
    targets: tuple[TargetRecord, ...] = ()
    workloads: tuple[Workload, ...] = ()
    samples: tuple[Sample, ...] = ()
    # '' for a run made here; for an imported one, what it was imported from (never resumed): where a
    # record came from, not what it holds (two copies of one run are equal)
    origin: str = field(default="", compare=False)

    def target_labels(self) -> list[str]:
        return [record.target.label for record in self.targets]

    def workload(self, name: str) -> Workload:
        for workload in self.workloads:
            if workload.name == name:
                return workload
        raise KeyError(name)


# --- how a run is configured ----------------------------------------------------------------

DROP_MODES = ("auto", "always", "never")  # --drop-caches (engine/caches.py)
# what else the machine did during a sample (host/noise.py measures, analysis/noise.py judges)
NOISE_OTHERS_CPU = "noise.others_cpu"  # % of the machine's CPU used by other processes
NOISE_STEAL = "noise.steal"  # % of the machine's CPU stolen by the hypervisor
DEFAULT_PRECISION = 0.05  # "the same" means within ±5 % unless --until says otherwise; --budget's --until


class KindOptionValue(Protocol):
    """The value of a run option a workload kind declares (kinds.base.KindOption): the kind
    alone knows what it means; the codec stores its JSON form and the report prints its fact."""

    def to_json(self) -> Any:
        """Its form in a stored config (under the option's name)."""

    def fact(self) -> str | None:
        """How it made the run, as a phrase of the report's run facts; None: nothing to say."""

    def inputs(self) -> tuple[str, ...]:
        """The files the run reads because of it (a tarball): no output of the run may be written over them."""


@dataclass(frozen=True)
class KindOptions:
    """The values of the run options workload kinds declare, by option name (kinds/: each kind
    declares its own, e.g. fio's --file-state, tree's --tree, startup's --app-tree). In a
    RunOptions, only those given (a default is not given); in a RunConfig, every one the run
    used (the engine fills the defaults, the codec reads them back). Only the kind that
    declares an option reads its value."""

    values: tuple[tuple[str, KindOptionValue], ...] = ()

    @classmethod
    def of(cls, values: Mapping[str, KindOptionValue | None]) -> KindOptions:
        """Those of ``values`` that are not None."""
        return cls(tuple((name, value) for name, value in values.items() if value is not None))

    def get(self, name: str) -> KindOptionValue | None:
        return next((value for given, value in self.values if given == name), None)

    def __iter__(self) -> Iterator[KindOptionValue]:
        return (value for _, value in self.values)


@dataclass(frozen=True)
class Flag:
    """One command-line flag of a run option. cli/options.py makes it a click option: its
    type follows the field's (tuple: repeatable, bool: a switch), its checks and the parsing
    of text such as "1G" are there too."""

    decl: str  # "--repeat"
    help: str
    metavar: str | None = None
    param: str | None = None  # a name of its own: a single value read into the field (text such as "1G", two flags)
    choices: tuple[str, ...] = ()  # the values it takes (any, when empty)
    path: bool = False  # a path (click gives a pathlib.Path)


def run_option(default: Any, *, stored: str | None = None, span: Span | None = None) -> Any:
    """A RunOptions field: its default, its name in stored configs and `lab`'s options record
    (default: the field's name), and the values it may take (``span``: the command line's range,
    and an imported config's). The flags that set it, with their help, are cli/runflags.py's."""
    return field(default=default, metadata={"stored": stored, "span": span})


@dataclass(frozen=True)
class Span:
    """The values a numeric run option may take: ``low`` to ``high`` (None: no upper bound)."""

    low: float
    high: float | None = None

    def problem(self, value: float) -> str:
        """Why ``value`` is outside ('' when it is not): 'is outside 1-1000', 'is below 0.1'."""
        if self.high is not None and not self.low <= value <= self.high:
            return f"is outside {self.low:g}-{self.high:g}"
        return f"is below {self.low:g}" if value < self.low else ""


def span_of(name: str) -> Span:
    """The span of the RunOptions field ``name``."""
    span = next(option.metadata["span"] for option in fields(RunOptions) if option.name == name)
    assert span is not None, name
    return span


def stored_name(option: Field[Any]) -> str:
    return option.metadata.get("stored") or option.name


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What the user asked for, as given: one definition shared by `run` and the labs. Each field
    is one run option, declared here once; its flags and their help are cli/runflags.py's (one
    entry a field), and the click options (cli/options.py), RunConfig and the codec
    (records/codec.py) follow from it. The options of one workload kind are declared
    by the kind (kinds/) and carried in ``kind_options``. The lab hands it to the guest as JSON."""

    presets: tuple[str, ...] = run_option(())
    job_files: tuple[str, ...] = run_option(())  # absolute paths
    only: tuple[str, ...] = run_option(())
    sweeps: tuple[SweepAxis, ...] = run_option(())  # --sweep, in the order given
    baseline: str | None = run_option(None)
    repeat: int = run_option(3, span=Span(1, 1000))
    warmup: int = run_option(0, span=Span(0, 100))
    runtime: float | None = run_option(None, span=Span(0.1))  # seconds, every fio job
    size: int | None = run_option(None, span=Span(1))  # bytes, each suite's largest workload, all its jobs
    seed: int | None = run_option(None)  # None: chosen at random when the run starts, then recorded
    drop_caches: str = run_option("auto")
    # adaptive: add rounds until every comparison is decided at this precision
    until: float | None = run_option(None, span=Span(0.001, 1))
    max_repeat: int = run_option(12, span=Span(1, 1000))  # adaptive: the most rounds a cell gets
    # seconds the run may take; rounds and runtimes are chosen to fit
    budget: float | None = run_option(None, span=Span(1))
    # no flag: set when the budget is the presets' default (no --repeat, --until, --budget or --runtime
    # given); the engine then scales it with the targets and never cuts the planned rounds short
    default_budget: bool = run_option(False)
    watch: tuple[str, ...] = run_option(())  # host processes measured around each sample
    keep: bool = run_option(False)
    fsync_writes: bool = run_option(False)
    clients: tuple[str, ...] = run_option(())  # --client HOST[:PORT] or ssh://…, then --hosts-file's: all at once
    client_counts: tuple[int, ...] = run_option(())  # --clients 1,2,4: one variant per count (the first N clients)
    # the options workload kinds declare (kinds.base.KindOption: their flags, values and stored names)
    kind_options: KindOptions = run_option(KindOptions())


CONFIG_VERSION = 3  # 1: the untyped dict of mountbench 0.1 (no "version" key); 2: "lab" one record for both labs


@dataclass(frozen=True, kw_only=True)
class RunConfig(RunOptions):
    """How a run was made: its options resolved (seed chosen, baseline named, max_repeat at
    least repeat) plus what the run found. Stored with the run, enough to resume it, and what
    reports state about it. Read and written only through records.codec, which migrates older
    versions. ``until``/``max_repeat`` drive analysis/sequential.py."""

    seed: int
    baseline: str
    default_targets: bool = False  # no target was given: this directory against RAM
    lab: LabFacts | None = None
    # the rounds at which an adaptive run may stop a comparison, fixed by the plan before its first look
    # (engine/session.py, from the budget's pace); () before the plan made them, or for a fixed-size run:
    # --repeat's looks up to --max-repeat (analysis/stats.planned_looks)
    looks: tuple[int, ...] = ()

    @classmethod
    def from_options(cls, options: RunOptions, *, seed: int, baseline: str, default_targets: bool) -> RunConfig:
        given = {option.name: getattr(options, option.name) for option in fields(RunOptions)}
        resolved = {"seed": seed, "baseline": baseline, "max_repeat": max(options.max_repeat, options.repeat)}
        return cls(**given | resolved, default_targets=default_targets)


# What a runner takes and gives for one sample (the interface is kinds.runner.Runner)


class WorkloadFailed(Exception):
    """One sample failed (engine error, ENOSPC, EIO, target gone). Recorded in its cell.
    ``clients``: on several machines at once, what each delivered (the failed ones say why)."""

    def __init__(self, message: str, raw: str = "", clients: tuple[ClientResult, ...] = ()) -> None:
        super().__init__(message)
        self.raw = raw
        self.clients = clients


@dataclass(frozen=True)
class TargetContext:
    """A target ready for work: where it is, what it is, and its scratch directory."""

    target: Target
    info: TargetInfo
    scratch: Path


@dataclass(frozen=True)
class RunSettings:
    """Run-wide options a runner needs to prepare a workload."""

    ram_bytes: int = 0
    workdir: Path = Path(".")  # private temp dir for job files and engine output (never a target)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Prepared:
    """A workload made concrete for one target: exactly what will run, and its caveats."""

    workload: Workload
    target: str
    text: str  # the job file or command line, shown by --dry-run
    caveats: tuple[Caveat, ...]
    buffered: bool  # page cache involved: caches are dropped before it when allowed
    estimate_s: float
    working_set: int | None  # bytes laid out in the scratch directory, when known
    payload: dict[str, Any] = field(default_factory=dict)
    uncached_why: str = "direct I/O"  # why a sample that is not ``buffered`` needs no cache drop


@dataclass(frozen=True)
class Outcome:
    metrics: dict[str, float]
    raw: str
    caveats: tuple[Caveat, ...] = ()
    series: dict[str, list[float]] = field(default_factory=dict)  # values over the sample's time
    clients: tuple[ClientResult, ...] = ()  # per-client parts when the sample ran on several machines
