""" "Pick two", measured, for every lab: its mounts down, its three properties across, each with a
verdict (good, fair, poor; data loss; not shared; not measured) over what it stands on, and what
each mount "gets". Study S3 summed up 9p's cache modes as "performance, reliability, concurrency:
pick two"; each lab's run holds what it takes to measure its own three instead of quoting them.
The report judges them once, when it is built (Report.pick_two: one per lab, picktwo/), and this
one section shows each the same way in every format, in blocks: the table (a TableView every format
lays out), its legend and notes, the lab's own tables (its mounts, what each supports), the
probe's own tables where the lab's probe is probe/'s (rendered by probe.render), the chart where
the lab draws one (picktwo/chart.py), and its records for CSV and JSON (one row per mount and
measure, every lab's in one file).
"""

from __future__ import annotations

from typing import Any

from mountbench.blocks.parts import Block, Chapter, Figure, Heading, Items, Paragraph, Table
from mountbench.blocks.table import CellView, Line, RichLayout, TableView, note_links
from mountbench.probe import render as probe_render
from mountbench.report.chartkeys import Chart
from mountbench.report.csvexport import records_csv
from mountbench.report.model import Report
from mountbench.report.picktwo.chart import pick_two_figure
from mountbench.report.picktwo.rows import PickTwo
from mountbench.report.picktwo.scale import verdict_cell
from mountbench.report.sections.section import Export, Options, nothing

CSV_COLUMNS = ("lab", "target", "property", "property_verdict", "measure", "verdict", "text", "value", "unit",
               "notes")  # fmt: skip


def table(report: Report, found: PickTwo) -> TableView:
    """Mounts down, properties across: each property's verdict over what it stands on."""
    about = [found.about_header] if found.about_header else []
    rows = []
    for row in found.rows:
        cells = [CellView(row.label, strong=True)]
        if about:
            first, *rest = row.about or (None,)
            cells.append(CellView(first.text if first else "–", lines=[Line(m.text, style="dim") for m in rest]))
        for prop in row.properties:
            lines = [Line(m.marked, note_links(report.notes, m.notes)) for m in prop.measures]
            cells.append(verdict_cell(prop.verdict, lines))
        cells.append(CellView(row.gets))
        rows.append(cells)
    return TableView(found.key, found.title, [found.label_header, *about, *found.properties, "gets"], rows,
                     numeric_from=1_000, caption=found.caption)  # fmt: skip


# --- records: CSV and JSON -----------------------------------------------------------------------


def records(report: Report) -> list[dict[str, Any]]:
    """One record per lab, mount and measure (JSON: `report --format json` adds them as pick_two)."""
    out = []
    for found in report.pick_two:
        for row in found.rows:
            parts = [("", "", m) for m in row.about]
            parts += [(prop.name, prop.verdict, m) for prop in row.properties for m in prop.measures]
            for name, verdict, measured in parts:
                out.append(
                    {
                        "lab": found.lab,
                        "target": row.label,
                        "property": name,
                        "property_verdict": verdict,
                        "measure": measured.measure,
                        "verdict": measured.verdict,
                        "text": measured.text,
                        "value": measured.value,
                        "unit": measured.unit,
                        "notes": "; ".join(report.notes[n - 1] for n in measured.notes),
                    }
                )
    return out


def exports(report: Report) -> list[Export]:
    found = records(report)
    if not found:
        return []
    note = "pick two: one row per lab, mount and measure, with its verdict"
    return [Export("pick_two", "-picktwo", note, found, records_csv(found, CSV_COLUMNS))]


# --- the screen and every document ----------------------------------------------------------------


def screen(report: Report, options: Options) -> list[Block]:
    """Each lab's pick-two table, its legend and notes, its own tables, then the probe's tables."""
    blocks: list[Block] = []
    for found in report.pick_two:
        # the numbers' caveats are spelled out under the table (spell_caveats), else marked in it
        layout = RichLayout(show_lines=True, marks=not found.spell_caveats)
        blocks += [Paragraph(""), Table(table(report, found), layout), Paragraph(found.legend, "legend"),
                   Items.of(found.notes, "note")]  # fmt: skip
        if found.spell_caveats:
            blocks += _caveat_lines(report, found)
        for view in found.terminal_tables or found.tables:
            blocks += [Paragraph(""), Table(view)]
        for probe in found.probes if found.probes_in_terminal else ():
            blocks += probe_render.screen_blocks(probe.as_report())
    return blocks


def _caveat_lines(report: Report, found: PickTwo) -> list[Paragraph]:
    """How the performance numbers were measured, spelled out under the table: 'caveat (on a, b)'."""
    on: dict[int, list[str]] = {}
    for row in found.rows:
        for prop in row.properties:
            for n in (n for m in prop.measures for n in m.notes):
                if row.label not in on.setdefault(n, []):
                    on[n].append(row.label)
    return [Paragraph(f"! {report.notes[n - 1]} (on {', '.join(on[n])})", "caveat") for n in sorted(on)]


def chapters(report: Report, options: Options) -> list[Chapter]:
    """A chapter per lab: intro, table, chart, legend, notes, its own tables, then the probe's tables."""
    out = []
    for found in report.pick_two:
        blocks: list[Block] = [Paragraph(found.intro)] if found.intro else []
        blocks += [Table(table(report, found)), Figure(found.key, found.title), Paragraph(found.legend, "legend"),
                   Items.of(found.notes, "note"), *(Table(view) for view in found.tables)]  # fmt: skip
        for probe in found.probes:
            blocks += [Heading(found.probe_heading), *probe_render.document_blocks(probe.as_report(), level=4)]
        out.append(Chapter(found.key, found.title, tuple(blocks), style=css(found.key) + probe_render.VERDICT_CSS))
    return out


def css(key: str) -> str:
    """The verdicts' colours, scoped to one lab's chapter (its id)."""
    return f"""
#{key} td {{ vertical-align: top; }}
#{key} .v-good {{ color: #1a7f37; }} #{key} .v-fair {{ color: #9a6700; }} #{key} .v-poor {{ color: #cf222e; }}
#{key} .v-data-loss {{ background: #cf222e; color: #fff; font-weight: bold; }}
#{key} .v-not-shared {{ color: #6e7781; }} #{key} .v-not-measured {{ color: #8250df; }}
#{key} .measure {{ display: block; font-size: .9em; color: #444; }}
"""


def charts(report: Report) -> list[Chart]:
    """Each lab's pick-two chart, where it draws one."""
    return [Chart(found.key, "pick-two", found.title, lambda found=found: pick_two_figure(found))
            for found in report.pick_two if found.chart and found.rows]  # fmt: skip


page_charts = nothing  # the page draws no chart of its own here
