""" "Pick two", measured, for every lab: its mounts down, its three properties across, each with a
verdict (good, fair, poor; data loss; not shared; not measured) over what it stands on, and what
each mount "gets". Study S3 summed up 9p's cache modes as "performance, reliability, concurrency:
pick two"; each lab's run holds what it takes to measure its own three instead of quoting them.
The report judges them once, when it is built (Report.pick_two: one per lab, picktwo/), and this
one section shows each the same way in every format: the table (a TableView the terminal, Markdown
and HTML lay out), its legend and notes, the lab's own tables (its mounts, what each supports), the
probe's own tables where the lab's probe is probe/'s (rendered by probe.render), the chart where
the lab draws one (picktwo/chart.py), and its records for CSV and JSON (one row per mount and
measure, every lab's in one file).
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from markupsafe import Markup
from rich.console import Group, RenderableType
from rich.text import Text

from mountbench.probe import render as probe_render
from mountbench.report.chartkeys import Chart
from mountbench.report.csvexport import records_csv
from mountbench.report.model import Report
from mountbench.report.picktwo.chart import pick_two_figure
from mountbench.report.picktwo.rows import PickTwo
from mountbench.report.picktwo.scale import verdict_cell
from mountbench.report.sections.base import Export, Options, nothing
from mountbench.report.tables import CellView, Line, RichLayout, TableView, md_text, note_links, rich_table
from mountbench.report.tables import html as html_view
from mountbench.report.tables import markdown as md_view

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


# --- terminal, Markdown, HTML ------------------------------------------------------------------------


def terminal(report: Report, options: Options) -> list:
    """Each lab's pick-two table, its legend and notes, its own tables, then the probe's tables."""
    out: list[RenderableType] = []
    for found in report.pick_two:
        # the numbers' caveats are spelled out under the table (spell_caveats), else marked in it
        layout = RichLayout(show_lines=True, marks=not found.spell_caveats)
        parts: list[RenderableType] = [Text(""), rich_table(table(report, found), layout=layout)]
        parts.append(Text(found.legend, style="dim"))
        parts += [Text(line, style="dim") for line in found.notes]
        if found.spell_caveats:
            parts += _caveat_lines(report, found)
        for view in found.terminal_tables or found.tables:
            parts += [Text(""), rich_table(view)]
        for probe in found.probes if found.probes_in_terminal else ():
            parts += probe_render.render_document_terminal(probe.as_report())
        out.append(Group(*parts))
    return out


def _caveat_lines(report: Report, found: PickTwo) -> list[Text]:
    """How the performance numbers were measured, spelled out under the table: 'caveat (on a, b)'."""
    on: dict[int, list[str]] = {}
    for row in found.rows:
        for prop in row.properties:
            for n in (n for m in prop.measures for n in m.notes):
                if row.label not in on.setdefault(n, []):
                    on[n].append(row.label)
    return [Text(f"! {report.notes[n - 1]} (on {', '.join(on[n])})", style="yellow") for n in sorted(on)]


def markdown(report: Report, charts: Mapping[str, str], options: Options) -> str:
    """Each lab's section: heading, intro, table, chart, legend, notes, its tables, the probe's tables."""
    sections = []
    for found in report.pick_two:
        parts = [f"## {md_text(found.title)}"]
        if found.intro:
            parts.append(md_text(found.intro))
        parts.append(md_view(table(report, found)))
        if found.key in charts:
            parts.append(f"![{md_text(found.title)}]({charts[found.key]})")
        parts.append(f"_{md_text(found.legend)}_")
        if found.notes:
            parts.append("\n".join(f"- {md_text(line)}" for line in found.notes))
        parts += [md_view(view) for view in found.tables]
        for probe in found.probes:
            parts.append(f"### {md_text(found.probe_heading)}")
            parts.append(probe_render.render_document_markdown(probe.as_report()).rstrip())
        sections.append("\n\n".join(parts))
    return "\n\n".join(sections)


CSS = """
.pick-two td { vertical-align: top; }
.pick-two .v-good { color: #1a7f37; } .pick-two .v-fair { color: #9a6700; } .pick-two .v-poor { color: #cf222e; }
.pick-two .v-data-loss { background: #cf222e; color: #fff; font-weight: bold; }
.pick-two .v-not-shared { color: #6e7781; } .pick-two .v-not-measured { color: #8250df; }
.pick-two .measure { display: block; font-size: .9em; color: #444; }
"""


def html(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options) -> Markup:
    """Each lab's section as an HTML fragment, its chart inline when drawn."""
    e = escape
    out = []
    for found in report.pick_two:
        out.append(f'<section class="pick-two" id="{e(found.key)}"><style>{CSS}{probe_render.PROBE_CSS}</style>')
        out.append(f"<h2>{e(found.title)}</h2>" + (f"<p>{e(found.intro)}</p>" if found.intro else ""))
        out.append(str(html_view(table(report, found))))
        if found.key in svgs:
            out.append(f'<figure class="chart">{svgs[found.key][1]}</figure>')
        out.append(f'<p class="legend">{e(found.legend)}</p>')
        out.append('<ul class="notes">' + "".join(f"<li>{e(line)}</li>" for line in found.notes) + "</ul>")
        out += [str(html_view(view)) for view in found.tables]
        for probe in found.probes:
            probed = probe.as_report()
            out.append(f"<h3>{e(found.probe_heading)}</h3>")
            lost = probe_render.data_loss(probed)
            if lost:
                out.append(
                    f'<div class="data-loss"><h4>‼ {e(probe_render.DATA_LOSS_TITLE)}</h4><ul>'
                    + "".join(f"<li>{e(line)}</li>" for line in lost)
                    + "</ul></div>"
                )
            if probed.targets:
                out.append(probe_render.render_html_fragment(probed.targets, reference=probed.reference))
            if probed.coherence:
                out.append(
                    probe_render.render_coherence_html_fragment(probed.coherence, reference=probed.reference_coherence)
                )
        out.append("</section>")
    return Markup("\n".join(out))  # escaped above


def charts(report: Report) -> list[Chart]:
    """Each lab's pick-two chart, where it draws one."""
    return [Chart(found.key, "pick-two", found.title, lambda found=found: pick_two_figure(found))
            for found in report.pick_two if found.chart and found.rows]  # fmt: skip


page_charts = nothing  # the page draws no chart of its own here
