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
from dataclasses import dataclass, field

import jinja2
from markupsafe import Markup

from mountbench import __version__
from mountbench.analysis.summary import Row
from mountbench.report import content, costview, picktwo, serieschart, sweeptext
from mountbench.report.cells import format_spread, format_value
from mountbench.report.chartkeys import bars_key, grid_key, percentile_key, sweep_key
from mountbench.report.charts import Chart, inline_svg, plan_charts
from mountbench.report.clients_views import clients_html
from mountbench.report.content import Report
from mountbench.report.grid import GridSection
from mountbench.report.phrasing import cell_standing, words
from mountbench.report.verdicts import verdicts
from mountbench.units import format_bytes, format_seconds

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("mountbench.report", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


@dataclass
class Mark:
    """A link to note ``number`` whose tooltip is the note."""

    number: int
    note: str


@dataclass
class CellView:
    text: str
    sort: str = ""  # numeric sort key ("" sorts last)
    classes: str = ""
    notes: str = ""  # tooltip: the notes' text
    marks: str = ""  # "[1,2]" (plain; ``links`` instead where notes are linked)
    links: list[Mark] = field(default_factory=list)


@dataclass
class TableView:
    id: str
    heading: str
    headers: list[str]
    rows: list[list[CellView]]
    chart: Markup | None = None
    chart_title: str = ""
    numeric_from: int = 1  # columns from this index are right-aligned
    caption: str = ""  # a sentence on what the table shows, under its heading
    header_links: list[list[Mark]] = field(default_factory=list)  # per header: its notes


@dataclass
class GridCellView:
    """One value of the summary grid and, for other targets, how it compares."""

    label: str  # what the column is: "disk write", shown on narrow screens
    value: str
    value_links: list[Mark]
    comparison: str = ""  # "6.20× slower", "≈ same"
    kind: str = ""  # better | worse | same | unknown
    comparison_links: list[Mark] = field(default_factory=list)
    title: str = ""  # tooltip: the comparison with its interval
    failed: bool = False


@dataclass
class GridView:
    heading: str
    headers: list[str]
    rows: list[tuple[str, list[GridCellView | None]]]


@dataclass
class HeadlineView:
    text: str
    kind: str


@dataclass
class Page:
    title: str
    headlines: list[HeadlineView]
    intro: str
    grid: list[GridView]
    grid_unit: str
    warnings: list[str]
    caveats: list[tuple[int, str]]
    verdicts: list[dict[str, object]]
    tables: list[TableView]
    ratio_chart: Markup | None
    ratio_title: str
    percentiles: list[TableView]
    sweeps: list[TableView]
    pick_two: Markup  # lab --probe: the pick-two section (report/picktwo.py), empty without it
    costs: list[TableView]  # study S1's host cost per case (report/costview.py)
    costs_intro: str
    hosts: list[list[str]]
    runs: list[dict[str, str]]
    targets: list[list[str]]
    workloads: list[dict[str, str]]
    methodology: list[str]
    notes: list[tuple[int, str]]
    generated: str
    clients: Markup  # runs on several clients: report/clients.py's section (empty otherwise)
    rounds: TableView | None = None  # adaptive runs: rounds per cell and why no more
    rounds_legend: str = ""
    series: list[tuple[str, Markup]] = field(default_factory=list)  # within each sample (serieschart.py)
    series_more: int = 0  # workloads with series not drawn


def render_html(report: Report, *, with_charts: bool = True, per_client: bool = False) -> str:
    """The whole page as one string."""
    svgs = {chart.key: (chart, Markup(inline_svg(chart))) for chart in plan_charts(report)} if with_charts else {}
    page = build_page(report, svgs, per_client=per_client)
    if with_charts:  # HTML alone draws what happened within each sample
        page.series = [(chart.title, Markup(inline_svg(chart))) for chart in serieschart.series_charts(report)]
        page.series_more = serieschart.series_cases(report)[1]
    return _ENV.get_template("report.html.j2").render(page=page)


def build_page(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], *, per_client: bool = False) -> Page:
    ratio = svgs.get("ratio")
    client_svgs = {key: str(svg) for key, (_, svg) in svgs.items()}
    return Page(
        title="mountbench: " + " vs ".join(report.summary.targets),
        headlines=[HeadlineView(h.text, h.kind) for h in report.headlines],
        intro=_intro(report),
        grid=[_grid_view(report, section) for section in report.grid.sections],
        grid_unit="" if report.grid.unit == "auto" else f"--unit {report.grid.unit}",
        warnings=list(report.warnings),
        caveats=[(report.notes.index(c.text) + 1, c.text) for c in content.measurement_caveats(report)],
        verdicts=_verdicts(report),
        tables=_result_tables(report, svgs),
        ratio_chart=ratio[1] if ratio else None,
        ratio_title=ratio[0].title if ratio else "",
        percentiles=_percentile_tables(report, svgs),
        sweeps=_sweep_tables(report, svgs),
        pick_two=Markup(picktwo.render_html(report, svgs[picktwo.KEY][1] if picktwo.KEY in svgs else None)),
        costs=_cost_tables(report, svgs),
        costs_intro=costview.section_intro(),
        hosts=_hosts(report),
        runs=_runs(report),
        targets=_targets(report),
        workloads=[
            {
                "name": w.name,
                "title": w.title,
                "kind": w.kind,
                "settings": content.workload_summary(w),
                "options": content.workload_options(w),
                "source": w.source,
            }
            for w in content.all_workloads(report)
        ],
        methodology=content.methodology(report),
        notes=list(enumerate(report.notes, 1)),
        generated=f"mountbench {__version__}",
        clients=Markup(clients_html(report.runs, client_svgs, per_client=per_client)),  # escaped there
        rounds=_rounds_table(report) if report.adaptive else None,
        rounds_legend=content.rounds_legend(report) if report.adaptive else "",
    )


