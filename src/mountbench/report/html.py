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

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from mountbench import __version__
from mountbench.report import views
from mountbench.report.chartkeys import Chart
from mountbench.report.chartkit import page_chart, page_css
from mountbench.report.charts import plan_charts
from mountbench.report.labels import all_workloads, host_of_run
from mountbench.report.methodology import cache_actions, methodology, repetitions, run_facts
from mountbench.report.model import Report
from mountbench.report.notes import measurement_caveats
from mountbench.report.phrasing import SAME_LEGEND, UNDECIDED_LEGEND, interval_legend
from mountbench.report.rounds import rounds_legend
from mountbench.report.sections import SECTIONS, Options
from mountbench.report.tables import Mark, TableView, environment, note_links
from mountbench.report.verdicts import verdicts


@dataclass
class HeadlineView:
    text: str
    kind: str


@dataclass
class Page:
    title: str
    headlines: list[HeadlineView]
    intro: str
    grid: list[views.GridView]
    grid_unit: str
    warnings: list[str]
    caveats: list[tuple[int, str]]
    verdicts: list[dict[str, object]]
    tables: list[TableView]
    overview_chart: Markup | None  # every workload and target (small multiples)
    ratio_chart: Markup | None
    sections: list[Markup]  # the optional sections (report/sections/), escaped there
    hosts: list[list[str]]
    runs: list[dict[str, str]]
    targets: list[list[str]]
    workloads: list[dict[str, str]]
    methodology: list[str]
    notes: list[tuple[int, str]]
    generated: str
    rounds: TableView | None = None  # adaptive runs: rounds per cell and why no more
    rounds_legend: str = ""


def render_html(report: Report, *, with_charts: bool = True, per_client: bool = False) -> str:
    """The whole page as one string."""
    svgs = {chart.key: (chart, Markup(page_chart(chart))) for chart in page_charts(report)} if with_charts else {}
    page = build_page(report, svgs, Options(per_client=per_client, draw=with_charts))
    html = environment().get_template("report.html.j2").render(page=page)
    return html.replace("</style>", page_css(html) + "</style>", 1)  # the colours every chart's ink names


def page_charts(report: Report) -> list[Chart]:
    """The charts the page shows: one per question. Every workload and target in one chart of
    small multiples (not one chart per metric; with a single metric, its own), each target
    against the baseline, then the sections' charts."""
    charts = plan_charts(report)
    if any(chart.kind == "overview" for chart in charts):
        charts = [chart for chart in charts if chart.kind != "bars"]
    return charts


def build_page(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options | None = None) -> Page:
    options = options or Options()
    ratio = svgs.get("ratio")
    overview = next((svg for chart, svg in svgs.values() if chart.kind in ("overview", "bars")), None)
    return Page(
        title="mountbench: " + " vs ".join(report.summary.targets),
        headlines=[HeadlineView(h.text, h.kind) for h in report.headlines],
        intro=_intro(report),
        grid=[views.grid_view(report, section) for section in report.grid.sections],
        grid_unit="" if report.grid.unit == "auto" else f"--unit {report.grid.unit}",
        warnings=list(report.warnings),
        caveats=[(report.notes.index(c.text) + 1, c.text) for c in measurement_caveats(report)],
        verdicts=_verdicts(report),
        tables=views.results_tables(report),
        overview_chart=overview,
        ratio_chart=ratio[1] if ratio else None,
        sections=[part for section in SECTIONS if (part := section.html(report, svgs, options))],
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
        f"{SAME_LEGEND}; {UNDECIDED_LEGEND}. [n] links to its note. Click a column "
        "heading to sort."
    )
    if report.multi_host:
        text += " Columns are named label@host: these runs come from different machines."
    return text


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
