"""A sweep's tables, built once as TableViews: Markdown and HTML show every sweep and grid with
its notes and chart; the terminal shows the same sweep table (without the job file's section
names) and a compact table per grid and target."""

from __future__ import annotations

from mountbench.blocks.parts import Block, Figure, Heading, Paragraph, Table
from mountbench.blocks.table import CellView, RichLayout, TableView, note_links
from mountbench.model import QUALITY_CODES
from mountbench.report.model import Report, Sweep, SweepGrid, column_heading
from mountbench.report.sections.sweeps.words import (
    KNEE_MARK,
    PEAK_MARK,
    explanation,
    grid_explanation,
    grid_heading,
    grid_key,
    heading,
    knee_text,
    optimum_text,
    option_label,
    point_marks,
    point_text,
    sweep_key,
)

# --- tables: one builder for Markdown and HTML -----------------------------------------------------


def sweep_table(report: Report, index: int, sweep: Sweep, *, with_workloads: bool = True) -> TableView:
    """Values down, targets across, then each target's optimum and knee (``with_workloads``: the
    job file's section names next to a recognised sweep's values)."""
    targets = report.summary.targets
    named = with_workloads and not sweep.generated  # a job file's own section names say which point is which
    headers = [
        option_label(sweep.option),
        *(["workload"] if named else []),
        *(column_heading(report, t) for t in targets),
    ]
    header_links = [[]] * (1 + named) + [note_links(report.notes, report.column_marks(sweep.rows, t)) for t in targets]
    rows = []
    for i, (value, number_, row) in enumerate(zip(sweep.values, sweep.numbers, sweep.rows, strict=True)):
        cells = [CellView(value, repr(number_)), *([CellView(row.workload)] if named else [])]
        for t in targets:
            cell = row.cells[t]
            optimum = sweep.optima.get(t)
            classes = " ".join(
                name
                for name, on in (("peak", optimum and optimum.peak == i), ("knee", optimum and optimum.knee == i))
                if on
            )
            sort = repr(cell.summary.median) if cell.summary else ""
            marks = point_marks(sweep, i, t)
            style = "red" if cell.summary is None else "bold green" if PEAK_MARK in marks else "green" if marks else ""
            cells.append(CellView(point_text(cell, sweep.unit[0]) + marks, sort, classes, style=style))
        rows.append(cells)
    blank = [CellView("")] if named else []
    rows.append([CellView(f"{PEAK_MARK} optimum", strong=True), *blank])
    rows[-1] += [CellView(optimum_text(sweep, t), "", "peak") for t in targets]
    rows.append([CellView(f"{KNEE_MARK} knee", strong=True), *blank])
    rows[-1] += [CellView(knee_text(sweep, t), "", "knee") for t in targets]
    return TableView(
        f"sweep-{index}",
        heading(sweep),
        headers,
        rows,
        numeric_from=2 if named else 1,
        header_links=header_links,
        breaks=(len(sweep.values),),  # the optimum and the knee under a rule (the terminal's)
    )


def grid_tables(report: Report, index: int, grid: SweepGrid) -> list[TableView]:
    """Per target: rows the first swept option, columns the second, the target's best point starred."""
    targets = report.summary.targets
    views = []
    for k, target in enumerate(targets):
        headers = [f"{column_heading(report, target)}: {grid.row_option} ↓ {grid.column_option} →"]
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
                summary = row.cells[target].summary
                cells.append(
                    CellView(
                        point_text(row.cells[target], grid.unit[0]) + (f" {PEAK_MARK}" if best else ""),
                        repr(summary.median) if summary else "",
                        "peak" if best else "",
                    )
                )
            rows.append(cells)
        views.append(TableView(f"grid-{index}-{k + 1}", f"{grid_heading(grid)} — {column_heading(report, target)}",
                               headers, rows))  # fmt: skip
    return views


def document_blocks(report: Report) -> list[Block]:
    """Per sweep: its heading, what was swept, its table and chart; per grid: a table per target and
    the heat maps."""
    blocks: list[Block] = []
    for i, sweep in enumerate(report.sweeps, 1):
        blocks += [Heading(heading(sweep)), Paragraph(explanation(sweep), "caption"),
                   Table(sweep_table(report, i, sweep)), Figure(sweep_key(i, sweep), heading(sweep))]  # fmt: skip
    for i, grid in enumerate(report.grids, 1):
        blocks += [Heading(grid_heading(grid)), Paragraph(grid_explanation(grid), "caption")]
        blocks += [Table(view) for view in grid_tables(report, i, grid)]
        blocks.append(Figure(grid_key(i, grid), grid_heading(grid)))
    return blocks


# --- terminal ---------------------------------------------------------------------------------------


def screen_blocks(report: Report) -> list[Block]:
    """One table per sweep (values down, targets across, one unit, ★ optimum and ◆ knee);
    per grid, one table per target; how their points were measured under them."""
    blocks: list[Block] = []
    targets = report.summary.targets
    for index, sweep in enumerate(report.sweeps, 1):
        view = sweep_table(report, index, sweep, with_workloads=False)
        blocks += [Heading(heading(sweep)), Table(view, UNTITLED), Paragraph(explanation(sweep), "caption")]
        blocks += _sweep_caveats(sweep.rows, targets)
    for grid in report.grids:
        blocks += [Heading(grid_heading(grid)), Paragraph(grid_explanation(grid), "caption")]
        blocks += [Table(_grid_terminal_view(grid, target), LABELS_WHOLE) for target in targets]
        blocks += _sweep_caveats(grid.rows, targets)
    return blocks


UNTITLED = RichLayout(show_title=False, label_no_wrap=True)
LABELS_WHOLE = RichLayout(label_no_wrap=True)


def _grid_terminal_view(grid: SweepGrid, target: str) -> TableView:
    """One target's grid: rows the first swept option, columns the second, its best point starred."""
    rows = []
    for i, value in enumerate(grid.row_values):
        cells = [CellView(value)]
        for j in range(len(grid.column_values)):
            row = grid.cells.get((i, j))
            best = grid.best.get(target) == (i, j)
            text = point_text(row.cells[target], grid.unit[0]) if row is not None else ""
            cells.append(CellView(text + (f" {PEAK_MARK}" if best else ""), style="bold green" if best else ""))
        rows.append(cells)
    title = f"{target}: {grid.row_option} ↓ {grid.column_option} →"
    return TableView(f"grid-{target}", title, [grid.row_option, *grid.column_values], rows)


def _sweep_caveats(rows, targets) -> list[Paragraph]:
    """How the points were measured, spelled out under their table: 'caveat (on a, b)'."""
    found: dict[str, list[str]] = {}
    for label in targets:
        for row in rows:
            for caveat in row.cells[label].caveats:
                if caveat.code not in QUALITY_CODES and label not in found.setdefault(caveat.text, []):
                    found[caveat.text].append(label)
    return [Paragraph(f"! {text} (on {', '.join(labels)})", "caveat") for text, labels in found.items()]
