"""The QEMU lab's pick two (VM shared folders and disks, study S3's "performance, reliability,
concurrency: pick two", measured): performance from the benchmark run, coherence and concurrency
from `lab --probe` (sharing.py), per mount (and cache mode).

- performance: sequential write at the mount's best block size (the optimum of a block-size
  sweep of write bandwidth, such as the s3 preset's) and the time to extract a source tree
  (else to copy one with rsync); each judged against the fastest mount of the run;
- the tree measure is the workload whose kind describes it as TREE_ROLES says
  (model.Description.role).

Pure: a Report in (picktwo.pick_twos calls this once, when the report is built).
"""

from __future__ import annotations

from collections.abc import Sequence

from mountbench import model
from mountbench import probefacts as probe_model
from mountbench.analysis.summary import Cell, Row
from mountbench.labfacts import QemuLabFacts
from mountbench.report.labels import all_workloads
from mountbench.report.model import Report, Sweep
from mountbench.report.picktwo.rows import Measured, PickRow, PickTwo, Property
from mountbench.report.picktwo.scale import (
    FAIR_WITHIN,
    GOOD_WITHIN,
    PROMPT_MS,
    factor_verdict,
    interval_verdict,
    slower_than,
    worst,
)
from mountbench.report.picktwo.scale import LEGEND as SCALE
from mountbench.report.picktwo.sharing import across, not_measured
from mountbench.units import format_rate, format_seconds

TREE_ROLES = ("tree copy", "tree sync")  # the tree measure (Description.role), in order of preference
PROPERTIES = ("performance", "coherence", "concurrency")
TO_GUEST, TO_HOST = "host → guest", "guest → host"
TITLE = "Pick two, measured: performance, coherence, concurrency"
KEY = "pick-two"
LEGEND = f"{SCALE} · – not shared with the host · ? not measured"
PROBE_HEADING = "What each mount supports, and coherence in detail (lab --probe)"


def lab_probes(report: Report) -> list[tuple[model.RunData, probe_model.LabProbe]]:
    """The runs made with `lab --probe`, with what their probe measured."""
    found = []
    for run in report.runs:
        lab = run.config.lab
        if isinstance(lab, QemuLabFacts) and lab.probe is not None:
            found.append((run, lab.probe))
    return found


def pick_two(report: Report) -> PickTwo | None:
    """The pick two of the report's QEMU-lab runs made with --probe (None: there are none)."""
    probed = lab_probes(report)
    if not probed:
        return None
    mounts: dict[str, probe_model.MountProbe] = {}
    for run, probe in probed:
        for mount in probe.mounts:
            column = _column_of(report, run.id, mount.label)
            if column is not None:
                mounts[column] = mount  # a later run's probe of the same column wins
    sweep = write_sweep(report.sweeps)
    tree = tree_row(report)
    write = _write_measures(report, sweep)
    trees = _tree_measures(report, tree)
    rows = []
    for label in report.summary.targets:
        mount = mounts.get(label)
        if mount is None:
            continue
        w, t = write.get(label, not_measured("write")), trees.get(label, not_measured("tree"))
        if mount.shared:
            visibility, stale, locks = across(mount, TO_GUEST, TO_HOST)
        else:
            visibility, stale, locks = (Measured(m, "not shared with the host", "not shared")
                                        for m in ("visibility", "stale", "locks"))  # fmt: skip
        rows.append(
            PickRow(
                label,
                (
                    Property("performance", worst(w.verdict, t.verdict), (w, t)),
                    Property("coherence", worst(visibility.verdict, stale.verdict), (visibility, stale)),
                    Property("concurrency", locks.verdict, (locks,)),
                ),
                apart="" if mount.shared else " (not shared with the host)",
            )
        )
    last = probed[-1][1]
    return PickTwo(
        QemuLabFacts.name,
        KEY,
        TITLE,
        PROPERTIES,
        tuple(rows),
        LEGEND,
        intro=_intro(last),
        notes=tuple(_notes(report, probed, sweep, tree)),
        probes=tuple(p for _, p in probed),
        probe_heading=PROBE_HEADING,
        chart=True,
        spell_caveats=True,
        chart_note=_chart_note(last, sweep, tree),
    )


def _intro(probe: probe_model.LabProbe) -> str:
    return (
        "Study S3's trade-off for VM shared folders, measured on this run's mounts: performance from the benchmark "
        f"run, coherence and concurrency from `lab --probe` ({probe.repeat} repetitions, changes waited for up to "
        f"{probe.timeout_s:g} s). A mount 'gets' the properties judged good."
    )


def _chart_note(probe: probe_model.LabProbe, sweep: Sweep | None, tree: tuple[Row, str] | None) -> str:
    return (
        f"coherence and locks both ways across the VM boundary, {probe.repeat}× each, changes waited for up to "
        f"{probe.timeout_s:g} s; performance against the fastest mount of the run. "
        + (f"Write: {sweep.title}. " if sweep else "")
        + (f"Tree: {tree[0].title}." if tree else "")
    )


def _column_of(report: Report, run_id: str, label: str) -> str | None:
    for column in report.columns:
        if column.original == label and run_id in column.run_ids:
            return column.label
    return None


def write_sweep(sweeps: Sequence[Sweep]) -> Sweep | None:
    """The block-size sweep of write bandwidth to read each mount's best write from: one whose
    numbers say what reached the storage (no page-cache caveat, as the s3 preset's end_fsync
    points) before one that measured the page cache (its buffered points, as S3's dd did)."""
    candidates = [s for s in sweeps if s.option == "bs" and s.metric.name == "write.bw"]
    if not candidates:
        return None

    def cached(sweep: Sweep) -> bool:
        return any(
            c.code == model.PAGE_CACHE for row in sweep.rows for cell in row.cells.values() for c in cell.caveats
        )

    return next((s for s in candidates if not cached(s)), candidates[0])