def _intro(report: Report) -> str:
    hosts = ", ".join(dict.fromkeys(c.host for c in report.columns))
    text = (
        f"Runs {', '.join(run.id for run in report.runs)} on {hosts}; baseline {report.summary.baseline}. "
        f"Each value: the median of {content.repetitions(report)} samples (± their coefficient of variation in "
        "the detail); each other target is N× faster or slower than the baseline (ratio of geometric means) with "
        "its 95% confidence interval; ≈ same: within noise. [n] links to its note. Click a column heading to sort."
    )
    if report.multi_host:
        text += " Columns are named label@host: these runs come from different machines."
    return text


def _verdicts(report: Report) -> list[dict[str, object]]:
    found = []
    rows = {(r.workload, r.metric.name): r for r in report.summary.rows}
    for item in verdicts(report.summary):
        row = rows[(item.workload, item.metric)]
        kind = "same" if item.better is None else ("better" if item.better else "worse")
        found.append({"text": item.text, "kind": kind, "links": _links(report, report.ratio_marks(row, item.target))})
    return found


def _marks(numbers: Sequence[int]) -> str:
    return f"[{','.join(map(str, numbers))}]" if numbers else ""


def _links(report: Report, numbers: Sequence[int]) -> list[Mark]:
    return [Mark(n, f"[{n}] {report.notes[n - 1]}") for n in numbers]


# --- the summary grid ----------------------------------------------------------------------------


def _grid_view(report: Report, section: GridSection) -> GridView:
    columns = [(t, d) for t in report.summary.targets for d in section.directions]
    headers = ["workload"] + [f"{_heading(report, t)} {d}".strip() for t, d in columns]
    rows = []
    for line in section.lines:
        cells: list[GridCellView | None] = []
        for target, direction in columns:
            row = line.row(direction)
            cells.append(_grid_cell(report, section, row, target, direction) if row else None)
        rows.append((line.title, cells))
    return GridView(section.heading, headers, rows)


def _grid_cell(report: Report, section: GridSection, row: Row, target: str, direction: str) -> GridCellView:
    cell = row.cells[target]
    label = f"{_heading(report, target)} {direction}".strip()
    links = _links(report, report.cell_marks(row, target))
    if cell.summary is None:
        text = f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
        return GridCellView(label, text, links, failed=bool(cell.failed))
    value = section.scale.format(cell.summary.median)
    said = cell_standing(row, target) if target != report.summary.baseline else None
    if said is None:
        return GridCellView(label, value, links)
    return GridCellView(
        label, value, links, said.short, said.kind, _links(report, report.ratio_marks(row, target)), said.text
    )


def _tooltip(report: Report, numbers: list[int] | tuple[int, ...]) -> str:
    return "\n".join(f"[{n}] {report.notes[n - 1]}" for n in numbers)


def _heading(report: Report, label: str) -> str:
    """Merged runs from several hosts already have label@host column names."""
    return f"{label} (baseline)" if label == report.summary.baseline else label


# --- result tables ------------------------------------------------------------------------------


