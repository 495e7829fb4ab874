"""The fio kind: one workload is one fio job, or the sections of a job file that fio runs
together, run with --output-format=json+.

Presets give jobs as TOML tables, users as fio job files: run as fio runs them
(fio/jobgroups.py says which sections are one workload), checked before the first sample
(engines, placement, fio --parse-only on the text as written) and flagged for what their
figures are. fio stays the authority on what options mean; this module reads the few it
needs to describe and plan a job (fio/jobfile.py) and passes every option through.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any

from mountbench import model
from mountbench.analysis.plausible import FSYNC_SUFFIX
from mountbench.errors import UsageError
from mountbench.fio import engines, sweeps
from mountbench.fio.binary import FioInfo, choose_clocksource, fio_engines
from mountbench.fio.jobfile import (
    FioJob,
    Section,
    check_placement,
    duration_bound_s,
    evaluate_count,
    evaluate_size,
    fio_variables,
    fio_view_problem,
    merged_jobs,
    parse_fio_time,
    read_job_file,
    render_job,
    render_sections,
    sections_from_spec,
    sections_to_spec,
    truthy,
    wants_direct,
    working_set_bytes,
)
from mountbench.fio.jobgroups import group_sections, timeline_bound_s
from mountbench.fio.parse import FioOutputError, job_metrics, load_fio_json, parse_fio, short_jobs
from mountbench.host import contain, devstats
from mountbench.host.contain import Fence
from mountbench.host.process import run_child
from mountbench.kinds import fiofiles, fioseries
from mountbench.kinds.base import Adjustments, RunnerSetup, new_workload
from mountbench.kinds.runner import RunnerDefaults
from mountbench.model import (
    Caveat,
    Description,
    Outcome,
    Prepared,
    RunSettings,
    SweepAxis,
    SweepPoint,
    TargetContext,
    Workload,
    WorkloadFailed,
)
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
SUMMARY_OPTIONS = ("rw", "bs", "iodepth", "numjobs", "size", "filesize", "nrfiles", "runtime", "direct", "ioengine",
                   "end_fsync")  # fmt: skip
_RESERVED_PRESET_KEYS = {"name", "title", "headline", "kind", "caveat"}
# options that make a plain bs= meaningless: a block size sweep of such a job is refused
_BLOCK_SIZE_SHAPES = ("bssplit", "bsrange", "blocksize_range", "blocksize_unaligned", "bs_unaligned")
# fio's own spelling of what a job file may also write another way
_OPTION_ALIASES = {"blocksize": "bs", "readwrite": "rw", "timeout": "runtime"}


CLOCK_FACT = "fio_clocksource"  # the run's host facts: the clock every fio job used
ONE_AT_A_TIME = "one-at-a-time:"  # the space group of a job file's workloads laid out one at a time


METHOD = "fio does the I/O and reports in JSON; mountbench only plans, parses and stores."


class FioKind:
    name = "fio"
    takes_runtime = True  # --runtime (and --budget) shorten its samples
    options = (fiofiles.FILE_STATE_OPTION,)

    # --- definitions -------------------------------------------------------------------

    def from_preset(self, preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
        options = [(k, str(v)) for k, v in data.get("global", {}).items()]
        options += [(k, str(v)) for k, v in entry.items() if k not in _RESERVED_PRESET_KEYS]
        spec: dict[str, Any] = FioJob(entry["name"], tuple(options)).to_spec()
        if "headline" in entry:
            spec["headline"] = list(entry["headline"])
        if "caveat" in entry:  # a fact about what the job measures, shown on its every number
            caveat = Caveat(str(entry["caveat"]["code"]), str(entry["caveat"]["text"]))
            spec["caveats"] = [caveat.to_dict()]
        return new_workload(KIND, entry["name"], entry.get("title", entry["name"]), f"preset:{preset}", spec)

    def load_job_file(self, path: Path) -> list[Workload]:
        """The file's workloads as fio runs it (fio/jobgroups.py): sections that run together, wait
        for each other or share files are one workload, kept as written; independent sections
        (one after another, no shared files) are a workload each. A job without runtime= is
        capped (JOB_FILE_RUNTIME_CAP_S). Lone sections that differ in one sweepable option alone
        are marked as a detected sweep."""
        source = f"job:{path}"
        groups = group_sections(read_job_file(path), str(path))
        singles = [group.jobs[0] for group in groups if len(group.jobs) == 1]
        points = sweeps.detect([(job.section, effective_options(job)) for job in singles], source)
        workloads = []
        for group in groups:
            sections = _capped(group.sections)
            jobs = merged_jobs(sections)
            primary = jobs[0] if len(jobs) == 1 else FioJob(_section(group.name), jobs[0].options)
            spec: dict[str, Any] = {**primary.to_spec(), "sections": sections_to_spec(sections)}
            if group.reason:
                spec["grouping"] = group.reason
            own = sorted({job.get("runtime") or "" for job in merged_jobs(group.sections)} - {""})
            if own:
                spec["file_runtime"] = own
            if len(jobs) == 1 and primary.section in points:
                spec["sweep"] = points[primary.section].to_dict()
            workloads.append(new_workload(KIND, group.name, group.name, source, spec))
        return workloads

    def sweep(self, workload: Workload, axes: Sequence[SweepAxis]) -> list[Workload] | None:
        """One workload per point of the axes' grid, each carrying its point (generated=True)
        and the swept values in its name, title and fio options."""
        if len(jobs_of(workload)) > 1:
            return None  # sections that run together are run as written: a sweep would change them all
        job = FioJob.from_spec(workload.spec)
        options = {axis.option for axis in axes}
        shaped = [key for key in _BLOCK_SIZE_SHAPES if job.get(key) is not None]
        if "bs" in options and shaped:
            raise UsageError(
                f"--sweep bs cannot apply to workload {workload.name!r} ({workload.source}): it sets "
                f"{', '.join(shaped)}; sweep another option or leave that workload out with --only"
            )
        group = sweeps.group_name(workload.source, workload.name, axes)
        kb_base_1000 = job.get("kb_base") == "1000"  # then fio reads 4k as 4000: pass bytes
        # fio names a job's files after the job: the points keep the files the job would have had,
        # so a sweep lays out (and needs space for) one file set, not one per point
        shared: list[tuple[str, str | None]] = []
        if job.get("filename") is None and job.get("filename_format") is None:
            shared.append(("filename_format", f"{job.section}.$jobnum.$filenum"))
        swept = []
        for coordinates in sweeps.grid(axes):
            name = sweeps.point_name(workload.name, coordinates)
            extra = shared + [(c.option, str(int(c.number)) if kb_base_1000 else c.value) for c in coordinates]
            point_job = FioJob(_section(name), (*job.options, *extra))
            spec = {**workload.spec, **point_job.to_spec(), **_sections_spec(workload.spec, extra, point_job.section)}
            spec["sweep"] = sweeps.generated_point(group, coordinates).to_dict()
            swept.append(
                new_workload(KIND, name, sweeps.point_title(workload.title, coordinates), workload.source, spec)
            )
        return swept

    def adjust(self, workload: Workload, adjustments: Adjustments) -> Workload:
        if adjustments.runtime is None:
            return workload
        adjusted = with_options(workload, [("runtime", f"{round(adjustments.runtime * 1000)}ms")])
        own = workload.spec.get("file_runtime")
        if not own:
            return adjusted
        said = Caveat(
            model.RUNTIME_REPLACED,
            f"--runtime {adjustments.runtime:g} replaced the job file's runtime={', '.join(own)}: each sample runs "
            f"{adjustments.runtime:g} s, not what the file asks",
        )
        return with_caveat(adjusted, said)

    def declared_size(self, workload: Workload) -> int | None:
        """The workload's whole working set as written: every set of files its jobs lay out, each
        once, with all its clones (numjobs); None when no job's size can be told."""
        known = [size for size, _ in _file_sets(jobs_of(workload)) if size]
        return sum(known) if known else None

    def with_size(self, workload: Workload, size: int) -> Workload:
        """The workload's whole working set made ``size`` (every job and every clone together, not
        its largest job: a file of 32 jobs of 32 MiB at --size 256M gets 8 MiB a job, never 256 MiB
        a job), each job (and every ``filesize``, ``io_size`` beside it) scaled by one factor and
        rounded to its block size, so a job of many files (study S1's ten 80–100 MiB files) or of
        several sections keeps its shape at any --size. A job with no size of its own
        (``fill_device=1``: fill the whole filesystem) gets its clones' share, and says so."""
        jobs = jobs_of(workload)
        sets = _file_sets(jobs)
        known = sum(bytes_ for bytes_, _ in sets if bytes_)
        unknown_clones = sum(clones for bytes_, clones in sets if not bytes_)
        each_unknown = max(1, size // max(1, sum(clones for _, clones in sets))) if unknown_clones else size
        factor = (size - each_unknown * unknown_clones) / known if known else 1.0
        resized = with_job_options(workload, [sized_options(job, each_unknown, factor) for job in jobs])
        filled = [job.section for job in jobs if truthy(job.get("fill_device"))]
        if filled:
            text = (
                f"fill_device=1 of [{', '.join(filled)}] replaced by size={each_unknown} (--size): mountbench writes "
                "a sized working set, never the whole filesystem"
            )
            resized = with_caveat(resized, Caveat(model.SIZE_REPLACED, text))
        return resized

    def fsync_variant(self, workload: Workload) -> Workload | None:
        """The workload ending with an fsync of what it wrote (end_fsync=1, counted in its time),
        as ``NAME-fsync`` (run --fsync-writes); None when it writes nothing or syncs already."""
        job = FioJob.from_spec(workload.spec)
        if "write" not in workload.description.directions or syncs_writes(job):
            return None
        synced = with_options(workload, [("end_fsync", "1")])
        return self.renamed(synced, workload.name + FSYNC_SUFFIX, f"{workload.title}, fsync at end")

    def renamed(self, workload: Workload, name: str, title: str) -> Workload:
        job = FioJob.from_spec(workload.spec)
        if len(jobs_of(workload)) > 1:  # sections run together keep their names (fio names their files)
            return new_workload(KIND, name, title, workload.source, dict(workload.spec))
        section = _section(name)
        spec = {**workload.spec, **FioJob(section, job.options).to_spec(), **_sections_spec(workload.spec, [], section)}
        return new_workload(KIND, name, title, workload.source, spec)

    # --- description ---------------------------------------------------------------------

    def describe(self, workload: Workload) -> Description:
        jobs = jobs_of(workload)
        if len(jobs) > 1:
            return describe_group(workload, jobs)
        job = FioJob.from_spec(workload.spec)
        bs = block_size(job)
        directions = rw_directions(job)
        declared = workload.spec.get("headline")
        point = SweepPoint.from_dict(workload.spec["sweep"]) if workload.spec.get("sweep") else None
        if declared:
            headline = tuple(declared)
        elif point is not None and any(c.option == "bs" for c in point.coordinates):
            headline = tuple(f"{d}.bw" for d in ("read", "write", "trim"))  # one unit along the whole curve
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
            sweep=point,
            method=METHOD,
            pattern=mirror_pattern(job),
        )

    def preset_alone(self, adjustments: Adjustments) -> str | None:
        return None  # fio's overrides (--size, --runtime) change a preset, they choose none

    def make_runner(self, setup: RunnerSetup) -> FioRunner:
        clock = setup.resumed_host.get(CLOCK_FACT)  # a resumed run keeps the clock it chose
        file_state = fiofiles.chosen_file_state(setup.options)
        return FioRunner(setup.fio, clock if clock in ("cpu", "clock_gettime") else None, file_state)