def tree_row(report: Report) -> tuple[Row, str] | None:
    """The tree workload's wall-time row: extracting a tree, else syncing one with rsync."""
    roles = {w.name: w.description.role for w in all_workloads(report)}
    for role in TREE_ROLES:
        for row in report.summary.rows:
            if roles.get(row.workload) == role and row.metric.name == "wall":
                return row, row.workload
    return None


def _factor_text(factor: float) -> str:
    return "the fastest" if factor <= 1.0 else f"{factor:.3g}× slower than the fastest"


def _write_measures(report: Report, sweep: Sweep | None) -> dict[str, Measured]:
    if sweep is None:
        return {}
    best: dict[str, tuple[float, str, Cell]] = {}
    for label in report.summary.targets:
        optimum = sweep.optima.get(label)
        if optimum is None:
            continue
        cell = sweep.rows[optimum.peak].cells[label]
        if cell.summary is not None:
            best[label] = (cell.summary.median, sweep.values[optimum.peak], cell)
    if not best:
        return {}
    fastest = max(best, key=lambda label: best[label][0])
    out = {}
    for label, (value, bs, cell) in best.items():
        row = sweep.rows[sweep.optima[label].peak]
        reference_row = sweep.rows[sweep.optima[fastest].peak]
        verdict, factor = _judged(report, label, fastest, row, reference_row, value, best[fastest][0])
        out[label] = Measured(
            "write",
            f"{format_rate(value)} at bs={bs} ({_factor_text(factor)})",
            verdict,
            value,
            "B/s",
            report.measurement_marks(cell),
        )
    return out


def _judged(
    report: Report, label: str, fastest: str, row: Row, reference_row: Row, value: float, best: float
) -> tuple[str, float]:
    """(verdict, factor) of ``label`` against the fastest mount, from the run's intervals where both stand on
    one row (picktwo.scale.interval_verdict); from the medians when they do not (each at its own best block
    size: no comparison of the family joins them), said as fair at best unless the factor alone is beyond
    doubt."""
    factor = best / value if value > 0 else float("inf")
    if row is reference_row:
        found = slower_than(row, label, report.summary.baseline, fastest)
        if found is not None:
            return interval_verdict(found[1], found[2]), found[0]
    own = slower_than(row, label, report.summary.baseline)
    theirs = slower_than(reference_row, fastest, report.summary.baseline)
    if own is not None and theirs is not None:  # each against the baseline: the two intervals side by side
        return interval_verdict(own[1] / theirs[2], own[2] / theirs[1]), factor
    return factor_verdict(factor), factor


def _tree_measures(report: Report, tree: tuple[Row, str] | None) -> dict[str, Measured]:
    if tree is None:
        return {}
    row, _name = tree
    times = {label: cell for label, cell in row.cells.items() if cell.summary is not None}
    if not times:
        return {}
    fastest = min(times, key=lambda label: times[label].summary.median)  # type: ignore[union-attr]
    out = {}
    for label, cell in times.items():
        assert cell.summary is not None
        value = cell.summary.median
        found = slower_than(row, label, report.summary.baseline, fastest)
        if found is not None:  # judged from the run's intervals
            factor, verdict = found[0], interval_verdict(found[1], found[2])
        else:
            best = times[fastest].summary.median  # type: ignore[union-attr]
            factor = value / best if best > 0 else 1.0
            verdict = factor_verdict(factor)
        out[label] = Measured(
            "tree",
            f"{format_seconds(value)} ({_factor_text(factor)})",
            verdict,
            value,
            "s",
            report.measurement_marks(cell),
        )
    return out


def _notes(
    report: Report,
    probed: Sequence[tuple[model.RunData, probe_model.LabProbe]],
    sweep: Sweep | None,
    tree: tuple[Row, str] | None,
) -> list[str]:
    lines = [
        f"Performance: {sweep.title + ', each mount at its best block size' if sweep else 'no write sweep'}; "
        f"{tree[0].title + ' (wall time)' if tree else 'no tree workload'}; each against the fastest mount of this "
        f"run, from the run's intervals: good when shown within {GOOD_WITHIN:g}×, poor when shown beyond "
        f"{FAIR_WITHIN:g}×, else fair; the column's verdict is the worse of the two.",
        f"Coherence: both ways across the VM boundary (host → guest, guest → host), five kinds of change observed "
        f"with stat(): good when every change showed within {PROMPT_MS:g} ms, fair when all showed but some later "
        "or a reader got the old version right after a replace, poor when a change did not show within the timeout, "
        "data loss when a reader got a torn or missing file.",
        "Concurrency: flock and fcntl locks held on one side against a second locker on the other, both ways.",
    ]
    if sweep is None:
        lines.append(
            "No block-size sweep of write bandwidth in these runs: run with --preset s3 (or --sweep bs=...) "
            "for the write column."
        )
    if tree is None:
        lines.append("No tree workload in these runs: add --preset tree --only extract for the tree column.")
    for run, probe in probed:
        lab = run.config.lab
        if isinstance(lab, QemuLabFacts) and lab.emulated:
            lines.append(
                f"Run {run.id}: the guest was emulated (TCG), so its side of every coherence check ran far slower "
                "than on real hardware: delays are upper bounds of a KVM guest's; what never showed within the "
                "timeout, and whether locks block, do not depend on speed."
            )
        lines += [f"Run {run.id}: {error}" for error in probe.errors]
        lines += [f"Run {run.id} · {m.label}: {error}" for m in probe.mounts for error in m.errors]
    return lines
