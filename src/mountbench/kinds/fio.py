"""The fio kind: one workload is one fio job, run with --output-format=json+.

Presets give jobs as TOML tables, users as fio job files (one workload per
section). fio stays the authority on what options mean; this module reads the few
it needs to describe and plan a job (fiojob.py) and passes every option through.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from mountbench import model
from mountbench.errors import UsageError
from mountbench.fiojob import (
    FioJob,
    check_placement,
    duration_bound_s,
    evaluate_size,
    fio_variables,
    load_job_file,
    render_job,
    wants_direct,
    working_set_bytes,
)
from mountbench.fioparse import FioOutputError, load_fio_json, parse_fio
from mountbench.fiotool import FioInfo, choose_clocksource, fio_engines
from mountbench.kinds.base import Adjustments, RunnerSetup
from mountbench.model import Caveat, Description, SweepPoint, Workload
from mountbench.runners.base import Outcome, Prepared, RunSettings, TargetContext, WorkloadFailed
from mountbench.runners.process import run_child
from mountbench.units import format_bytes, parse_size

PARSE_CHECKS_AT_ONCE = 8
# fio's own start-up and exit around a job's runtime (clock calibration, a 100 ms
# sleep in its backend, reaping): measured ~0.25 s per process (bench/overhead.py)
FIO_FIXED_COST_S = 0.3
# A job file job with no runtime= at all is capped, so one slow target cannot
# take half an hour (study S4's HDD run took 34 minutes).
JOB_FILE_RUNTIME_CAP_S = 60
MIB = 1024 * 1024
SEQUENTIAL_MIN_BS = 64 * 1024  # at or above this block size bandwidth is the headline
MIN_PERCENTILES = 5  # a percentile_list this long asks for the percentile view
SUMMARY_OPTIONS = ("rw", "bs", "iodepth", "numjobs", "size", "filesize", "nrfiles", "runtime", "direct", "ioengine")
# fio options that must agree for workloads to be points of one block-size sweep
SWEEP_KEYS = ("rw", "ioengine", "iodepth", "numjobs", "direct", "buffered", "rwmixread", "fsync", "sync")
_RESERVED_PRESET_KEYS = {"name", "title", "headline", "kind"}


class FioKind:
    name = "fio"

    # --- definitions -------------------------------------------------------------------

    def from_preset(self, preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
        options = [(k, str(v)) for k, v in data.get("global", {}).items()]
        options += [(k, str(v)) for k, v in entry.items() if k not in _RESERVED_PRESET_KEYS]
        spec: dict[str, Any] = FioJob(entry["name"], tuple(options)).to_spec()
        if "headline" in entry:
            spec["headline"] = list(entry["headline"])
        return Workload(entry["name"], self.name, entry.get("title", entry["name"]), f"preset:{preset}", spec)

    def load_job_file(self, path: Path) -> list[Workload]:
        """One workload per section; a job without runtime= is capped (JOB_FILE_RUNTIME_CAP_S)."""
        workloads = []
        for job in load_job_file(path):
            options = list(job.options)
            if job.get("runtime") is None:
                options.append(("runtime", str(JOB_FILE_RUNTIME_CAP_S)))
            capped = FioJob(job.section, tuple(options))
            workloads.append(Workload(job.section, self.name, job.section, f"job:{path}", capped.to_spec()))
        return workloads

    def adjust(self, workload: Workload, adjustments: Adjustments) -> Workload:
        if adjustments.runtime is None:
            return workload
        return with_options(workload, [("runtime", f"{round(adjustments.runtime * 1000)}ms")])

    def declared_size(self, workload: Workload) -> int | None:
        text = FioJob.from_spec(workload.spec).get("size")
        return evaluate_size(text, fio_variables()) if text else None

    def with_size(self, workload: Workload, size: int) -> Workload:
        """A new ``size``; a ``filesize`` (or range) beside it shrinks in proportion, so a job
        of many files (study S1's ten 80–100 MiB files) keeps its shape at any --size."""
        extra: list[tuple[str, str | None]] = [("size", str(size))]
        job = FioJob.from_spec(workload.spec)
        declared = self.declared_size(workload)
        filesize = job.get("filesize")
        if filesize and declared:
            scaled = scale_filesize(filesize, size / declared, floor=block_size(job) or 4096)
            if scaled is not None:
                extra.append(("filesize", scaled))
        return with_options(workload, extra)

    def renamed(self, workload: Workload, name: str, title: str) -> Workload:
        job = FioJob.from_spec(workload.spec)
        spec = {**workload.spec, **FioJob(name.replace("/", "-"), job.options).to_spec()}
        return Workload(name, workload.kind, title, workload.source, spec)

    # --- description ---------------------------------------------------------------------

    def describe(self, workload: Workload) -> Description:
        job = FioJob.from_spec(workload.spec)
        bs = block_size(job)
        directions = rw_directions(job)
        declared = workload.spec.get("headline")
        if declared:
            headline = tuple(declared)
        else:
            large = bs is not None and bs >= SEQUENTIAL_MIN_BS
            headline = tuple(f"{d}.bw" if large else f"{d}.iops" for d in ("read", "write", "trim"))
        return Description(
            summary=" ".join(f"{key}={job.get(key)}" for key in SUMMARY_OPTIONS if job.get(key) is not None),
            options=tuple(key if value is None else f"{key}={value}" for key, value in job.options),
            headline=headline,
            directions=directions,
            block_size=bs,
            percentiles=_asked_percentiles(job),
            duration_bound_s=duration_bound_s(job),
            space_group=job.get("filename") or job.get("filename_format") or f"job:{job.section}",
            space_bytes=working_set_bytes(job, fio_variables()),
            sweep=_detected_sweep(job, bs),
        )

    def make_runner(self, setup: RunnerSetup) -> FioRunner:
        return FioRunner(setup.fio, setup.clocksource)


KIND = FioKind()


def with_options(workload: Workload, extra: list[tuple[str, str | None]]) -> Workload:
    """The workload with options appended (later assignments win in fio)."""
    job = FioJob.from_spec(workload.spec)
    job = FioJob(job.section, (*job.options, *extra))
    return Workload(workload.name, workload.kind, workload.title, workload.source, {**workload.spec, **job.to_spec()})


def scale_filesize(text: str, factor: float, floor: int) -> str | None:
    """``80m-100m`` × 0.1 -> ``8388608-10485760`` (bytes, 4 KiB multiples, at least ``floor``);
    None for what cannot be read (a variable, an expression)."""
    try:
        bounds = [parse_size(part) for part in text.split("-")]
    except UsageError:
        return None
    if len(bounds) not in (1, 2):
        return None
    scaled = [max(floor, int(bound * factor) // 4096 * 4096) for bound in bounds]
    return "-".join(map(str, scaled))


def block_size(job: FioJob) -> int | None:
    """The job's block size in bytes; None for ranges, variables and per-direction splits."""
    text = job.get("bs") or job.get("blocksize") or "4k"
    if "," in text or "-" in text or ":" in text:
        return None
    try:
        return parse_size(text)
    except UsageError:
        return None


def rw_option(job: FioJob) -> str:
    return job.get("rw") or job.get("readwrite") or "read"


def rw_directions(job: FioJob) -> tuple[str, ...]:
    rw = rw_option(job).split(":")[0]
    if rw in ("rw", "readwrite", "randrw"):
        return ("read", "write")
    if "trim" in rw:
        return ("trim",)
    return ("write",) if "write" in rw else ("read",)


def _asked_percentiles(job: FioJob) -> tuple[float, ...]:
    listed = [p.strip() for p in (job.get("percentile_list") or "").split(":") if p.strip()]
    if len(listed) < MIN_PERCENTILES:
        return ()
    try:
        return tuple(float(p) for p in listed)
    except ValueError:
        return ()


def _detected_sweep(job: FioJob, bs: int | None) -> SweepPoint | None:
    """Jobs with a plain block size that agree on SWEEP_KEYS are points of one curve."""
    if bs is None:
        return None
    values = {key: rw_option(job) if key == "rw" else job.get(key) for key in SWEEP_KEYS}
    settings = " ".join(f"{key}={value}" for key, value in values.items() if value is not None)
    text = job.get("bs") or job.get("blocksize") or "4k"
    return SweepPoint(group=settings, option="bs", value=text, number=float(bs), generated=False)


# --- running -------------------------------------------------------------------------------


class FioRunner:
    kind = "fio"

    def __init__(self, fio: FioInfo, clocksource: str | None = None) -> None:
        """clocksource: the clock a resumed run already used; chosen afresh when None."""
        self.fio = fio
        if clocksource is not None:
            self.clocksource = clocksource  # takes the place of the cached property

    @property
    def engines(self) -> frozenset[str]:
        return fio_engines(self.fio.path)

    @cached_property
    def clocksource(self) -> str | None:
        """The clock every fio job of this run uses, chosen once (see fiotool.choose_clocksource)."""
        return choose_clocksource(self.fio.path)

    def _clock_override(self, job: FioJob) -> list[tuple[str, str | None]]:
        if self.clocksource is None or job.get("clocksource") is not None:
            return []  # a job that names its clock keeps it
        return [("clocksource", self.clocksource)]

    def check(self, workloads: list[Workload]) -> None:
        """Validate every job with fio's own parser before any target is touched.

        The checks run side by side, a few at a time: each is a short fio process
        (most of it fio's start-up), and a job file may have hundreds of sections."""
        failure: UsageError | None = None
        for start in range(0, len(workloads), PARSE_CHECKS_AT_ONCE):
            failure = failure or self._check_batch(workloads[start : start + PARSE_CHECKS_AT_ONCE])
        if failure is not None:
            raise failure

    def _check_batch(self, workloads: list[Workload]) -> UsageError | None:
        """Start one ``fio --parse-only`` per workload, wait for all; the first rejection."""
        jobs = [FioJob.from_spec(workload.spec) for workload in workloads]
        for job, workload in zip(jobs, workloads, strict=True):
            check_placement(job, workload.source)  # again here: resumed and imported runs skip parsing
        checks = []  # every placement is checked before any fio starts: a refusal leaves none behind
        for job, workload in zip(jobs, workloads, strict=True):
            overrides = [("directory", "/nonexistent-mountbench-parse-check"), *self._clock_override(job)]
            child = subprocess.Popen(
                [self.fio.path, "--parse-only", "-"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            checks.append((workload, child, render_job(job, overrides)))
        failure = None
        for workload, child, text in checks:
            try:
                out, errors = child.communicate(text, timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                out, errors = child.communicate()
            if child.returncode != 0 and failure is None:
                reason = fio_message(errors + out) or "fio rejected it"
                failure = UsageError(f"invalid fio job {workload.name!r} ({workload.source}): {reason}")
        return failure

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        """Jobs sharing a ``filename_format``/``filename`` reuse one file set (fio extends,
        never truncates, an existing file); others each lay out their own."""
        return workload.description.space_group, workload.description.space_bytes

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        job = FioJob.from_spec(workload.spec)
        overrides: list[tuple[str, str | None]] = [("directory", str(ctx.scratch)), *self._clock_override(job)]
        caveats: list[Caveat] = []
        direct = wants_direct(job)
        if direct and not ctx.info.odirect:
            overrides += [("direct", "0"), ("buffered", "1")]
            caveats.append(Caveat(model.ODIRECT_REFUSED, f"buffered: O_DIRECT refused ({ctx.info.odirect_detail})"))
            direct = False
        elif direct and sys.platform == "darwin":
            caveats.append(
                Caveat(model.NOCACHE_MACOS, "direct I/O on macOS is F_NOCACHE, which still serves cached pages")
            )
        engine = job.get("ioengine") or "psync"
        if self.engines and engine not in self.engines:
            fallback = "psync"
            overrides.append(("ioengine", fallback))
            caveats.append(Caveat(model.ENGINE_FALLBACK, f"ioengine {engine} is not available here; ran {fallback}"))
        working_set = workload.description.space_bytes
        if not direct and cache_sensitive(job):
            twice_ram = 2 * settings.ram_bytes
            if working_set is None or working_set < twice_ram:
                size_text = format_bytes(working_set) if working_set is not None else "unknown"
                caveats.append(
                    Caveat(
                        model.PAGE_CACHE,
                        f"page cache may serve these: buffered I/O on a working set of {size_text}, "
                        f"less than twice the RAM ({format_bytes(twice_ram)})",
                    )
                )
        comment = f"mountbench: workload {workload.name} ({workload.source}) on target {ctx.target.label}"
        text = render_job(job, overrides, comment)
        bound = workload.description.duration_bound_s
        return Prepared(
            workload=workload,
            target=ctx.target.label,
            text=text,
            caveats=tuple(caveats),
            buffered=not direct,
            estimate_s=(bound or 60.0) + FIO_FIXED_COST_S,
            working_set=working_set,
        )

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """fio lays out its own files; nothing to do."""

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        stem = _slug(f"{prepared.target}-{prepared.workload.name}")
        job_path = settings.workdir / f"{stem}.fio"
        out_path = settings.workdir / f"{stem}.json"
        job_path.write_text(prepared.text)
        out_path.unlink(missing_ok=True)
        # generous: laying out the working set at 5 MB/s (a slow network mount) comes on top
        layout_s = (prepared.working_set or 0) / 5e6
        timeout = 3 * prepared.estimate_s + layout_s + 120
        done = run_child(
            [self.fio.path, "--output-format=json+", f"--output={out_path}", str(job_path)],
            cwd=settings.workdir,
            timeout=timeout,
        )
        raw = out_path.read_text(errors="replace") if out_path.exists() else ""
        if done.timed_out:
            raise WorkloadFailed(f"fio did not finish within {timeout:.0f} s (is the target hung?)", raw)
        try:
            parsed = parse_fio(load_fio_json(raw))
        except FioOutputError as exc:
            message = fio_message(done.stderr) or str(exc)
            raise WorkloadFailed(f"fio failed (exit {done.returncode}): {message}", raw) from None
        if done.returncode != 0 or parsed.errors:
            message = fio_message(done.stderr) or "; ".join(parsed.errors)
            raise WorkloadFailed(f"fio failed (exit {done.returncode}): {message}", raw)
        return Outcome(parsed.metrics, raw)

    def cleanup(self, ctx: TargetContext) -> None:
        """fio's files live in the scratch directory, removed with it."""


_METADATA_ENGINES = {"filecreate", "filestat", "filedelete", "ftruncate", "null", "cpuio"}
_SYNC_OPTIONS = ("fsync", "fdatasync", "fsync_on_close", "end_fsync", "sync", "write_barrier")


def cache_sensitive(job: FioJob) -> bool:
    """Can the page cache inflate this buffered job's numbers? Not for metadata-only
    engines, nor for writes that are synced before they count."""
    if (job.get("ioengine") or "psync") in _METADATA_ENGINES:
        return False
    writes_only = rw_option(job) in {"write", "randwrite", "trimwrite"}
    synced = any(job.get(option) not in (None, "0") for option in _SYNC_OPTIONS)
    return not (writes_only and synced)


def fio_message(stderr: str) -> str:
    """The distinct 'fio:' lines of stderr, or its last line, shortened."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    picked = [line for line in lines if line.startswith("fio:") or "error" in line.lower()] or lines[-1:]
    unique = list(dict.fromkeys(picked))
    text = "; ".join(unique[:3])
    return text if len(text) <= 400 else text[:397] + "..."


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:120]