KIND = FioKind()


def render_workload(workload: Workload, overrides: Sequence[tuple[str, str | None]], comment: str = "") -> str:
    """The exact job file fio runs: a job file's sections as written (rendered with every
    override after each job's own options), or a preset's one job."""
    if workload.spec.get("sections"):
        return render_sections(sections_from_spec(workload.spec["sections"]), overrides, comment)
    return render_job(FioJob.from_spec(workload.spec), overrides, comment)


_RATE_OPTIONS = ("rate", "rate_iops", "rate_min", "rate_iops_min", "rate_cycle")
_NO_VERIFY = (None, "0", "null", "none")


def job_file_caveats(workload: Workload, jobs: Sequence[FioJob]) -> list[Caveat]:
    """What the workload's figures are, said on each of them: run together or measured alone (and
    why), capped by the job's own rate, read back by fio's verify, or beside a job that moves no data."""
    found: list[Caveat] = []
    if workload.spec.get("grouping"):
        found.append(Caveat(model.JOB_GROUPING, str(workload.spec["grouping"])))
    capped = [f"[{job.section}] {key}={job.get(key)}" for job in jobs for key in _RATE_OPTIONS[:2] if job.get(key)]
    if capped:
        found.append(
            Caveat(
                model.RATE_CAPPED,
                f"rate-capped: {', '.join(capped)}: the job holds its own rate, so the figure is the cap, "
                "not the target's speed",
            )
        )
    verifying = [
        f"[{job.section}] verify={job.get('verify')}"
        for job in jobs
        if (job.get("verify") or None) not in _NO_VERIFY and job.get("do_verify") != "0"
    ]
    if verifying:
        found.append(
            Caveat(
                model.VERIFY_READS,
                f"verify reads: {', '.join(verifying)}: fio reads back and checks what the job wrote; its read "
                "figures are that verify pass, not a read workload",
            )
        )
    idle = [job.section for job in jobs if engines.engine_name(job.get("ioengine")) in engines.NO_IO]
    if idle and len(idle) < len(jobs):
        found.append(
            Caveat(
                model.NO_IO,
                f"no I/O: [{', '.join(idle)}] moves no data (a CPU or null engine); it runs beside the others "
                "and adds nothing to their figures",
            )
        )
    return found


