"""The report's own tables (results per metric, rounds per cell, hosts, targets) built
once, for Markdown and HTML alike (the sections build theirs in sections/)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from markupsafe import Markup

from mountbench.analysis.summary import Row
from mountbench.blocks.table import CellView, Line, Mark, TableView, note_links, noted
from mountbench.report.cells import format_spread, format_value
from mountbench.report.chartkeys import Chart, bars_key
from mountbench.report.grid import GridSection
from mountbench.report.labels import all_workloads, run_hosts
from mountbench.report.model import QUALITY_CODES, Report, column_heading, group_heading
from mountbench.report.phrasing import cell_standing, words
from mountbench.report.rounds import rounds_rows
from mountbench.units import format_bytes

HOST_HEADERS = ["host", "OS and kernel", "CPU", "CPUs", "RAM", "fio", "mountbench"]
TARGET_HEADERS = ["column", "host", "path", "filesystem", "mount source", "mount options", "O_DIRECT", "free of total"]
TARGET_CODE = (2, 4, 5)  # columns shown as code: path, mount source, mount options


@dataclass
class GridCellView:
    """One value of the summary grid and, for other targets, how it compares."""

    label: str  # what the column is: "disk write", shown on narrow screens
    value: str
    value_links: list[Mark]
    comparison: str = ""  # "6.20× slower", "≈ same"
    kind: str = ""  # better | worse | same | undecided | unknown
    comparison_links: list[Mark] = field(default_factory=list)
    title: str = ""  # tooltip: the comparison with its interval
    failed: bool = False


@dataclass
class GridView:
    heading: str
    headers: list[str]
    rows: list[tuple[str, list[GridCellView | None]]]
    targets: list[tuple[str, int]] = field(default_factory=list)  # (heading, columns it spans) over ...
    directions: list[str] = field(default_factory=list)  # ... each target's read and write columns


def grid_view(report: Report, section: GridSection) -> GridView:
    """One section of the summary grid: read and write side by side under each target."""
    columns = [(t, d) for t in report.summary.targets for d in section.directions]
    headers = ["workload"] + [f"{column_heading(report, t)} {d}".strip() for t, d in columns]
    rows = []
    for line in section.lines:
        cells: list[GridCellView | None] = []
        for target, direction in columns:
            row = line.row(direction)
            cells.append(_grid_cell(report, section, row, target, direction) if row else None)
        rows.append((line.title, cells))
    spans = [(column_heading(report, t), len(section.directions)) for t in report.summary.targets]
    directions = [d for _ in report.summary.targets for d in section.directions] if len(section.directions) > 1 else []
    return GridView(section.heading, headers, rows, spans, directions)


def _grid_cell(report: Report, section: GridSection, row: Row, target: str, direction: str) -> GridCellView:
    cell = row.cells[target]
    label = f"{column_heading(report, target)} {direction}".strip()
    links = note_links(report.notes, report.cell_marks(row, target))
    if cell.summary is None:
        text = f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
        return GridCellView(label, text, links, failed=bool(cell.failed))
    value = section.scale.format(cell.summary.median)
    said = cell_standing(row, target) if target != report.summary.baseline else None
    if said is None:
        return GridCellView(label, value, links)
    return GridCellView(
        label, value, links, said.short, said.kind, note_links(report.notes, report.ratio_marks(row, target)), said.text
    )


def results_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]] | None = None) -> list[TableView]:
    """One table per metric: each target's median ±CV with its notes, then each comparison."""
    baseline = report.summary.baseline
    targets = report.summary.targets
    others = [t for t in targets if t != baseline]
    tables = []
    for index, group in enumerate(report.groups):
        headers = ["workload", *(column_heading(report, t) for t in targets)]
        headers += [f"{t} vs {baseline}" for t in others]
        most = max((c.summary.n for row in group.rows for c in row.cells.values() if c.summary), default=0)
        rows = [
            [CellView(row.title)]
            + [value_cell(report, row, t, most) for t in targets]
            + [ratio_cell(report, row, t) for t in others]
            for row in group.rows
        ]
        chart = (svgs or {}).get(bars_key(group))
        tables.append(
            TableView(
                id=f"results-{index + 1}",
                heading=group_heading(group),
                headers=headers,
                rows=rows,
                chart=chart[1] if chart else None,
                chart_title=chart[0].title if chart else "",
            )
        )
    return tables


