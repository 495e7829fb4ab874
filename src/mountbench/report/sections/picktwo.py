""" "Pick two", measured: performance, coherence and concurrency of each lab mount, side by side.

Study S3 summed up 9p's cache modes as "performance, reliability, concurrency: pick two".
A lab run made with `mountbench lab --probe` holds what it takes to measure that instead
of quoting it, per mount (and cache mode): picktwo/qemupick.py judges it once, when the report
is built (Report.pick_two), on the scale both labs share (picktwo/scale.py).

Each column gets a verdict (good, fair, poor; data loss; not shared: a virtual disk or the
guest's own RAM has no second view; not measured). The section also carries the probe's
own tables (what each mount supports, and every coherence check), rendered by probe.render.

This module is the report's "pick two" section: one table (a TableView) in blocks every format
lays out, CSV and JSON records, and the chart (picktwo/chart.py).
"""

from __future__ import annotations

from typing import Any

from mountbench.blocks.parts import Block, Chapter, Figure, Heading, Items, Paragraph, Table
from mountbench.blocks.table import CellView, Line, RichLayout, TableView, note_links
from mountbench.probe import render as probe_render
from mountbench.report.chartkeys import Chart
from mountbench.report.csvexport import records_csv
from mountbench.report.model import Report
from mountbench.report.picktwo.chart import KEY, pick_two_figure
from mountbench.report.picktwo.probed import PROPERTIES, TITLE, Measured, PickTwo
from mountbench.report.picktwo.scale import LEGEND as SCALE
from mountbench.report.picktwo.scale import verdict_cell
from mountbench.report.sections.section import Export, Options, nothing

LEGEND = f"{SCALE} · – not shared with the host · ? not measured"


def table(report: Report, found: PickTwo) -> TableView:
    """Mounts down, properties across: each property's verdict over what it stands on."""
    rows = []
    for row in found.rows:
        cells = [CellView(row.mount, strong=True)]
        for prop in PROPERTIES:
            lines = [Line(m.marked, note_links(report.notes, m.notes)) for m in row.measures(prop)]
            cells.append(verdict_cell(row.verdict(prop), lines))
        cells.append(CellView(row.gets))
        rows.append(cells)
    return TableView(KEY, TITLE, ["mount", *PROPERTIES, "gets"], rows, numeric_from=1_000)


# --- records: CSV and JSON -----------------------------------------------------------------------

CSV_COLUMNS = ("mount", "property", "property_verdict", "measure", "verdict", "text", "value", "unit", "notes")
_MEASURES = (
    ("performance", "write", "sequential write at the best block size"),
    ("performance", "tree", "tree"),
    ("coherence", "visibility", "worst visibility delay"),
    ("coherence", "stale", "reads right after a replace"),
    ("concurrency", "locks", "locks across the views"),
)


def exports(report: Report) -> list[Export]:
    if report.pick_two is None:
        return []
    note = "pick two: one row per mount and measure, with its verdict"
    return [Export("pick_two", "-picktwo", note, records(report), records_csv(records(report), CSV_COLUMNS))]


def records(report: Report) -> list[dict[str, Any]]:
    """One record per mount and measure (JSON: `report --format json` adds them as pick_two)."""
    found = report.pick_two
    if found is None:
        return []
    out = []
    for row in found.rows:
        for prop, attr, _title in _MEASURES:
            measured: Measured = getattr(row, attr)
            out.append(
                {
                    "mount": row.mount,
                    "property": prop,
                    "property_verdict": row.verdict(prop),
                    "measure": attr,
                    "verdict": measured.verdict,
                    "text": measured.text,
                    "value": measured.value,
                    "unit": measured.unit,
                    "notes": "; ".join(report.notes[n - 1] for n in measured.notes),
                }
            )
    return out


# --- the screen and every document ----------------------------------------------------------------


def screen(report: Report, options: Options) -> list[Block]:
    """The pick-two table, its notes, then the probe's own tables (nothing without lab --probe)."""
    found = report.pick_two
    if found is None:
        return []
    # the numbers' caveats are spelled out under the table, not marked in it
    laid = RichLayout(show_lines=True, marks=False)
    blocks: list[Block] = [Paragraph(""), Table(table(report, found), laid), Paragraph(LEGEND, "legend"),
                           Items.of(found.notes, "note"), *_caveat_lines(report, found)]  # fmt: skip
    for probe in found.probes:
        blocks += probe_render.screen_blocks(probe.as_report())
    return blocks


def _caveat_lines(report: Report, found: PickTwo) -> list[Paragraph]:
    """How the performance numbers were measured, spelled out under the table: 'caveat (on a, b)'."""
    on: dict[int, list[str]] = {}
    for row in found.rows:
        for n in (*row.write.notes, *row.tree.notes):
            if row.mount not in on.setdefault(n, []):
                on[n].append(row.mount)
    return [Paragraph(f"! {report.notes[n - 1]} (on {', '.join(on[n])})", "caveat") for n in sorted(on)]


def document(report: Report, options: Options) -> Chapter | None:
    """The chapter: the table, its chart, how it was judged, then each probe's tables (None without --probe)."""
    found = report.pick_two
    if found is None:
        return None
    blocks: list[Block] = [Paragraph(_intro(found)), Table(table(report, found)), Figure(KEY, TITLE),
                           Paragraph(LEGEND, "legend"), Items.of(found.notes, "note")]  # fmt: skip
    for probe in found.probes:
        blocks += [Heading(PROBE_HEADING), *probe_render.document_blocks(probe.as_report(), level=4)]
    return Chapter(KEY, TITLE, tuple(blocks), style=CSS + probe_render.VERDICT_CSS)


PROBE_HEADING = "What each mount supports, and coherence in detail (lab --probe)"


def _intro(found: PickTwo) -> str:
    return (
        "Study S3's trade-off for VM shared folders, measured on this run's mounts: performance from the benchmark "
        f"run, coherence and concurrency from `lab --probe` ({found.repeat} repetitions, changes waited for up to "
        f"{found.timeout_s:g} s). A mount 'gets' the properties judged good."
    )


CSS = f"""
#{KEY} td {{ vertical-align: top; }}
#{KEY} .v-good {{ color: #1a7f37; }} #{KEY} .v-fair {{ color: #9a6700; }} #{KEY} .v-poor {{ color: #cf222e; }}
#{KEY} .v-data-loss {{ background: #cf222e; color: #fff; font-weight: bold; }}
#{KEY} .v-not-shared {{ color: #6e7781; }} #{KEY} .v-not-measured {{ color: #8250df; }}
#{KEY} .measure {{ display: block; font-size: .9em; color: #444; }}
"""


def charts(report: Report) -> list[Chart]:
    """The pick-two chart, when the report holds a lab run made with --probe."""
    found = report.pick_two
    if found is None or not found.rows:
        return []
    return [Chart(KEY, "pick-two", TITLE, lambda: pick_two_figure(found))]


page_charts = nothing  # the page draws no chart of its own here
