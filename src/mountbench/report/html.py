"""The HTML report: one self-contained file (inline CSS, inline SVG charts, a few
lines of inline JavaScript to sort tables; nothing fetched from the network, and a
Content-Security-Policy that forbids it).

It leads with the answer (a headline per target, the summary grid), then verdicts and
the detail. Every [n] mark is a link to its note with the note as its tooltip. The
summary grid and the verdicts read at 400 px without sideways scrolling (the grid turns
into one card per workload); dark mode follows prefers-color-scheme; printing keeps
headings with what follows them.

Pure: ``render_html(report)`` returns the page. The view model built here holds
only display strings; the template (templates/report.html.j2) only lays them out.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from mountbench import __version__
from mountbench.blocks import tokens
from mountbench.blocks.table import Mark, TableView, note_links
from mountbench.blocks.to_html import chapter_html, environment
from mountbench.report import views
from mountbench.report.chartkeys import Chart
from mountbench.report.chartkit import page_chart, page_css, page_jobs, render_all
from mountbench.report.charts import plan_charts
from mountbench.report.grid import unit_name
from mountbench.report.labels import all_workloads, host_of_run
from mountbench.report.methodology import cache_actions, methodology, repetitions, run_facts
from mountbench.report.model import Report
from mountbench.report.notes import measurement_caveats
from mountbench.report.phrasing import UNDECIDED_LEGEND, interval_legend, same_legend
from mountbench.report.rounds import rounds_legend
from mountbench.report.sections import SECTIONS, Options
from mountbench.report.verdicts import verdicts


@dataclass
class HeadlineView:
    text: str
    kind: str


@dataclass
class WarningItem:
    html: Markup  # escaped here: a caveat's item links to its note


@dataclass
class WarningGroup:
    """Warnings of one kind: one line with their count, opened to list them (issue 37: twelve
    "not steady" caveats pushed the summary three phone screens down)."""

    title: str
    css: str
    items: list[WarningItem]


# Phrases that point at another medium: said on the terminal and in Markdown, not on the page that
# is the thing they point at (nor in the PDF printed from it).
OTHER_MEDIA = ("; 'mountbench report --format html' draws it",)


@dataclass
class Page:
    title: str
    headlines: list[HeadlineView]
    intro: str
    grid: list[views.GridView]
    grid_unit: str
    warnings: list[WarningGroup]
    verdicts: list[dict[str, object]]
    tables: list[TableView]
    overview_chart: Markup | None  # every workload and target (small multiples)
    ratio_chart: Markup | None
    sections: list[tuple[str, Markup]]  # the optional sections (report/sections/), escaped there, and their titles
    hosts: list[list[str]]
    runs: list[dict[str, str]]
    targets: list[list[str]]
    workloads: list[dict[str, str]]
    methodology: list[str]
    notes: list[tuple[int, str]]
    generated: str
    rounds: TableView | None = None  # adaptive runs: rounds per cell and why no more
    rounds_legend: str = ""


def render_html(report: Report, *, with_charts: bool = True, per_client: bool = False, phone: bool = True) -> str:
    """The whole page as one string. ``phone``: with each chart's drawing for a phone's width too (False for
    the page printed to PDF, whose print rules show the wide drawings alone: half the charts to draw)."""
    svgs = _page_svgs(page_charts(report), phone=phone) if with_charts else {}
    page = build_page(report, svgs, Options(per_client=per_client))
    html = environment("mountbench.report").get_template("report.html.j2").render(page=page)
    for phrase in OTHER_MEDIA:  # as the page wrote it: escaped, each option in its unbreakable span
        html = html.replace(str(tokens.html(phrase)), "").replace(str(escape(phrase)), "").replace(phrase, "")
    return html.replace("</style>", page_css(html) + "</style>", 1)  # the colours every chart's ink names


def _page_svgs(charts: Sequence[Chart], *, phone: bool = True) -> dict[str, tuple[Chart, Markup]]:
    """Each chart as the page shows it (chartkit.page_chart), every drawing rendered at once
    (chartkit.render_all: in parallel where a CPU is free); without ``phone``, the wide drawings alone."""
    charts = [chart if phone else dataclasses.replace(chart, narrow=None) for chart in charts]
    jobs = [page_jobs(chart) for chart in charts]
    rendered = iter(render_all([job for chart_jobs in jobs for job in chart_jobs]))
    drawn = [[next(rendered) for _ in chart_jobs] for chart_jobs in jobs]
    said = {} if phone else {"note": ""}  # printed: no word of what a phone would show
    pairs = zip(charts, drawn, strict=True)
    return {chart.key: (chart, Markup(page_chart(chart, svgs=svgs, **said))) for chart, svgs in pairs}


def page_charts(report: Report) -> list[Chart]:
    """The charts the page shows: one per question. Every workload and target in one chart of
    small multiples (not one chart per metric; with a single metric, its own), each target
    against the baseline, then the sections' charts."""
    charts = plan_charts(report)
    if any(chart.kind == "overview" for chart in charts):
        charts = [chart for chart in charts if chart.kind != "bars"]
    return charts + [chart for section in SECTIONS for chart in section.page_charts(report)]