def _with_files(jobs: Sequence[FioJob]) -> list[FioJob]:
    return [job for job in jobs if fiofiles.has_working_files(job)]


def _working_files(jobs: Sequence[FioJob], scratch: Path) -> list[fiofiles.WorkingFile] | None:
    """The files of all the jobs, each once (sections may share one); None when a job's names
    cannot be told (then none are checked)."""
    found: dict[Path, fiofiles.WorkingFile] = {}
    for job in _with_files(jobs):
        files = fiofiles.working_files(job, scratch, fio_variables())
        if files is None:
            return None
        for file in files:
            found.setdefault(file.path, file)
    return list(found.values()) or None


def describe_group(workload: Workload, jobs: list[FioJob]) -> Description:
    """Sections run together: what they move between them, the time fio's schedule takes
    (phases one after another, startdelay counted), the files of all of them."""
    moving = [job for job in jobs if engines.engine_name(job.get("ioengine")) not in engines.NO_IO] or jobs
    directions = tuple(dict.fromkeys(d for job in moving for d in rw_directions(job)))
    sizes = {block_size(job) for job in moving}
    bs = sizes.pop() if len(sizes) == 1 else None
    declared = workload.spec.get("headline")
    large = bs is not None and bs >= SEQUENTIAL_MIN_BS
    headline = tuple(declared) if declared else tuple(f"{d}.bw" if large else f"{d}.iops" for d in DIRECTIONS)
    parts = []
    for job in jobs:
        said = " ".join(f"{key}={job.get(key)}" for key in ("rw", "bs", "ioengine", "numjobs") if job.get(key))
        parts.append(f"[{job.section}] {said}".strip())
    summary = f"{len(jobs)} jobs as fio runs them: " + "; ".join(parts)
    sections = sections_from_spec(workload.spec["sections"])
    space: int | None = 0
    seen: set[str] = set()
    for job in moving:
        key = job.get("filename") or job.get("filename_format") or f"{job.section}.$jobnum.$filenum"
        if key in seen:
            continue
        seen.add(key)
        each = working_set_bytes(job, fio_variables())
        space = None if space is None or each is None else space + each
    return Description(
        summary=summary if len(summary) <= 300 else summary[:297] + "...",
        options=tuple(render_sections(sections, []).splitlines()),
        headline=headline,
        directions=directions,
        block_size=bs,
        percentiles=_asked_percentiles(jobs[0]),
        duration_bound_s=timeline_bound_s(jobs),
        space_group=f"job:{workload.source}:{workload.name}",
        space_bytes=space,
        method=METHOD,
    )


DIRECTIONS = ("read", "write", "trim")


def with_options(workload: Workload, extra: list[tuple[str, str | None]]) -> Workload:
    """The workload with options appended to every job (later assignments win in fio)."""
    return with_job_options(workload, [list(extra) for _ in jobs_of(workload)])


def with_job_options(workload: Workload, per_job: Sequence[Sequence[tuple[str, str | None]]]) -> Workload:
    """The workload with each job's own options appended (``per_job`` in job order)."""
    job = FioJob.from_spec(workload.spec)
    job = FioJob(job.section, (*job.options, *per_job[0]))
    spec = {**workload.spec, **job.to_spec()}
    if "sections" in workload.spec:
        extras = iter(per_job)
        sections = [
            s if s.is_global else replace(s, options=(*s.options, *next(extras)))
            for s in sections_from_spec(workload.spec["sections"])
        ]
        spec["sections"] = sections_to_spec(sections)
    return new_workload(KIND, workload.name, workload.title, workload.source, spec)


def with_caveat(workload: Workload, caveat: Caveat) -> Workload:
    """The workload carrying a caveat of its own (shown on its every figure), replacing one of that code."""
    kept = [c for c in workload.spec.get("caveats") or () if c.get("code") != caveat.code]
    spec = {**workload.spec, "caveats": [*kept, caveat.to_dict()]}
    return new_workload(KIND, workload.name, workload.title, workload.source, spec)


