"""Which sections of a job file fio runs together, and so which must be one workload.

fio starts every job of a file at once, apart from a job with ``stonewall`` (it waits for
all jobs before it) or ``wait_for=NAME`` (it waits for that job). Jobs that run at the same
time, that wait for each other, or that work on the same files (a write phase and the
verify phase that reads it back) are one experiment: measured apart, each would measure
something fio never ran. Those are grouped into one workload, its sections kept as written
(globals where they stand, stonewall, wait_for and startdelay intact). What remains is
independent (sections that fio runs one after another and that share no files) and may be
measured as a workload each, as mountbench did for every section before.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

from mountbench.errors import UsageError
from mountbench.fio import engines
from mountbench.fio.jobfile import (
    FioJob,
    Section,
    duration_bound_s,
    evaluate_count,
    fio_variables_bounded,
    merged_jobs,
    truthy,
)

_BARRIERS = ("stonewall", "wait_for_previous")


@dataclass(frozen=True)
class JobGroup:
    """Sections of one workload: the job sections of the group and every ``[global]`` written
    before its last job, in file order; ``reason`` says why they run together or alone."""

    name: str
    sections: tuple[Section, ...]
    reason: str

    @property
    def jobs(self) -> list[FioJob]:
        return merged_jobs(self.sections)


def _barrier(job: FioJob) -> bool:
    return any(truthy(job.get(key)) for key in _BARRIERS)


_EXPANDED_NAMES = 4096  # files of one job named one by one; beyond, the job's name pattern stands for them


def _file_keys(job: FioJob) -> set[str]:
    """The names of the files a job works on: its data files (``filename=``, or the names fio gives
    from ``filename_format``, by default ``$jobname.$jobnum.$filenum``, for every clone and file) and
    the donor file e4defrag moves blocks with (``donorname=``), so that a section that names another's
    file, or shares its donor, is seen to work on it. A pattern with too many files (or one only fio
    can fill in) stands for them as a pattern."""
    engine = engines.engine_name(job.get("ioengine"))
    if engine in engines.NO_IO:
        return set()
    donor = job.get("donorname") if engine == "e4defrag" else None  # e4defrag's option: other engines drop it
    keys = {posixpath.normpath(donor or "")} - {"."}
    if job.get("filename"):
        return keys | {posixpath.normpath(name) for name in (job.get("filename") or "").split(":") if name}
    pattern = (job.get("filename_format") or "$jobname.$jobnum.$filenum").replace(
        "$jobname", job.get("name") or job.section
    )
    variables = fio_variables_bounded()
    clones = evaluate_count(job.get("numjobs") or "1", variables) or 1
    files = evaluate_count(job.get("nrfiles") or "1", variables) or 1
    if "$clientuid" in pattern or clones * files > _EXPANDED_NAMES:
        return keys | {pattern}
    named = (
        pattern.replace("$jobnum", str(j)).replace("$filenum", str(f)) for j in range(clones) for f in range(files)
    )
    return keys | {posixpath.normpath(name) for name in named}


class _Union:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[max(ra, rb)] = min(ra, rb)
        return True


def group_sections(sections: list[Section], origin: str) -> list[JobGroup]:
    """The file's workloads: one group per set of jobs that fio runs together (see the module)."""
    jobs = merged_jobs(sections)
    positions = [i for i, s in enumerate(sections) if not s.is_global]
    union = _Union(len(jobs))
    why: dict[int, list[str]] = {}

    def join(a: int, b: int, text: str) -> None:
        if union.join(a, b):
            why.setdefault(a, []).append(text)

    phase_start = 0
    for i, job in enumerate(jobs):
        if i > 0 and _barrier(job):
            phase_start = i
        elif i > 0:
            join(phase_start, i, f"[{jobs[phase_start].section}] and [{job.section}] run at the same time")
        waitee = job.get("wait_for")
        if waitee:
            earlier = [k for k in range(i) if jobs[k].section == waitee.strip()]
            if not earlier:
                raise UsageError(
                    f"{origin}: [{job.section}] wait_for={waitee} names no section before it; fio would fail "
                    "('waitee job unknown'): name a section written above it"
                )
            join(earlier[-1], i, f"[{job.section}] waits for [{waitee.strip()}]")
    owners: dict[str, int] = {}
    for i, job in enumerate(jobs):
        for key in sorted(_file_keys(job)):
            if key in owners:
                join(owners[key], i, f"[{job.section}] works on the files of [{jobs[owners[key]].section}]")
            else:
                owners[key] = i
    members: dict[int, list[int]] = {}
    for i in range(len(jobs)):
        members.setdefault(union.find(i), []).append(i)
    whole = len(members) == 1
    groups = []
    for indices in members.values():
        last = positions[indices[-1]]
        chosen = {positions[i] for i in indices}
        kept = tuple(s for at, s in enumerate(sections) if at in chosen or (s.is_global and at < last))
        reasons = [text for i in indices for text in why.get(i, [])]
        groups.append(JobGroup(_name(jobs, indices, origin, whole), kept, _reason(jobs, indices, reasons, whole)))
    return _unique(groups)


def _name(jobs: list[FioJob], indices: list[int], origin: str, whole: bool) -> str:
    if len(indices) == 1:
        return jobs[indices[0]].section
    if whole:
        return Path(origin).stem or jobs[indices[0]].section
    names = list(dict.fromkeys(jobs[i].section for i in indices))
    return "+".join(names[:2]) + ("+..." if len(names) > 2 else "")


def _reason(jobs: list[FioJob], indices: list[int], reasons: list[str], whole: bool) -> str:
    if len(indices) == 1:
        if whole:
            return ""
        return (
            f"[{jobs[indices[0]].section}] measured alone: fio runs the file's sections one after another "
            "(stonewall) and this one shares no files with the others"
        )
    shown = "; ".join(list(dict.fromkeys(reasons))[:3]) + ("; ..." if len(reasons) > 3 else "")
    names = ", ".join(f"[{jobs[i].section}]" for i in indices)
    scope = "the whole file" if whole else f"sections {names}"
    return f"one workload, as fio runs it: {scope} ({len(indices)} jobs) kept together ({shown})"


def _unique(groups: list[JobGroup]) -> list[JobGroup]:
    """Two groups of one name (fio allows two sections of one name): the later ones numbered."""
    seen: dict[str, int] = {}
    out = []
    for group in groups:
        count = seen.get(group.name, 0) + 1
        seen[group.name] = count
        out.append(group if count == 1 else JobGroup(f"{group.name}-{count}", group.sections, group.reason))
    return out


def timeline_bound_s(jobs: list[FioJob]) -> float | None:
    """Upper bound of the group's run time as fio schedules it: jobs of one phase at once (the
    longest counts), a ``stonewall`` phase after the one before, a ``wait_for`` job after its
    waitee; each job's own bound includes its startdelay. None when a job is unbounded."""
    ends: dict[str, float] = {}
    phase_start = phase_end = 0.0
    for i, job in enumerate(jobs):
        bound = duration_bound_s(job)
        if bound is None:
            return None
        if i > 0 and _barrier(job):
            phase_start = phase_end
        waitee = (job.get("wait_for") or "").strip()
        start = max(phase_start, ends.get(waitee, phase_start))
        ends[job.section] = start + bound
        phase_end = max(phase_end, ends[job.section])
    return phase_end
