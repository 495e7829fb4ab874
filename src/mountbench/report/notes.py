"""Warnings and notes: what a reader must know before trusting the numbers.

- Warnings: hosts that differ in ways that matter (fio, kernel, CPU, RAM), workloads defined
  differently in merged runs, runs that did not complete.
- Notes: caveats and errors numbered once, in reading order (the summary grid first), so
  Markdown, HTML, CSV and the charts all use the same numbers. A cell's marks sit on its
  value; a ratio's marks (its own flags and how both sides were measured) sit on the
  comparison. A caveat every cell shares is said once, among the warnings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from mountbench.analysis.summary import Row
from mountbench.model import Caveat, RunData
from mountbench.report.cells import Footnotes
from mountbench.report.labels import HOST_FACTS, host_names
from mountbench.report.model import (
    QUALITY_CODES,
    RATIO_CODES,
    MetricGroup,
    PercentileCurve,
    Report,
    Sweep,
    SweepGrid,
)
from mountbench.units import format_bytes


def host_warnings(runs: Sequence[RunData]) -> list[str]:
    """One sentence per host fact that differs between the merged runs' hosts."""
    hosts = host_names(runs)
    facts_by_host = {hosts[run.id]: run.host for run in runs}
    if len(facts_by_host) < 2:
        return []
    warnings = []
    for key, name in HOST_FACTS:
        values = {host: _fact_text(key, facts.get(key)) for host, facts in facts_by_host.items()}
        if len(set(values.values())) > 1:
            listed = "; ".join(f"{host}: {value}" for host, value in values.items())
            warnings.append(f"hosts differ in {name} ({listed}): compare their columns with care")
    return warnings


def _fact_text(key: str, value: object) -> str:
    if value in (None, ""):
        return "unknown"
    if key == "ram_bytes":
        return format_bytes(float(value))  # type: ignore[arg-type]
    return str(value)


def workload_warnings(runs: Sequence[RunData]) -> list[str]:
    """A workload name whose description (every option, as its kind describes it) differs between
    runs is not one workload."""
    specs: dict[str, dict[str, object]] = defaultdict(dict)
    for run in runs:
        for workload in run.workloads:
            specs[workload.name].setdefault(repr((workload.kind, workload.description.to_dict())), run.id)
    return [
        f"workload {name!r} is defined differently in runs {', '.join(by_spec.values())}: its cells mix different work"
        for name, by_spec in specs.items()
        if len(by_spec) > 1
    ]


def status_warnings(runs: Sequence[RunData]) -> list[str]:
    return [
        f"run {run.id} failed: every sample failed; each cell shows its error"
        if run.status == "failed"
        else f"run {run.id} is {run.status}: some cells may have fewer samples; 'mountbench run --resume {run.id}' "
        "completes it"
        for run in runs
        if run.status != "complete"
    ]


def noted_rows(
    groups: Sequence[MetricGroup], curves: Sequence[PercentileCurve], sweeps: Sequence[Sweep | SweepGrid],
    first: Sequence[Row] = (),
) -> list[Row]:  # fmt: skip
    """Every row whose cells carry note marks: the summary grid's and the tables', in the order the
    documents show them, then the percentile curves' (the terminal shows no curve: numbered last, their
    own notes follow every note it prints, and it leaves them out without a gap)."""
    rows = list(first) + [row for group in groups for row in group.rows]
    rows += [row for sweep in sweeps for row in sweep.rows]
    return rows + [row for curve in curves for row in curve.rows]


def shared_caveats(rows: Sequence[Row], targets: Sequence[str]) -> tuple[str, ...]:
    """Caveats about the samples' statistics that every measured cell carries (a 2-repeat run:
    'fewer than 3 samples' on each): said once, not as a [1] on every number. Only where there
    are several cells to share it; a caveat about how a number was measured (buffered, an
    emulated engine) stays next to each number it affects."""
    cells = [row.cells[t] for row in rows for t in targets if row.cells[t].summary is not None]
    if len(cells) < 2:
        return ()
    common = [c.text for c in cells[0].caveats if c.code in QUALITY_CODES]
    for cell in cells[1:]:
        texts = {c.text for c in cell.caveats}
        common = [text for text in common if text in texts]
    return tuple(dict.fromkeys(common))


def number_notes(
    groups: Sequence[MetricGroup],
    curves: Sequence[PercentileCurve],
    sweeps: Sequence[Sweep | SweepGrid],
    targets: Sequence[str],
    *,
    first: Sequence[Row] = (),
    shared: Sequence[str] = (),
) -> tuple[list[str], dict[tuple[str, str, str], tuple[int, ...]]]:
    """Number caveats and errors in the order the document shows them: ``first`` (the
    summary grid's rows), then the tables. ``shared`` caveats (on every cell) get no number."""
    notes = Footnotes.empty()
    marks: dict[tuple[str, str, str], tuple[int, ...]] = {}
    # a percentile table shows each point's median and, over each column, how it was measured:
    # a point's spread, ratio and errors are shown nowhere, so they get no number (issue 37:
    # 'show --metric lat-p99' printed 106 notes, 12 of them referred to)
    curve_rows = {id(row) for curve in curves for row in curve.rows}
    for row in noted_rows(groups, curves, sweeps, first):
        for label in targets:
            cell = row.cells[label]
            key = (row.workload, row.metric.name, label)
            if id(row) in curve_rows and key not in marks:
                kept = [c for c in cell.caveats if c.code not in QUALITY_CODES and c.code not in RATIO_CODES]
                marks[key] = tuple(sorted({notes.mark(c.text) for c in kept if c.text not in shared}))
                continue
            # a ratio's own caveat where no ratio is shown would be a note nothing refers to
            unshown = [c.text for c in cell.caveats if c.code in RATIO_CODES and cell.comparison is None]
            marks[key] = tuple(notes.marks(cell, skip=[*shared, *unshown]))
    return notes.texts, marks


def measurement_caveats(report: Report) -> list[Caveat]:
    """Distinct caveats about how numbers were measured, in note order."""
    seen: dict[Caveat, None] = {}
    for row in report.summary.rows:
        for cell in row.cells.values():
            for caveat in cell.caveats:
                if caveat.code not in QUALITY_CODES:
                    seen.setdefault(caveat)
    return sorted(
        (c for c in seen if c.text in report.notes), key=lambda c: report.notes.index(c.text)
    )  # a caveat every cell shares is among the warnings, not a note


OTHER_MEDIUM = "'mountbench report --format html' draws it"  # stored with a sample's caveat (kinds/fioseries.py)


def in_words(note: str, runs: Sequence[RunData]) -> str:
    """A note as the terminal and Markdown say it: a command it names works as written for the run shown
    (issue 48: 'mountbench report --format html' printed 695 KB of HTML into the terminal, of the last run)."""
    ids = runs[0].id if len(runs) == 1 else "RUN"
    return note.replace(OTHER_MEDIUM, f"'mountbench report {ids} --out report.html' draws it")