def _result_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    baseline = report.summary.baseline
    others = [t for t in report.summary.targets if t != baseline]
    tables = []
    for index, group in enumerate(report.groups):
        headers = ["workload", *(_heading(report, t) for t in report.summary.targets)]
        headers += [f"{t} vs {baseline}" for t in others]
        rows = [
            [CellView(row.title)]
            + [_value_cell(report, row, t) for t in report.summary.targets]
            + [_ratio_cell(report, row, t) for t in others]
            for row in group.rows
        ]
        chart = svgs.get(bars_key(group))
        tables.append(
            TableView(
                id=f"results-{index + 1}",
                heading=content.group_heading(group),
                headers=headers,
                rows=rows,
                chart=chart[1] if chart else None,
                chart_title=chart[0].title if chart else "",
            )
        )
    return tables


def _value_cell(report: Report, row: Row, target: str) -> CellView:
    cell = row.cells[target]
    marks = report.cell_marks(row, target)
    classes = []
    if report.measurement_marks(cell):
        classes.append("caveat")
    if any(c.code in content.QUALITY_CODES for c in cell.caveats):
        classes.append("quality")
    if cell.summary is None:
        classes.append("failed")
        text = f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
        return CellView(text, "", " ".join(classes), _tooltip(report, marks), links=_links(report, marks))
    text = format_value(cell.summary.median, row.metric)
    spread = format_spread(cell)
    if spread:
        text += f" {spread}"
    if cell.failed:
        text += f", {cell.failed} failed"
    return CellView(
        text, repr(cell.summary.median), " ".join(classes), _tooltip(report, marks), links=_links(report, marks)
    )


def _ratio_cell(report: Report, row: Row, target: str) -> CellView:
    said = cell_standing(row, target)
    if said is None:
        return CellView("–")
    # sorts by how much better the target is: the factor, negative when worse
    sort = repr(said.factor if said.word == words(row.metric)[0] else -said.factor)
    marks = report.ratio_marks(row, target)
    return CellView(said.text, sort, f"ratio {said.kind}", _tooltip(report, marks), links=_links(report, marks))


def _column_marks(report: Report, rows: tuple[Row, ...], target: str) -> list[int]:
    return sorted({n for row in rows for n in report.measurement_marks(row.cells[target])})


def _percentile_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    targets = report.summary.targets
    tables = []
    for index, curve in enumerate(report.percentiles):
        headers = ["percentile", *(_heading(report, t) for t in targets)]
        header_links = [[]] + [_links(report, _column_marks(report, curve.rows, t)) for t in targets]
        rows = []
        for percentile, row in zip(curve.percentiles, curve.rows, strict=True):
            cells = [CellView(f"p{percentile:g}", repr(percentile))]
            for t in targets:
                summary = row.cells[t].summary
                cells.append(
                    CellView(format_seconds(summary.median), repr(summary.median)) if summary else CellView("–")
                )
            rows.append(cells)
        chart = svgs.get(percentile_key(curve))
        tables.append(
            TableView(
                f"percentiles-{index + 1}",
                f"{curve.title}: {curve.direction} latency (lower is better)",
                headers,
                rows,
                chart[1] if chart else None,
                chart[0].title if chart else "",
                header_links=header_links,
            )
        )
    return tables


