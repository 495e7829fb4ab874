""" "Pick two", measured: performance, coherence and concurrency of each lab mount, side by side.

Study S3 summed up 9p's cache modes as "performance, reliability, concurrency: pick two".
A lab run made with `mountbench lab --probe` holds what it takes to measure that instead
of quoting it, per mount (and cache mode): picktwo/lab.py judges it once, when the report
is built (Report.pick_two), on the scale both labs share (picktwo/scale.py).

Each column gets a verdict (good, fair, poor; data loss; not shared: a virtual disk or the
guest's own RAM has no second view; not measured). The section also carries the probe's
own tables (what each mount supports, and every coherence check), rendered by probe.render.

This module is the report's "pick two" section in every format: one table (a TableView)
the terminal, Markdown and HTML lay out, CSV and JSON records, and the chart
(picktwo/chart.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from markupsafe import Markup
from rich.console import Group, RenderableType
from rich.text import Text

from mountbench.blocks.table import CellView, Line, TableView, note_links
from mountbench.blocks.to_html import html as html_view
from mountbench.blocks.to_markdown import markdown as md_view
from mountbench.blocks.to_markdown import md_text
from mountbench.blocks.to_terminal import RichLayout, rich_table
from mountbench.probe import render as probe_render
from mountbench.report.chartkeys import Chart
from mountbench.report.csvexport import records_csv
from mountbench.report.model import Report
from mountbench.report.picktwo.chart import KEY, pick_two_figure
from mountbench.report.picktwo.probed import PROPERTIES, TITLE, Measured, PickTwo
from mountbench.report.picktwo.scale import LEGEND as SCALE
from mountbench.report.picktwo.scale import verdict_cell
from mountbench.report.sections.base import Export, Options, nothing

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


# --- terminal, Markdown, HTML ------------------------------------------------------------------------


def terminal(report: Report, options: Options) -> list:
    """The pick-two table, its notes, then the probe's own tables (nothing without lab --probe)."""
    found = report.pick_two
    if found is None:
        return []
    # the numbers' caveats are spelled out under the table, not marked in it
    parts: list[RenderableType] = [
        Text(""),
        rich_table(table(report, found), layout=RichLayout(show_lines=True, marks=False)),
    ]
    parts.append(Text(LEGEND, style="dim"))
    parts += [Text(line, style="dim") for line in found.notes]
    parts += _caveat_lines(report, found)
    for probe in found.probes:
        parts += probe_render.render_document_terminal(probe.as_report())
    return [Group(*parts)]


def _caveat_lines(report: Report, found: PickTwo) -> list[Text]:
    """How the performance numbers were measured, spelled out under the table: 'caveat (on a, b)'."""
    on: dict[int, list[str]] = {}
    for row in found.rows:
        for n in (*row.write.notes, *row.tree.notes):
            if row.mount not in on.setdefault(n, []):
                on[n].append(row.mount)
    return [Text(f"! {report.notes[n - 1]} (on {', '.join(on[n])})", style="yellow") for n in sorted(on)]


def markdown(report: Report, charts: Mapping[str, str], options: Options) -> str:
    """The section: heading, table, chart, notes, then the probe's tables ('' without --probe)."""
    found = report.pick_two
    if found is None:
        return ""
    parts = [f"## {md_text(TITLE)}", md_text(_intro(found)), md_view(table(report, found))]
    if KEY in charts:
        parts.append(f"![{md_text(TITLE)}]({charts[KEY]})")
    parts.append(f"_{md_text(LEGEND)}_")
    parts += [md_text(line) for line in found.notes]
    for probe in found.probes:
        parts.append(f"### {md_text(PROBE_HEADING)}")
        parts.append(probe_render.render_document_markdown(probe.as_report()).rstrip())
    return "\n\n".join(parts)


PROBE_HEADING = "What each mount supports, and coherence in detail (lab --probe)"


def _intro(found: PickTwo) -> str:
    return (
        "Study S3's trade-off for VM shared folders, measured on this run's mounts: performance from the benchmark "
        f"run, coherence and concurrency from `lab --probe` ({found.repeat} repetitions, changes waited for up to "
        f"{found.timeout_s:g} s). A mount 'gets' the properties judged good."
    )


CSS = """
.pick-two td { vertical-align: top; }
.pick-two .v-good { color: #1a7f37; } .pick-two .v-fair { color: #9a6700; } .pick-two .v-poor { color: #cf222e; }
.pick-two .v-data-loss { background: #cf222e; color: #fff; font-weight: bold; }
.pick-two .v-not-shared { color: #6e7781; } .pick-two .v-not-measured { color: #8250df; }
.pick-two .measure { display: block; font-size: .9em; color: #444; }
"""


def html(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options) -> Markup:
    """The section as an HTML fragment ('' without --probe), its chart inline when drawn."""
    found = report.pick_two
    if found is None:
        return Markup("")
    e = escape
    out = [f'<section class="pick-two" id="{KEY}"><style>{CSS}{probe_render.PROBE_CSS}</style>']
    out.append(f"<h2>{e(TITLE)}</h2><p>{e(_intro(found))}</p>")
    out.append(str(html_view(table(report, found))))
    if KEY in svgs:
        out.append(f'<figure class="chart">{svgs[KEY][1]}</figure>')
    out.append(f'<p class="legend">{e(LEGEND)}</p>')
    out.append('<ul class="notes">' + "".join(f"<li>{e(line)}</li>" for line in found.notes) + "</ul>")
    for probe in found.probes:
        probed = probe.as_report()
        out.append(f"<h3>{e(PROBE_HEADING)}</h3>")
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
    """The pick-two chart, when the report holds a lab run made with --probe."""
    found = report.pick_two
    if found is None or not found.rows:
        return []
    return [Chart(KEY, "pick-two", TITLE, lambda: pick_two_figure(found))]


page_charts = nothing  # the page draws no chart of its own here