def value_cell(report: Report, row: Row, target: str, most: int = 0) -> CellView:
    """``1.08 GB/s ±42%`` with its notes; ``failed 3/3``; ``(n=2)`` when a cell has fewer samples."""
    cell = row.cells[target]
    marks = report.cell_marks(row, target)
    classes = []
    if report.measurement_marks(cell):
        classes.append("caveat")
    if any(c.code in QUALITY_CODES for c in cell.caveats):
        classes.append("quality")
    if cell.summary is None:
        classes.append("failed")
        text = f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
        return noted(text, report.notes, marks, classes=" ".join(classes))
    text = format_value(cell.summary.median, row.metric)
    spread = format_spread(cell)
    if spread:
        text += f" {spread}"
    if cell.summary.n < most:
        text += f" (n={cell.summary.n})"
    if cell.failed:
        text += f", {cell.failed} failed"
    return noted(text, report.notes, marks, sort=repr(cell.summary.median), classes=" ".join(classes))


def ratio_cell(report: Report, row: Row, target: str) -> CellView:
    said = cell_standing(row, target)
    if said is None:
        return noted("–", report.notes, report.ratio_marks(row, target))
    # sorts by how much better the target is: the factor, negative when worse
    sort = repr(said.factor if said.word == words(row.metric)[0] else -said.factor)
    return noted(said.text, report.notes, report.ratio_marks(row, target), sort=sort, classes=f"ratio {said.kind}")


def rounds_table(report: Report) -> TableView:
    headers = ["workload", *report.summary.targets]
    rows = [[CellView(title), *(CellView(text) for text in cells)] for title, cells in rounds_rows(report)]
    return TableView("rounds", "Rounds per cell (and why no more)", headers, rows)


def host_rows(report: Report) -> list[list[str]]:
    return [
        [
            name,
            str(host.get("os", "?")) + (f"; in a container: {host['container']}" if host.get("container") else ""),
            str(host.get("cpu_model", "?")),
            str(host.get("cpu_count", "?")),
            format_bytes(float(host.get("ram_bytes") or 0)),
            str(host.get("fio_version") or "?"),
            str(host.get("mountbench_version", "?")),
        ]
        for name, host in run_hosts(report).items()
    ]


def target_rows(report: Report) -> list[list[str]]:
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
                f"{info.fstype} ({info.mount_kind})" if info.mount_kind else info.fstype,
                info.mount_source,
                info.mount_options,
                "accepted" if info.odirect else f"refused ({info.odirect_detail})",
                f"{format_bytes(info.free_bytes)} of {format_bytes(info.total_bytes)}",
            ]
        )
    return rows


def grid_table(report: Report, section: GridSection) -> TableView:
    """One section of the summary grid as a plain table (Markdown): each value with its notes,
    and for other targets how it compares, on a line under it."""
    view = grid_view(report, section)
    rows = []
    for title, cells in view.rows:
        line = [CellView(title)]
        for cell in cells:
            if cell is None:
                line.append(CellView(""))
                continue
            under = [Line(cell.comparison, cell.comparison_links)] if cell.comparison else []
            line.append(CellView(cell.value, links=cell.value_links, lines=under))
        rows.append(line)
    return TableView("grid", section.heading, view.headers, rows)


def hosts_table(report: Report) -> TableView:
    rows = [[CellView(value) for value in row] for row in host_rows(report)]
    return TableView("hosts", "Hosts", HOST_HEADERS, rows, align="lllrrll")


def targets_table(report: Report) -> TableView:
    rows = [[CellView(v, code=i in TARGET_CODE) for i, v in enumerate(row)] for row in target_rows(report)]
    return TableView("targets", "Targets", TARGET_HEADERS, rows, align="lllllllr")


def workloads_table(report: Report) -> TableView:
    rows = [
        [CellView(w.name), CellView(w.title), CellView(w.kind), CellView(w.description.summary, code=True),
         CellView(w.source)]
        for w in all_workloads(report)
    ]  # fmt: skip
    return TableView("workloads", "Workloads", ["workload", "title", "engine", "settings", "from"], rows, align="lllll")