def jobs_of(workload: Workload) -> list[FioJob]:
    """The workload's jobs, globals merged: the sections of a job file, or the one job of a preset."""
    if workload.spec.get("sections"):
        return merged_jobs(sections_from_spec(workload.spec["sections"]))
    return [FioJob.from_spec(workload.spec)]


def _sections_spec(spec: Mapping[str, Any], extra: Sequence[tuple[str, str | None]], section: str) -> dict[str, Any]:
    """A lone job's sections as written, its job section renamed and given ``extra``; {} for a preset."""
    if not spec.get("sections"):
        return {}
    sections = [
        s if s.is_global else replace(s, name=section, options=(*s.options, *extra))
        for s in sections_from_spec(spec["sections"])
    ]
    return {"sections": sections_to_spec(sections)}


def _capped(sections: Sequence[Section]) -> tuple[Section, ...]:
    """Every job that sets no runtime (its globals neither) gets JOB_FILE_RUNTIME_CAP_S."""
    out: list[Section] = []
    globals_seen: list[tuple[str, str | None]] = []
    for section in sections:
        if section.is_global:
            globals_seen += section.options
            out.append(section)
            continue
        merged = FioJob(section.name, (*globals_seen, *section.options))
        extra = () if merged.get("runtime") is not None else (("runtime", str(JOB_FILE_RUNTIME_CAP_S)),)
        out.append(replace(section, options=(*section.options, *extra)))
    return tuple(out)


def _file_sets(jobs: Sequence[FioJob]) -> list[tuple[int | None, int]]:
    """Each set of files the jobs lay out, once (sections that name one file share it): its bytes
    (None when only fio can tell) and the clones that lay it out (numjobs; one for a named file, which
    the clones share). Jobs that move no data lay out nothing."""
    seen: set[str] = set()
    found = []
    for job in jobs:
        if engines.engine_name(job.get("ioengine")) in engines.NO_IO:
            continue
        key = job.get("filename") or job.get("filename_format") or f"{job.section}.$jobnum.$filenum"
        if key in seen:
            continue
        seen.add(key)
        clones = 1 if job.get("filename") else evaluate_count(job.get("numjobs") or "1", fio_variables()) or 1
        each = own_size(job)
        found.append((each * clones if each else None, clones))
    return found


def own_size(job: FioJob) -> int | None:
    """Bytes one clone of the job works on: size=, else filesize × nrfiles; None when unknown."""
    variables = fio_variables()
    if job.get("size"):
        return evaluate_size(job.get("size") or "", variables)
    if job.get("filesize"):
        each = evaluate_size((job.get("filesize") or "").split("-")[-1], variables)
        return each * _count(job.get("nrfiles")) if each else None
    return None