def build_page(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options | None = None) -> Page:
    options = options or Options()
    ratio = svgs.get("ratio")
    overview = next((svg for chart, svg in svgs.values() if chart.kind in ("overview", "bars")), None)
    return Page(
        title="mountbench: " + " vs ".join(report.summary.targets),
        headlines=[HeadlineView(h.text, h.kind) for h in report.headlines],
        intro=_intro(report),
        grid=[views.grid_view(report, section) for section in report.grid.sections],
        grid_unit="" if report.grid.unit == "auto" else f"--unit {unit_name(report.grid.unit)}",
        warnings=warning_groups(report),
        verdicts=_verdicts(report),
        tables=views.results_tables(report),
        overview_chart=overview,
        ratio_chart=ratio[1] if ratio else None,
        sections=[
            (chapter.title, part)
            for section in SECTIONS
            for chapter in section.chapters(report, options)
            if (part := chapter_html(chapter, svgs))
        ],
        hosts=views.host_rows(report),
        runs=_runs(report),
        targets=views.target_rows(report),
        workloads=[
            {
                "name": w.name,
                "title": w.title,
                "kind": w.kind,
                "settings": w.description.summary,
                "options": "\n".join(w.description.options),
                "source": w.source,
            }
            for w in all_workloads(report)
        ],
        methodology=methodology(report),
        notes=list(enumerate(report.notes, 1)),
        generated=f"mountbench {__version__}",
        rounds=views.rounds_table(report) if report.adaptive else None,
        rounds_legend=rounds_legend(report) if report.adaptive else "",
    )


def _intro(report: Report) -> str:
    hosts = ", ".join(dict.fromkeys(c.host for c in report.columns))
    text = (
        f"Runs {', '.join(run.id for run in report.runs)} on {hosts}; baseline {report.summary.baseline}. "
        f"Each value: the median of {repetitions(report)} samples (± their coefficient of variation in "
        "the detail); each other target is N× faster or slower than the baseline (ratio of geometric means, paired "
        f"by round where the run paired them) with its {interval_legend(report.summary, report.adaptive)}; "
        f"{same_legend(report.summary, report.adaptive)}; {UNDECIDED_LEGEND}. [n] links to its note."
    )
    if report.multi_host:
        text += " Columns are named label@host: these runs come from different machines."
    return text


def warning_groups(report: Report) -> list[WarningGroup]:
    """The warnings, then the caveats about how numbers were measured, one group per kind: a
    warning's kind is its wording with names and numbers left out, a caveat's its code."""
    groups: dict[tuple[str, str], WarningGroup] = {}
    for text in report.warnings:
        kind = _kind_of(text)
        group = groups.setdefault(("warning", kind), WarningGroup(kind, "warning", []))
        group.items.append(WarningItem(tokens.html(text)))
    for caveat in measurement_caveats(report):
        number = report.notes.index(caveat.text) + 1
        group = groups.setdefault(("caveat", caveat.code), WarningGroup(_kind_of(caveat.text), "caveat-note", []))
        group.items.append(
            WarningItem(
                Markup('<a href="#note-{}">[{}]</a> {} — the highlighted cells carry this caveat.').format(
                    number, number, tokens.html(caveat.text)
                )
            )
        )
    return list(groups.values())


def _kind_of(text: str) -> str:
    """What a warning is about, without its particulars: its words up to the first colon or
    parenthesis, names in quotes and run ids left out."""
    head = re.split(r"[:(]", text, maxsplit=1)[0]
    head = re.sub(r"'[^']*'|\b\d{8}-\d{6}-\w+\b", "…", head)
    return " ".join(head.split()) or text


def _verdicts(report: Report) -> list[dict[str, object]]:
    found = []
    rows = {(r.workload, r.metric.name): r for r in report.summary.rows}
    for item in verdicts(report.summary):
        row = rows[(item.workload, item.metric)]
        kind = item.kind or ("same" if item.better is None else ("better" if item.better else "worse"))
        found.append({"text": item.text, "kind": kind, "links": _links(report, report.ratio_marks(row, item.target))})
    return found


def _links(report: Report, numbers: Sequence[int]) -> list[Mark]:
    return note_links(report.notes, numbers)


# --- environment and methodology ------------------------------------------------------------------


def _runs(report: Report) -> list[dict[str, str]]:
    found = []
    for run in report.runs:
        facts = run_facts(run)
        caches = "; ".join(f"{action}: {count} samples" for action, count in cache_actions(run))
        found.append(
            {
                "id": run.id,
                "host": host_of_run(report, run.id),
                "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(run.created_at)),
                "status": run.status,
                "command": run.command,
                "facts": "; ".join(facts),
                "caches": caches or "no samples",
            }
        )
    return found
