"""Assemble the run's workloads from presets and job files, with the command
line's overrides (--size, --runtime) written into each job so the stored
workload says exactly what ran."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

from mountbench.errors import UsageError
from mountbench.fiojob import FioJob, evaluate_size, fio_variables, load_job_file
from mountbench.model import Workload
from mountbench.presets import load_preset

DEFAULT_PRESET = "quick"
TREE_PRESET = "tree"
# A job file job with no runtime= at all is capped, so one slow target cannot
# take half an hour (study S4's HDD run took 34 minutes).
JOB_FILE_RUNTIME_CAP_S = 60
MIB = 1024 * 1024


def assemble(
    presets: Sequence[str],
    job_files: Sequence[Path],
    *,
    size: int | None = None,
    runtime: float | None = None,
    tree: dict | None = None,
) -> list[Workload]:
    """``tree`` ({"profile": ..., "seed": ...} or {"tarball": ...}) replaces the tree of
    every tree workload; given alone, it selects the tree preset."""
    groups: list[list[Workload]] = []
    if tree is not None and not presets and not job_files:
        presets = [TREE_PRESET]
    for name in presets:
        groups.append(list(load_preset(name).workloads))
    for path in job_files:
        groups.append([_from_job(job, path) for job in load_job_file(path)])
    if not groups:
        groups.append(list(load_preset(DEFAULT_PRESET).workloads))
    if tree is not None:
        groups = [[_with_tree(w, tree) for w in group] for group in groups]
    adjusted = []
    for group in groups:
        if size is not None:
            group = _scale_sizes(group, size)
        if runtime is not None:
            group = [
                _with_options(w, [("runtime", f"{round(runtime * 1000)}ms")]) if w.kind == "fio" else w for w in group
            ]
        adjusted.append(group)
    return _unique_names([w for group in adjusted for w in group])


def select(workloads: list[Workload], patterns: Sequence[str]) -> list[Workload]:
    """Keep the workloads whose name matches one of the glob patterns (all when none)."""
    if not patterns:
        return workloads
    kept = [w for w in workloads if any(fnmatch.fnmatchcase(w.name, p) for p in patterns)]
    if not kept:
        names = ", ".join(w.name for w in workloads)
        raise UsageError(f"--only {' '.join(patterns)} matches no workload; the workloads are: {names}")
    return kept


def _from_job(job: FioJob, path: Path) -> Workload:
    options = list(job.options)
    if job.get("runtime") is None:
        options.append(("runtime", str(JOB_FILE_RUNTIME_CAP_S)))
    capped = FioJob(job.section, tuple(options))
    return Workload(
        name=job.section,
        kind="fio",
        title=job.section,
        source=f"job:{path}",
        spec=capped.to_spec(),
    )


def _scale_sizes(group: list[Workload], size: int) -> list[Workload]:
    """The largest job of a preset or job file gets ``size``; the others keep their
    proportion to it (study S2's 8G/4G cases stay 2:1)."""
    variables = fio_variables()
    sizes = {}
    for workload in group:
        if workload.kind != "fio":
            continue
        text = FioJob.from_spec(workload.spec).get("size")
        sizes[workload.name] = evaluate_size(text, variables) if text else None
    largest = max((s for s in sizes.values() if s), default=None)
    out = []
    for workload in group:
        if workload.kind != "fio":
            out.append(workload)
            continue
        own = sizes.get(workload.name)
        scaled = size if not own or not largest else max(MIB, round(size * own / largest / MIB) * MIB)
        out.append(_with_options(workload, [("size", str(scaled))]))
    return out


def _with_tree(workload: Workload, tree: dict) -> Workload:
    if workload.kind != "tree":
        return workload
    return Workload(workload.name, workload.kind, workload.title, workload.source, {**workload.spec, "tree": tree})


def _with_options(workload: Workload, extra: list[tuple[str, str | None]]) -> Workload:
    job = FioJob.from_spec(workload.spec)
    job = FioJob(job.section, (*job.options, *extra))
    return Workload(workload.name, workload.kind, workload.title, workload.source, {**workload.spec, **job.to_spec()})


def _unique_names(workloads: list[Workload]) -> list[Workload]:
    """Two sources with a job of the same name: prefix both with their source."""
    names = [w.name for w in workloads]
    out = []
    for workload in workloads:
        if names.count(workload.name) > 1:
            prefix = Path(workload.source.partition(":")[2]).stem
            renamed = f"{prefix}/{workload.name}"
            job = FioJob.from_spec(workload.spec)
            spec = {**workload.spec, **FioJob(renamed.replace("/", "-"), job.options).to_spec()}
            workload = Workload(renamed, workload.kind, f"{workload.title} ({prefix})", workload.source, spec)
        out.append(workload)
    if len({w.name for w in out}) != len(out):
        raise UsageError("the same preset or job file is given twice; give each once")
    return out
