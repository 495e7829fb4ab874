"""Assemble the run's workloads from presets and job files, with the command
line's overrides (--size, --runtime, --tree) written into each workload so the
stored workload says exactly what ran, then expanded by sweeps (a preset's own
[sweep] and --sweep): one workload per point. What an override or a sweep means
for a workload is up to its kind (kinds/)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path

from mountbench.errors import UsageError
from mountbench.fio.sweeps import check_axes, merge_axes
from mountbench.host.inputs import check_regular
from mountbench.kinds import Adjustments, declared_options, kind_of, load_job_file, preset_alone
from mountbench.model import KindOptions, RunOptions, SweepAxis, Workload
from mountbench.presets import load_preset

DEFAULT_PRESET = "quick"
NONE_GIVEN = KindOptions()  # no kind option given
MIB = 1024 * 1024


def chosen_presets(presets: Sequence[str], job_files: Sequence[object], options: KindOptions) -> tuple[str, ...]:
    """The presets a run runs: those named; with none and no job file either, the one a kind's
    option given alone selects (--tree/--tarball: tree, --app-tree/--startup-cmd: startup), else quick."""
    if presets or job_files:
        return tuple(presets)
    return (preset_alone(options) or DEFAULT_PRESET,)


def from_options(options: RunOptions) -> list[Workload]:
    """The workloads a run's options ask for, filtered by --only."""
    files = [Path(p) for p in options.job_files]
    workloads = assemble(
        options.presets,
        files,
        size=options.size,
        runtime=options.runtime,
        sweeps=options.sweeps,
        options=options.kind_options,
    )
    if not options.fsync_writes:
        selected = select(workloads, options.only)
    else:  # --only chooses among the names the run shows, the variants' among them
        variants = _fsync_variants(workloads)
        selected = select(
            [w for pair in variants for w in pair if w is not None],
            options.only,
            also={variant.name: workload.name for workload, variant in variants if variant is not None},
        )
        if not any(w is variant for _, variant in variants for w in selected):
            raise UsageError("--fsync-writes: no workload here writes without syncing already; drop --fsync-writes")
    if options.sweeps and not any(w.description.sweep for w in selected):
        _no_sweepable_workload()
    return selected


def _fsync_variants(workloads: Sequence[Workload]) -> list[tuple[Workload, Workload | None]]:
    """Each workload with its kind's fsync-terminated variant where it has one (--fsync-writes):
    the durable rate beside the rate a volatile cache may absorb (analysis/plausible.py)."""
    return [(workload, kind_of(workload.kind).fsync_variant(workload)) for workload in workloads]


def assemble(
    presets: Sequence[str],
    job_files: Sequence[Path],
    *,
    size: int | None = None,
    runtime: float | None = None,
    sweeps: Sequence[SweepAxis] = (),
    options: KindOptions = NONE_GIVEN,
) -> list[Workload]:
    """``options``: the kinds' own options, each applied by its kind (--tree replaces the tree of
    every tree workload; given alone, it selects the tree preset). ``sweeps`` apply to every
    workload whose kind has the option (fio's), on top of a preset's own."""
    check_axes(sweeps)
    groups: list[tuple[list[Workload], tuple[SweepAxis, ...]]] = []
    for name in chosen_presets(presets, job_files, options):
        preset = load_preset(name)
        groups.append((list(preset.workloads), merge_axes(preset.sweeps, sweeps)))
    for path in job_files:
        check_regular(Path(path), "job file", "give an fio job file (INI text)")  # a FIFO would block the read
        groups.append((load_job_file(path), tuple(sweeps)))
    if size is not None and any(axis.option == "size" for _, axes in groups for axis in axes):
        raise UsageError("--size and a sweep of size both set the working set; give one of them")
    adjustments = Adjustments(runtime=runtime, options=options)
    adjusted: list[tuple[Workload, tuple[SweepAxis, ...]]] = []
    for group, axes in groups:
        check_axes(axes)
        if size is not None:
            group = _scale_sizes(group, size)
        adjusted += [(kind_of(w.kind).adjust(w, adjustments), axes) for w in group]
    _refuse_unused(options, [w for w, _ in adjusted])
    named = _unique_names([w for w, _ in adjusted])
    return _sweep(list(zip(named, (axes for _, axes in adjusted), strict=True)), bool(sweeps))


def _refuse_unused(options: KindOptions, workloads: Sequence[Workload]) -> None:
    """A kind's option given where no selected workload takes it, refused if its kind says so."""
    for option in declared_options():
        value = options.get(option.name)
        alone = Adjustments(options=KindOptions.of({option.name: value}))
        if option.unused and value is not None and not any(_takes(w, alone) for w in workloads):
            raise UsageError(option.unused)


def _takes(workload: Workload, adjustments: Adjustments) -> bool:
    """Does the workload's kind apply these overrides? (it returns the workload itself when none apply)"""
    return kind_of(workload.kind).adjust(workload, adjustments) is not workload


def _sweep(workloads: list[tuple[Workload, tuple[SweepAxis, ...]]], asked: bool) -> list[Workload]:
    """Each workload at every point of its sweep (itself when it has none or its kind has no
    such options). ``asked``: --sweep was given, so at least one workload must take it."""
    out: list[Workload] = []
    swept_any = False
    for workload, axes in workloads:
        points = kind_of(workload.kind).sweep(workload, axes) if axes else None
        swept_any = swept_any or points is not None
        out += points if points is not None else [workload]
    if asked and not swept_any:
        _no_sweepable_workload()
    if len({w.name for w in out}) != len(out):
        raise UsageError("a swept workload's name is taken by another workload; rename that workload")
    return out


def select(workloads: list[Workload], patterns: Sequence[str], also: Mapping[str, str] | None = None) -> list[Workload]:
    """Keep the workloads whose name matches one of the glob patterns (all when none). A swept
    workload (``seq1m-q8-read@bs=4k``) also answers to the name it was swept from, and a workload
    named in ``also`` to the name given there (an fsync variant to its workload's)."""
    if not patterns:
        return workloads
    also = also or {}

    def matches(name: str, pattern: str) -> bool:
        names = (name, name.split("@", 1)[0], *([also[name]] if name in also else []))
        return any(fnmatch.fnmatchcase(each, pattern) for each in names)

    kept = [w for w in workloads if any(matches(w.name, p) for p in patterns)]
    if not kept:
        names = ", ".join(w.name for w in workloads)
        raise UsageError(f"--only {' '.join(patterns)} matches no workload; the workloads are: {names}")
    return kept


def _no_sweepable_workload() -> None:
    raise UsageError(
        "--sweep varies fio options, and none of the chosen workloads is a fio job; add a preset or --job with "
        "fio jobs, or widen --only"
    )


def _scale_sizes(group: list[Workload], size: int) -> list[Workload]:
    """The largest workload of a preset or job file gets ``size``; the others keep their
    proportion to it (study S2's 8G/4G cases stay 2:1), in whole MiB when they are that large
    (the kind rounds to its own block). Kinds without a size are kept."""
    sizes = {w.name: kind_of(w.kind).declared_size(w) for w in group}
    largest = max((s for s in sizes.values() if s), default=None)
    out = []
    for workload in group:
        kind = kind_of(workload.kind)
        own = sizes.get(workload.name)
        share = size * own / largest if own and largest else size
        scaled = round(share / MIB) * MIB if share >= MIB else max(1, round(share))
        if own == largest or not own:
            scaled = size
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