def _sweep_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    """One table and chart per sweep; per grid, a table per target and one heat map."""
    targets = report.summary.targets
    tables = []
    for index, sweep in enumerate(report.sweeps, 1):
        named = not sweep.generated
        headers = [sweeptext.option_label(sweep.option), *(["workload"] if named else [])]
        headers += [f"{_heading(report, t)} {_marks(_column_marks(report, sweep.rows, t))}".strip() for t in targets]
        rows = []
        for i, (value, number, row) in enumerate(zip(sweep.values, sweep.numbers, sweep.rows, strict=True)):
            cells = [CellView(value, repr(number)), *([CellView(row.workload)] if named else [])]
            for t in targets:
                cell = row.cells[t]
                optimum = sweep.optima.get(t)
                classes = " ".join(
                    name
                    for name, on in (("peak", optimum and optimum.peak == i), ("knee", optimum and optimum.knee == i))
                    if on
                )
                text = sweeptext.point_text(cell, sweep.unit[0]) + sweeptext.point_marks(sweep, i, t)
                sort = repr(cell.summary.median) if cell.summary else ""
                cells.append(CellView(text, sort, classes))
            rows.append(cells)
        blank = [CellView("")] if named else []
        rows.append([CellView(f"{sweeptext.PEAK_MARK} optimum"), *blank])
        rows[-1] += [CellView(sweeptext.optimum_text(sweep, t), "", "peak") for t in targets]
        rows.append([CellView(f"{sweeptext.KNEE_MARK} knee"), *blank])
        rows[-1] += [CellView(sweeptext.knee_text(sweep, t), "", "knee") for t in targets]
        chart = svgs.get(sweep_key(index, sweep))
        tables.append(
            TableView(
                f"sweep-{index}",
                sweeptext.heading(sweep),
                headers,
                rows,
                chart[1] if chart else None,
                chart[0].title if chart else "",
                numeric_from=2 if named else 1,
                caption=sweeptext.explanation(sweep),
            )
        )
    for index, grid in enumerate(report.grids, 1):
        chart = svgs.get(grid_key(index, grid))
        for k, target in enumerate(targets):
            last = k == len(targets) - 1
            headers = [f"{_heading(report, target)}: {grid.row_option} ↓ {grid.column_option} →"]
            headers += list(grid.column_values)
            rows = []
            for i, value in enumerate(grid.row_values):
                cells = [CellView(value, repr(grid.row_numbers[i]))]
                for j in range(len(grid.column_values)):
                    row = grid.cells.get((i, j))
                    if row is None:
                        cells.append(CellView(""))
                        continue
                    best = grid.best.get(target) == (i, j)
                    text = sweeptext.point_text(row.cells[target], grid.unit[0])
                    summary = row.cells[target].summary
                    cells.append(
                        CellView(
                            text + (f" {sweeptext.PEAK_MARK}" if best else ""),
                            repr(summary.median) if summary else "",
                            "peak" if best else "",
                        )
                    )
                rows.append(cells)
            tables.append(
                TableView(
                    f"grid-{index}-{k + 1}",
                    f"{sweeptext.grid_heading(grid)} — {_heading(report, target)}",
                    headers,
                    rows,
                    chart[1] if chart and last else None,
                    chart[0].title if chart and last else "",
                    caption=sweeptext.grid_explanation(grid) if k == 0 else "",
                )
            )
    return tables


def _rounds_table(report: Report) -> TableView:
    headers = ["workload", *report.summary.targets]
    rows = [[CellView(title), *(CellView(text) for text in cells)] for title, cells in content.rounds_rows(report)]
    return TableView("rounds", "Rounds per cell (and why no more)", headers, rows)


def _cost_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    tables = []
    for index, case in enumerate(costview.cost_cases(report), 1):
        headers, body = costview.case_table(report, case)
        rows = [
            [CellView(text, "", "", _tooltip(report, marks), links=_links(report, marks)) for text, marks in cells]
            for cells in body
        ]
        chart = svgs.get(case.key)
        tables.append(TableView(f"cost-{index}", case.title, headers, rows, chart[1] if chart else None,
                                chart[0].title if chart else ""))  # fmt: skip
    return tables


# --- environment and methodology ------------------------------------------------------------------


def _hosts(report: Report) -> list[list[str]]:
    return [
        [
            name,
            str(host.get("os", "?")),
            str(host.get("cpu_model", "?")),
            str(host.get("cpu_count", "?")),
            format_bytes(float(host.get("ram_bytes") or 0)),
            str(host.get("fio_version") or "?"),
            str(host.get("mountbench_version", "?")),
        ]
        for name, host in content.run_hosts(report).items()
    ]


def _runs(report: Report) -> list[dict[str, str]]:
    found = []
    for run in report.runs:
        facts = content.run_facts(run)
        caches = "; ".join(f"{action}: {count} samples" for action, count in content.cache_actions(run))
        found.append(
            {
                "id": run.id,
                "host": content.host_of_run(report, run.id),
                "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(run.created_at)),
                "status": run.status,
                "command": run.command,
                "facts": "; ".join(facts),
                "caches": caches or "no samples",
            }
        )
    return found


def _targets(report: Report) -> list[list[str]]:
    rows = []
    for column in report.columns:
        info = column.info
        if info is None:
            rows.append([column.label, column.host, column.path, "not inspected", "", "", "", ""])
            continue
        rows.append(
            [
                column.label,
                column.host,
                column.path,
                info.fstype,
                info.mount_source,
                info.mount_options,
                "accepted" if info.odirect else f"refused ({info.odirect_detail})",
                f"{format_bytes(info.free_bytes)} of {format_bytes(info.total_bytes)}",
            ]
        )
    return rows
