"""The fio runner: one workload is one fio job, run with --output-format=json+."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from mountbench import model
from mountbench.errors import ToolMissing, UsageError
from mountbench.fiojob import (
    FioJob,
    check_placement,
    duration_bound_s,
    fio_variables,
    render_job,
    wants_direct,
    working_set_bytes,
)
from mountbench.fioparse import FioOutputError, load_fio_json, parse_fio
from mountbench.model import Caveat, Workload
from mountbench.runners.base import Outcome, Prepared, RunSettings, TargetContext, WorkloadFailed
from mountbench.runners.process import run_child
from mountbench.units import format_bytes

MIN_FIO_VERSION = (3, 25)
PARSE_CHECKS_AT_ONCE = 8
# fio's own start-up and exit around a job's runtime (clock calibration, a 100 ms
# sleep in its backend, reaping): measured ~0.25 s per process (bench/overhead.py)
FIO_FIXED_COST_S = 0.3
FIO_PACKAGE_HINT = "install it with 'apt-get install fio' (Debian/Ubuntu), 'dnf install fio' or 'brew install fio'"


@dataclass(frozen=True)
class FioInfo:
    path: str
    version: str  # "fio-3.33"

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return parse_fio_version(self.version)


def parse_fio_version(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not match:
        return (0,)
    return tuple(int(part) for part in match.groups() if part is not None)


def find_fio(required: tuple[int, int] = MIN_FIO_VERSION) -> FioInfo:
    """Locate fio and check its version; raise ToolMissing with the fix."""
    path = shutil.which("fio")
    if path is None:
        raise ToolMissing(f"fio is not installed or not on PATH; {FIO_PACKAGE_HINT}")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolMissing(f"cannot run {path} --version ({exc}); reinstall fio") from None
    info = FioInfo(path, version)
    if info.version_tuple < required:
        wanted = ".".join(map(str, required))
        raise ToolMissing(f"{path} is {version}, mountbench needs fio {wanted} or newer; {FIO_PACKAGE_HINT}")
    return info


class FioRunner:
    kind = "fio"

    def __init__(self, fio: FioInfo, clocksource: str | None = None) -> None:
        """clocksource: the clock a resumed run already used; chosen afresh when None."""
        self.fio = fio
        if clocksource is not None:
            self.clocksource = clocksource  # takes the place of the cached property

    @cached_property
    def engines(self) -> frozenset[str]:
        """I/O engines compiled into this fio (``fio --enghelp``)."""
        out = subprocess.run([self.fio.path, "--enghelp"], capture_output=True, text=True, timeout=30).stdout
        return frozenset(line.strip() for line in out.splitlines()[1:] if line.strip())

    @cached_property
    def variables(self) -> dict[str, int]:
        return fio_variables()

    @cached_property
    def clocksource(self) -> str | None:
        """The clock every fio job of this run uses, chosen once (see choose_clocksource)."""
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
                reason = _fio_message(errors + out) or "fio rejected it"
                failure = UsageError(f"invalid fio job {workload.name!r} ({workload.source}): {reason}")
        return failure

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        """Jobs sharing a ``filename_format``/``filename`` reuse one file set (fio extends,
        never truncates, an existing file); others each lay out their own."""
        job = FioJob.from_spec(workload.spec)
        group = job.get("filename") or job.get("filename_format") or f"job:{job.section}"
        return group, working_set_bytes(job, self.variables)

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
        working_set = working_set_bytes(job, self.variables)
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
        return Prepared(
            workload=workload,
            target=ctx.target.label,
            text=text,
            caveats=tuple(caveats),
            buffered=not direct,
            estimate_s=(duration_bound_s(job) or 60.0) + FIO_FIXED_COST_S,
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
            message = _fio_message(done.stderr) or str(exc)
            raise WorkloadFailed(f"fio failed (exit {done.returncode}): {message}", raw) from None
        if done.returncode != 0 or parsed.errors:
            message = _fio_message(done.stderr) or "; ".join(parsed.errors)
            raise WorkloadFailed(f"fio failed (exit {done.returncode}): {message}", raw)
        return Outcome(parsed.metrics, raw)

    def cleanup(self, ctx: TargetContext) -> None:
        """fio's files live in the scratch directory, removed with it."""


def choose_clocksource(fio_path: str) -> str | None:
    """fio's own clock choice, made once per run instead of once per job.

    At every start, fio on x86 with an invariant TSC runs a ~70 ms test of the TSC
    across CPUs and uses it only if the test passes, else clock_gettime. On virtual
    machines that test can pass for one job and fail for the next, so the jobs of one
    run would time themselves with different clocks. mountbench runs the same test
    once (``fio --cpuclock-test``) and names the result in every job (``clocksource=``),
    which also spares each job the test. None where fio has no TSC choice to make.
    """
    if not sys.platform.startswith("linux"):
        return None
    if platform.machine() not in ("x86_64", "i686", "i386") or not _invariant_tsc():
        return "clock_gettime"  # what fio itself uses on Linux without a reliable TSC
    try:
        proc = subprocess.run([fio_path, "--cpuclock-test"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "clock_gettime"
    return "cpu" if proc.returncode == 0 else "clock_gettime"


def _invariant_tsc(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Linux sets both flags from CPUID's invariant-TSC bit, the bit fio checks."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return "constant_tsc" in flags and "nonstop_tsc" in flags


_METADATA_ENGINES = {"filecreate", "filestat", "filedelete", "ftruncate", "null", "cpuio"}
_SYNC_OPTIONS = ("fsync", "fdatasync", "fsync_on_close", "end_fsync", "sync", "write_barrier")


def cache_sensitive(job: FioJob) -> bool:
    """Can the page cache inflate this buffered job's numbers? Not for metadata-only
    engines, nor for writes that are synced before they count."""
    if (job.get("ioengine") or "psync") in _METADATA_ENGINES:
        return False
    writes_only = (job.get("rw") or job.get("readwrite") or "read") in {"write", "randwrite", "trimwrite"}
    synced = any(job.get(option) not in (None, "0") for option in _SYNC_OPTIONS)
    return not (writes_only and synced)


def _fio_message(stderr: str) -> str:
    """The distinct 'fio:' lines of stderr, or its last line, shortened."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    picked = [line for line in lines if line.startswith("fio:") or "error" in line.lower()] or lines[-1:]
    unique = list(dict.fromkeys(picked))
    text = "; ".join(unique[:3])
    return text if len(text) <= 400 else text[:397] + "..."


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:120]