def _round_block(value: float, block: int) -> int:
    return max(block, int(value) // block * block)


def sized_options(job: FioJob, size: int, factor: float) -> list[tuple[str, str | None]]:
    """The options that give one job its share of --size: its size, filesize and io_size each
    × ``factor``, rounded down to the job's block size (at least one block); a job with no size
    of its own (fill_device, none) gets ``size``."""
    block = block_size(job) or 4096
    variables = fio_variables()
    extra: list[tuple[str, str | None]] = []
    if truthy(job.get("fill_device")):
        extra.append(("fill_device", "0"))
    own = evaluate_size(job.get("size") or "", variables) if job.get("size") else None
    filesize = job.get("filesize")
    scaled = scale_filesize(filesize, factor, floor=block) if filesize else None
    if own:
        new_size: int | None = _round_block(own * factor, block)
    elif scaled is None:
        new_size = _round_block(size, block)  # no size of its own: the one asked
    else:
        new_size = None  # filesize alone: fio sizes the job from its files
    if scaled is not None:
        extra.append(("filesize", scaled))
        if new_size is not None:
            # files cannot shrink below one block: when nrfiles of them no longer fit in the size,
            # the size grows to hold them all, or fio would leave the last files unwritten
            largest = max(int(bound) for bound in scaled.split("-"))
            new_size = max(new_size, _count(job.get("nrfiles")) * largest)
    if new_size is not None:
        extra.append(("size", str(new_size)))
    for key in ("io_size", "io_limit"):
        limit = evaluate_size(job.get(key) or "", variables) if job.get(key) else None
        if limit:
            extra.append((key, str(_round_block(limit * factor, block))))
    return extra


def _count(text: str | None) -> int:
    """A count option (nrfiles, numjobs) as a number; 1 when absent or not a plain number."""
    try:
        return max(1, int(text or 1))
    except ValueError:
        return 1


def scale_filesize(text: str, factor: float, floor: int) -> str | None:
    """``80m-100m`` × 0.1 -> ``8388608-10485760`` (bytes, multiples of ``floor``, the job's block
    size, and at least one); None for what cannot be read (a variable, an expression)."""
    try:
        bounds = [parse_size(part) for part in text.split("-")]
    except UsageError:
        return None
    if len(bounds) not in (1, 2):
        return None
    scaled = [_round_block(bound * factor, floor) for bound in bounds]
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


_MIRRORED = {"read": "seq", "write": "seq", "randread": "rand", "randwrite": "rand"}
_PATTERN_OPTIONS = ("bs", "iodepth", "numjobs", "ioengine", "direct", *("fsync", "fdatasync", "end_fsync", "sync"))


def mirror_pattern(job: FioJob) -> str:
    """The job's access pattern without its direction, for a job that only reads or only
    writes with direct I/O ("" otherwise): ``seq bs=1M iodepth=8 ...``; a read and a write
    job with the same pattern are the same job in two directions."""
    options = effective_options(job)
    kind = _MIRRORED.get(rw_option(job).split(":")[0])
    if kind is None or options.get("direct") != "1":
        return ""
    return " ".join([kind, *(f"{key}={options[key]}" for key in _PATTERN_OPTIONS if key in options)])


def effective_options(job: FioJob) -> dict[str, str]:
    """Option name -> the value in force (later assignments win, a bare flag is "1"),
    with fio's aliases folded: what decides whether two jobs do the same work."""
    found: dict[str, str] = {}
    for key, value in job.options:
        name = key.strip().lower()
        found[_OPTION_ALIASES.get(name, name)] = "1" if value is None else value.strip()
    return found


def _section(name: str) -> str:
    """A fio section name for a workload name (``seqw@bs=4k`` -> ``seqw-bs-4k``): fio
    may use it in file names, so only letters, digits, dots, dashes and underscores."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "job"


# --- running -------------------------------------------------------------------------------


class FioRunner(RunnerDefaults):
    kind = "fio"

    def shrink_hint(self, workloads: Sequence[Workload]) -> str:
        return "pass --size to shrink the fio working set"

    def __init__(self, fio: FioInfo, clocksource: str | None = None, file_state: str = "per-round") -> None:
        """clocksource: the clock a resumed run already used; chosen afresh when None.
        file_state: how every round sees the working files (kinds/fiofiles.py)."""
        self.fio = fio
        if clocksource is not None:
            self.clocksource = clocksource  # takes the place of the cached property
        self.file_state = file_state
        # (target, file group) -> the workloads that took a sample on the files as last laid out:
        # a workload coming back to them starts a new round, and the files are laid out anew
        self.layouts: dict[tuple[str, str], set[str]] = {}
        # (target, job file) -> each file group of the file's workloads laid out one at a time, its files
        # (prepare); and the groups whose files the target may hold (space_needed, _make_room)
        self.file_sets: dict[tuple[str, str], dict[str, list[fiofiles.WorkingFile]]] = {}
        self.present: dict[tuple[str, str], set[str]] = {}
        self.placement = random.Random()  # the spacers' sizes (fiofiles.place_spacer); placement is never replayed

    @property
    def engines(self) -> frozenset[str]:
        return fio_engines(self.fio.path)

    @cached_property
    def clocksource(self) -> str | None:
        """The clock every fio job of this run uses, chosen once (see fio/binary.py choose_clocksource)."""
        return choose_clocksource(self.fio.path)

    def host_facts(self) -> dict[str, Any]:
        return {CLOCK_FACT: self.clocksource or "fio's default"}

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
        """Start one ``fio --parse-only`` per workload, wait for all; the first rejection. A job
        file's workload is checked as written (its globals where they stand), with only the
        overrides mountbench must make (directory=, the run's clock)."""
        for workload in workloads:
            for job in jobs_of(workload):
                check_placement(job, workload.source)  # again here: resumed and imported runs skip parsing
            self._check_engines(workload)
        checks = []  # every placement is checked before any fio starts: a refusal leaves none behind
        for workload in workloads:
            job = FioJob.from_spec(workload.spec)
            overrides = [("directory", "/nonexistent-mountbench-parse-check"), *self._clock_override(job)]
            child = contain.popen(
                [self.fio.path, "--parse-only", "--debug=parse", "-"],
                contain.NOTHING,  # fio only reads here: it may write nothing anywhere
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            checks.append((workload, child, render_workload(workload, overrides)))
        failure = None
        for workload, child, text in checks:
            try:
                out, errors = child.communicate(text, timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                out, errors = child.communicate()
            if child.returncode != 0 and failure is None:
                reason = fio_message(errors + _without_debug(out)) or "fio rejected it"
                failure = UsageError(f"invalid fio job {workload.name!r} ({workload.source}): {reason}")
            seen = fio_view_problem(out)
            if seen and failure is None:
                failure = UsageError(f"fio job {workload.name!r} ({workload.source}): {seen}")
        return failure

    def _check_engines(self, workload: Workload) -> None:
        """A job file's engines must be in this fio (never replaced), and the workload must move
        data; fill_device (fill the whole filesystem) needs --size. Presets keep their fallback."""
        if not workload.source.startswith("job:"):
            return
        jobs = jobs_of(workload)
        where = f"invalid fio job {workload.name!r} ({workload.source})"
        for job in jobs:
            missing = engines.missing_engine(engines.engine_name(job.get("ioengine")), self.engines, self.fio.version)
            if missing:
                raise UsageError(f"{where}: [{job.section}] {missing}")
            if truthy(job.get("fill_device")):
                raise UsageError(
                    f"{where}: [{job.section}] fill_device=1 writes until the target's filesystem is full; "
                    "mountbench writes a sized working set: give size= in the file or pass --size"
                )
        names = {engines.engine_name(job.get("ioengine")) for job in jobs}
        if names <= engines.NO_IO:
            raise UsageError(f"{where}: ioengine={', '.join(sorted(names))} {engines.NO_IO_REASON}")

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        """Jobs sharing a ``filename_format``/``filename`` reuse one file set (fio extends,
        never truncates, an existing file); others each lay out their own. The workloads of one job
        file (sections fio runs one after another, measured apart) lay out one at a time when their
        files are laid out anew anyway (``per-round``, ``fresh``): one group, the largest counted."""
        if self._one_at_a_time(workload):
            return f"{ONE_AT_A_TIME}{workload.source}", workload.description.space_bytes
        return workload.description.space_group, workload.description.space_bytes

    def _one_at_a_time(self, workload: Workload) -> bool:
        """Does this workload share the target's room with the other workloads of its job file: their
        files deleted before its own are laid out (``_make_room``)? Only where every round lays the
        files out anew anyway, and mountbench knows their names."""
        return (
            workload.source.startswith("job:")
            and self.file_state in ("per-round", "fresh")
            and _working_files(jobs_of(workload), Path(".")) is not None
        )

    def _make_room(self, prepared: Prepared, ctx: TargetContext) -> None:
        """Before a workload's files are laid out, delete those the other workloads of its job file may
        have left on this target (space_needed counts one at a time; at a run's first layout, or a
        resumed run's, any of them may be there), and forget their layouts: each lays its files out
        anew when it comes back, as it does every round."""
        if not self._one_at_a_time(prepared.workload):
            return
        mine = prepared.workload.description.space_group
        key = (ctx.target.label, prepared.workload.source)
        sets = self.file_sets.get(key, {})
        present = self.present.setdefault(key, set(sets))
        for group in sorted(present - {mine}):
            fiofiles.remove(sets.get(group, []), ctx.scratch)
            self.layouts.pop((ctx.target.label, group), None)
        present.clear()
        present.add(mine)

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        job = FioJob.from_spec(workload.spec)
        jobs = jobs_of(workload)
        overrides: list[tuple[str, str | None]] = [("directory", str(ctx.scratch)), *self._clock_override(job)]
        caveats: list[Caveat] = []
        direct = any(wants_direct(one) for one in jobs)
        if direct and not ctx.info.odirect:
            overrides += [("direct", "0"), ("buffered", "1")]
            caveats.append(Caveat(model.ODIRECT_REFUSED, f"buffered: O_DIRECT refused ({ctx.info.odirect_detail})"))
            direct = False
        elif direct and sys.platform == "darwin":
            caveats.append(
                Caveat(model.NOCACHE_MACOS, "direct I/O on macOS is F_NOCACHE, which still serves cached pages")
            )
        engine = job.get("ioengine") or "psync"
        if self.engines and engine not in self.engines and not workload.source.startswith("job:"):
            fallback = "psync"  # a preset's engine (a job file's is refused in check: never replaced)
            overrides.append(("ioengine", fallback))
            caveats.append(Caveat(model.ENGINE_FALLBACK, f"ioengine {engine} is not available here; ran {fallback}"))
        working_set = workload.description.space_bytes
        if not direct and any(cache_sensitive(one) for one in jobs):
            twice_ram = 2 * settings.ram_bytes
            if working_set is None or working_set < twice_ram:
                size_text = format_bytes(working_set) if working_set is not None else "unknown"
                caveats.append(
                    Caveat(
                        model.PAGE_CACHE,
                        f"page cache may serve these: buffered I/O on a working set of {size_text}, "
                        f"less than {format_bytes(twice_ram)} (twice this machine's "
                        f"{format_bytes(settings.ram_bytes)} of RAM)",
                    )
                )
        caveats += job_file_caveats(workload, jobs)
        declared = tuple(Caveat.from_dict(c) for c in workload.spec.get("caveats") or ())
        if declared:  # the definition's own words replace the generic caveat of the same kind
            codes = {c.code for c in declared}
            caveats = [c for c in caveats if c.code not in codes] + list(declared)
        series = None
        if not any(one.get(key) for one in jobs for key in ("write_bw_log", "write_iops_log", "log_avg_msec")):
            series = (_slug(f"series-{ctx.target.label}-{workload.name}"), fioseries.interval_ms(bound_of(workload)))
            overrides += fioseries.log_options(*series)
        comment = f"mountbench: workload {workload.name} ({workload.source}) on target {ctx.target.label}"
        text = render_workload(workload, overrides, comment)
        bound = workload.description.duration_bound_s
        files = _working_files(jobs, ctx.scratch)
        if files and self._one_at_a_time(workload):
            sets = self.file_sets.setdefault((ctx.target.label, workload.source), {})
            sets[workload.description.space_group] = files
        precondition = None
        laid = [one for one in jobs if not _unlinks(one) and fiofiles.working_files(one, ctx.scratch, fio_variables())]
        if files and self.file_state in fiofiles.PRECONDITIONED and laid and len(laid) == len(_with_files(jobs)):
            precondition = fiofiles.precondition_jobs(laid, ctx.scratch, direct, self._clock_override(job))
            text = f"{precondition}\n{text}"
        return Prepared(
            workload=workload,
            target=ctx.target.label,
            text=text,
            caveats=tuple(caveats),
            buffered=not direct,
            estimate_s=(bound or 60.0) + FIO_FIXED_COST_S,
            working_set=working_set,
            payload={
                "job": render_workload(workload, overrides, comment),
                "files": files,
                "precondition": precondition,
                "direct": direct,
                "series": series,
            },
        )

    def layout_bytes(self, prepared: Prepared, first_in_round: bool, first_in_run: bool) -> int:
        """The working set, when ``file_state`` lays it out for this sample (setup below, or fio
        itself when fresh); nothing for a job with no working set."""
        return fiofiles.laid_out_bytes(prepared.working_set, self.file_state, first_in_round, first_in_run)

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """Untimed: make the working files what every round of the cell sees (kinds/fiofiles.py):
        ``per-round``: laid out anew and written fully before the first sample of each round
        that uses them; ``steady``: once, before the first; ``fresh``: fio lays them out."""
        files: list[fiofiles.WorkingFile] | None = prepared.payload.get("files")
        if not files:
            return
        self._make_room(prepared, ctx)
        if self.file_state == "fresh":
            fiofiles.remove(files, ctx.scratch)  # this sample lays them out anew
            return
        group = (ctx.target.label, prepared.workload.description.space_group)
        precondition = prepared.payload.get("precondition")
        if precondition is None:
            return
        used = self.layouts.get(group)
        if used is not None and prepared.workload.name not in used:
            used.add(prepared.workload.name)  # this round's layout, not yet used by this workload
            return
        aside: list[Path] = []
        if used is not None:
            if self.file_state == "steady":
                return  # one layout for the whole run
            aside = fiofiles.set_aside(files, ctx.scratch)  # a new round: a new layout (kinds/fiofiles.py says why)
            del self.layouts[group]
        # where the layout lands, drawn anew
        spacer = fiofiles.place_spacer(files, ctx.scratch, ctx.info.fstype, self.placement)
        try:
            done = self._fio(precondition, settings, f"precondition-{prepared.target}-{prepared.workload.name}", files,
                             fence=sample_fence(ctx, settings))  # fmt: skip
        finally:
            fiofiles.drop_aside([*aside, *([spacer] if spacer else [])], ctx.scratch)
        if done.timed_out or done.returncode != 0:
            fiofiles.remove(files, ctx.scratch)
            message = fio_message(done.stderr) or f"exit {done.returncode}"
            if done.timed_out or not self._fill_sequentially(files, ctx.scratch):
                raise WorkloadFailed(f"preconditioning the working files failed: {message}")
        problem = fiofiles.damage(files)
        if problem:
            fiofiles.remove(files, ctx.scratch)
            raise WorkloadFailed(f"working file incomplete after preconditioning: {problem}; it was removed")
        self.layouts[group] = {prepared.workload.name}

    @staticmethod
    def _fill_sequentially(files: list[fiofiles.WorkingFile], scratch: Path) -> bool:
        """The files written as new files, start to end, by dd (fiofiles.sequential_fill_argv):
        what a mount that refused fio's preconditioning may still take (rclone's cache mode off).
        False, with nothing left behind, when that fails too."""
        for file in files:
            argv = fiofiles.sequential_fill_argv(file)
            done = run_child(argv, fence=Fence.of([scratch]), timeout=120 + (file.size or 0) / 5e6) if argv else None
            if done is None or done.timed_out or done.returncode != 0:
                fiofiles.remove(files, scratch)
                return False
        return True

    def _fio(self, job_text: str, settings: RunSettings, name: str, files: list | None = None, *, fence: Fence):
        stem = _slug(name)
        job_path = settings.workdir / f"{stem}.fio"
        job_path.write_text(job_text)
        size = sum(f.size or 0 for f in files or ())
        return run_child(
            [self.fio.path, "--output-format=json", f"--output={settings.workdir / stem}.json", str(job_path)],
            fence=fence,
            cwd=settings.workdir,
            timeout=120 + size / 5e6,
        )

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        stem = _slug(f"{prepared.target}-{prepared.workload.name}")
        job_path = settings.workdir / f"{stem}.fio"
        out_path = settings.workdir / f"{stem}.json"
        job_path.write_text(prepared.payload.get("job") or prepared.text)
        out_path.unlink(missing_ok=True)
        device = devstats.stat_file(ctx.info.mount_source) if prepared.payload.get("direct") else None
        device_before = devstats.bytes_read(device) if device else None
        # generous: laying out the working set at 5 MB/s (a slow network mount) comes on top
        layout_s = (prepared.working_set or 0) / 5e6
        timeout = 3 * prepared.estimate_s + layout_s + 120
        done = run_child(
            [self.fio.path, "--output-format=json+", f"--output={out_path}", str(job_path)],
            fence=sample_fence(ctx, settings),
            cwd=settings.workdir,
            timeout=timeout,
        )
        raw = out_path.read_text(errors="replace") if out_path.exists() else ""
        if done.timed_out:
            raise WorkloadFailed(hang_message(jobs_of(prepared.workload), timeout), raw)
        try:
            parsed = parse_fio(load_fio_json(raw), as_groups=True)  # what fio's group_reporting gives
        except FioOutputError as exc:
            message = fio_message(done.stderr) or str(exc)
            raise WorkloadFailed(f"fio failed (exit {done.returncode}): {message}", raw) from None
        files: list[fiofiles.WorkingFile] | None = prepared.payload.get("files")
        if done.returncode != 0 or parsed.errors:
            if files and self.file_state in fiofiles.PRECONDITIONED:
                # the files may be half written (ENOSPC during layout): never reuse them
                fiofiles.remove(files, ctx.scratch)
                self.layouts.pop((ctx.target.label, prepared.workload.description.space_group), None)
            message = fio_message(done.stderr) or "; ".join(parsed.errors)
            raise WorkloadFailed(f"fio failed (exit {done.returncode}): {message}", raw)
        caveats: list[Caveat] = []
        if files and "read" in prepared.workload.description.directions and ctx.scratch.is_dir():
            problem = fiofiles.damage(files)
            if problem:
                fiofiles.remove(files, ctx.scratch)
                self.layouts.pop((ctx.target.label, prepared.workload.description.space_group), None)
                raise WorkloadFailed(
                    f"working file incomplete: {problem} (did the target run out of space?); "
                    "its reads are not storage reads, so the sample is void",
                    raw,
                )
        if device_before is not None and device is not None:
            caveats += _device_check(parsed.metrics, device_before, devstats.bytes_read(device))
        series: dict[str, list[float]] = {}
        if prepared.payload.get("series"):
            series = fioseries.read_series(settings.workdir, *prepared.payload["series"])
            caveats += fioseries.steadiness(series)
        output = load_fio_json(raw)
        caveats += _steady_state_verdict(output)
        caveats += short_sample(output, FioJob.from_spec(prepared.workload.spec))
        caveats += too_short_to_time(output)
        metrics = dict(parsed.metrics)
        if len(jobs_of(prepared.workload)) > 1 or len(output.get("jobs") or []) > 1:
            metrics.update(job_metrics(output))  # each job's own figures beside the workload's
        return Outcome(metrics, raw, tuple(caveats), series=series)

    def cached_files(self, prepared: Prepared, ctx: TargetContext) -> list[Path] | None:
        """The working files, when mountbench knows their names (else the machine's caches go)."""
        files: list[fiofiles.WorkingFile] | None = prepared.payload.get("files")
        return [file.path for file in files] if files else None

    def cleanup(self, ctx: TargetContext) -> None:
        """fio's files live in the scratch directory, removed with it."""


def sample_fence(ctx: TargetContext, settings: RunSettings) -> Fence:
    """Where fio's jobs may write: the target's scratch directory (the working files) and the run's
    work folder (fio's output and logs, written in its working directory)."""
    return Fence.of([ctx.scratch, settings.workdir])


# direct reads counted by fio of which the device served less than this share were cached
DEVICE_READ_SHARE = 0.5
DEVICE_CHECK_MIN_BYTES = 8 * MIB


def _device_check(metrics: dict[str, float], before: int, after: int | None) -> list[Caveat]:
    """Direct reads that never reached the block device under the target were served from a
    cache (the filesystem or engine ignored O_DIRECT): the numbers are not the storage's."""
    read = metrics.get("read.bytes", 0.0)
    if after is None or read < DEVICE_CHECK_MIN_BYTES:
        return []
    reached = after - before
    if reached >= DEVICE_READ_SHARE * read:
        return []
    return [
        Caveat(
            model.CACHE_SERVED_DIRECT,
            f"direct I/O asked, but the device read {format_bytes(reached)} of the {format_bytes(read)} fio read: "
            "a cache served the rest (the filesystem or engine ignores O_DIRECT)",
        )
    ]


def _steady_state_verdict(output: dict) -> list[Caveat]:
    """A job with fio's own steadystate= criterion that did not attain it ran to its runtime
    without settling: say so on its numbers."""
    for job in output.get("jobs", []):
        state = job.get("steadystate")
        if isinstance(state, dict) and state.get("attained") == 0:
            return [
                Caveat(
                    model.NOT_STEADY_STATE,
                    f"fio's steady-state criterion ({state.get('ss', '?')}) was not met within the runtime: the "
                    "job ran to its end without settling",
                )
            ]
    return []


MIN_IO_S = 0.5  # a sample with less I/O time than this says more about start-up and fio's ms clock
_EARLY_SHARE = 0.9  # a job that stopped before 90 % of its runtime ended on its size


def short_sample(output: dict, job: FioJob) -> list[Caveat]:
    """A sample whose numbers rest on too little I/O: the job stopped before its runtime because
    it had moved its size (not time-based), or its I/O lasted under MIN_IO_S (fio counts whole
    milliseconds, so a 64 ms sample's IOPS are quantised). The text names no measured value, so
    one caveat covers every sample of a cell."""
    times = [float(j.get("job_runtime") or 0) / 1000 for j in output.get("jobs", []) if isinstance(j, dict)]
    io_s = max(times, default=0.0)
    if io_s <= 0:
        return []
    planned = parse_fio_time(job.get("runtime") or "") if job.get("runtime") else None
    time_based = job.get("time_based") not in (None, "0")
    size = job.get("size") or "its size"
    # mountbench's own cap on a job file without runtime= is no runtime the job asked for
    asked = planned is not None and planned != JOB_FILE_RUNTIME_CAP_S
    ended_early = asked and not time_based and io_s < _EARLY_SHARE * planned
    if not ended_early and io_s >= MIN_IO_S * 0.98:  # a 500 ms runtime reports 499-501 ms
        return []
    if ended_early:
        why = f"stopped before its runtime of {planned:g} s: not time-based, the job ended when it had moved {size}"
    else:
        why = f"under {MIN_IO_S:g} s of I/O per sample, so start-up and fio's millisecond clock weigh on its rates"
    return [
        Caveat(
            model.SHORT_SAMPLE,
            f"short sample: {why}; make it time-based (time_based=1 with runtime=1s or more, e.g. --runtime 1)",
        )
    ]


def too_short_to_time(output: dict) -> list[Caveat]:
    """Jobs whose I/O fit in fio's 1 ms tick: their IOPS are I/Os ÷ 1 ms, whatever the target did."""
    short = short_jobs(output)
    if not short:
        return []
    names = ", ".join(f"[{name}]" for name in dict.fromkeys(short))
    return [
        Caveat(
            model.RUNTIME_ZERO,
            f"runtime 0: too short to time: {names} moved its I/O within fio's 1 ms clock tick, so its rates "
            "are I/Os ÷ 1 ms, not the target's speed; give it more to do (size=, or time_based with runtime=)",
        )
    ]


# options with which plain fio itself hangs (fio 3.33: io_submit_mode=offload, 8 of 9 tries by hand)
_FIO_HANGS = {"io_submit_mode": "offload"}


def hang_message(jobs: Sequence[FioJob], timeout: float) -> str:
    """The watchdog's words: fio's own hang named as fio's, else the target is suspected."""
    for job in jobs:
        for key, value in _FIO_HANGS.items():
            if (job.get(key) or "").strip() == value:
                return (
                    f"fio did not finish within {timeout:.0f} s: plain fio hangs with {key}={value} too "
                    f"([{job.section}]); remove the option"
                )
    return f"fio did not finish within {timeout:.0f} s (is the target hung?)"


def bound_of(workload: Workload) -> float | None:
    return workload.description.duration_bound_s


def _unlinks(job: FioJob) -> bool:
    """unlink=1 deletes the files after every job (each sample lays them out again anyway), and
    allow_file_create=0 says the files must already exist: neither is preconditioned."""
    return job.get("unlink") not in (None, "0") or job.get("allow_file_create") == "0"


_METADATA_ENGINES = engines.FILE_OPERATIONS | engines.NO_IO
_SYNC_OPTIONS = ("fsync", "fdatasync", "fsync_on_close", "end_fsync", "sync", "write_barrier")


def syncs_writes(job: FioJob) -> bool:
    """Does the job put its writes on stable storage before they count (fsync=0 does not)?"""
    return any(job.get(option) not in (None, "0") for option in _SYNC_OPTIONS)


def cache_sensitive(job: FioJob) -> bool:
    """Can the page cache inflate this buffered job's numbers? Not for metadata-only
    engines, nor for writes that are synced before they count."""
    if engines.engine_name(job.get("ioengine")) in _METADATA_ENGINES:
        return False
    writes_only = rw_option(job) in {"write", "randwrite", "trimwrite"}
    return not (writes_only and syncs_writes(job))


def fio_message(stderr: str) -> str:
    """The distinct 'fio:' lines of stderr (after the option fio could not read, if it names
    one: "Bad option <trigger-file=x>"), or its last line, shortened."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    picked = [line for line in lines if line.startswith(("fio:", "Bad option")) or "error" in line.lower()]
    picked = sorted(picked, key=lambda line: not line.startswith("Bad option")) or lines[-1:]
    unique = list(dict.fromkeys(picked))
    text = "; ".join(unique[:3])
    return text if len(text) <= 400 else text[:397] + "..."


def _without_debug(text: str) -> str:
    """fio's output with its --debug=parse lines left out (what it says of a job it rejects stays)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith(("parse ", "fio: set debug")))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:120]
