"""Assemble the run's workloads from presets and job files, with the command
line's overrides (--size, --runtime, --tree) written into each workload so the
stored workload says exactly what ran. What an override means for a workload is
up to its kind (kinds/)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

from mountbench.errors import UsageError
from mountbench.kinds import Adjustments, kind_of
from mountbench.kinds.fio import KIND as FIO
from mountbench.model import AppChoice, RunOptions, TreeChoice, Workload
from mountbench.presets import load_preset

DEFAULT_PRESET = "quick"
TREE_PRESET = "tree"
STARTUP_PRESET = "startup"
MIB = 1024 * 1024


def from_options(options: RunOptions) -> list[Workload]:
    """The workloads a run's options ask for, filtered by --only."""
    files = [Path(p) for p in options.job_files]
    workloads = assemble(
        options.presets, files, size=options.size, runtime=options.runtime, tree=options.tree, app=options.app
    )
    return select(workloads, options.only)


def assemble(
    presets: Sequence[str],
    job_files: Sequence[Path],
    *,
    size: int | None = None,
    runtime: float | None = None,
    tree: TreeChoice | None = None,
    app: AppChoice | None = None,
) -> list[Workload]:
    """``tree`` replaces the tree of every tree workload; given alone, it selects the tree
    preset. ``app`` does the same for startup workloads and the startup preset."""
    groups: list[list[Workload]] = []
    if tree is not None and not presets and not job_files:
        presets = [TREE_PRESET]
    elif app is not None and not presets and not job_files:
        presets = [STARTUP_PRESET]
    for name in presets:
        groups.append(list(load_preset(name).workloads))
    for path in job_files:
        groups.append(FIO.load_job_file(path))
    if not groups:
        groups.append(list(load_preset(DEFAULT_PRESET).workloads))
    adjustments = Adjustments(runtime=runtime, tree=tree, app=app)
    adjusted = []
    for group in groups:
        if size is not None:
            group = _scale_sizes(group, size)
        adjusted.append([kind_of(w.kind).adjust(w, adjustments) for w in group])
    workloads = [w for group in adjusted for w in group]
    if app is not None and not any(w.kind == "startup" for w in workloads):
        raise UsageError(
            "--app-tree and --startup-cmd apply to startup workloads, and none is selected; "
            "add --preset startup (or s1)"
        )
    return _unique_names(workloads)


def select(workloads: list[Workload], patterns: Sequence[str]) -> list[Workload]:
    """Keep the workloads whose name matches one of the glob patterns (all when none)."""
    if not patterns:
        return workloads
    kept = [w for w in workloads if any(fnmatch.fnmatchcase(w.name, p) for p in patterns)]
    if not kept:
        names = ", ".join(w.name for w in workloads)
        raise UsageError(f"--only {' '.join(patterns)} matches no workload; the workloads are: {names}")
    return kept


def _scale_sizes(group: list[Workload], size: int) -> list[Workload]:
    """The largest workload of a preset or job file gets ``size``; the others keep their
    proportion to it (study S2's 8G/4G cases stay 2:1). Kinds without a size are kept."""
    sizes = {w.name: kind_of(w.kind).declared_size(w) for w in group}
    largest = max((s for s in sizes.values() if s), default=None)
    out = []
    for workload in group:
        kind = kind_of(workload.kind)
        own = sizes.get(workload.name)
        scaled = size if not own or not largest else max(MIB, round(size * own / largest / MIB) * MIB)
        out.append(kind.with_size(workload, scaled))
    return out


def _unique_names(workloads: list[Workload]) -> list[Workload]:
    """Two sources with a workload of the same name: prefix both with their source."""
    names = [w.name for w in workloads]
    out = []
    for workload in workloads:
        if names.count(workload.name) > 1:
            prefix = Path(workload.source.partition(":")[2]).stem
            workload = kind_of(workload.kind).renamed(
                workload, f"{prefix}/{workload.name}", f"{workload.title} ({prefix})"
            )
        out.append(workload)
    if len({w.name for w in out}) != len(out):
        raise UsageError("the same preset or job file is given twice; give each once")
    return out
