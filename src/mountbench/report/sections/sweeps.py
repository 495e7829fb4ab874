"""Sweeps (study S3): workloads that differ in one swept option (block size, queue depth,
jobs, working-set size), or grids over two, found by content.find_sweeps. In every
format: the words (a heading that says what was swept over what, every number in the
sweep's one unit, each target's optimum ★ and knee ◆), a table per sweep and per grid
and target (terminal, Markdown, HTML), one record per point and target (CSV, JSON), and
a chart per sweep (one curve per target) or grid (a heat map per target)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from markupsafe import Markup
from rich.console import Group
from rich.table import Table
from rich.text import Text

from mountbench.analysis.stats import KNEE_FRACTION
from mountbench.analysis.summary import Cell
from mountbench.model import QUALITY_CODES
from mountbench.report.cells import format_spread
from mountbench.report.chartkeys import Chart, slug
from mountbench.report.csvexport import csv_bool, csv_number, write_csv
from mountbench.report.model import Report, Sweep, SweepGrid, column_heading
from mountbench.report.sections.base import Export, Options
from mountbench.report.sweep_discovery import OPTION_LABELS
from mountbench.report.tables import CellView, TableView, html_section, md_image, md_text, note_links
from mountbench.report.tables import markdown as md_view

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TITLE = "Sweeps"

PEAK_MARK = "★"
KNEE_MARK = "◆"
NOISE_MARK = "≈"  # after an optimum: another point's interval reaches it, so it is best only within noise


def option_label(option: str) -> str:
    return OPTION_LABELS.get(option, option)


def heading(sweep: Sweep) -> str:
    """'write bandwidth against block size: SEQ write (seqw, preset:s3)'."""
    fixed = f" at {sweep.fixed}" if sweep.fixed else ""
    return f"{sweep.metric.label} against {option_label(sweep.option)}{fixed}: {sweep.title}"


def grid_heading(grid: SweepGrid) -> str:
    fixed = f" at {grid.fixed}" if grid.fixed else ""
    return (
        f"{grid.metric.label} over {option_label(grid.row_option)} × {option_label(grid.column_option)}{fixed}: "
        f"{grid.title}"
    )


def unit_phrase(metric_label: str, unit: str, higher_is_better: bool) -> str:
    """'Write bandwidth in GB/s (median ± CV; higher is better)'."""
    better = "higher is better" if higher_is_better else "lower is better"
    text = f"{metric_label} in {unit} (median ± CV; {better})"
    return text[:1].upper() + text[1:]


def explanation(sweep: Sweep) -> str:
    """What the table shows and how its optimum and knee are read."""
    text = (
        f"Points share {sweep.settings or 'every other option'}. "
        f"{unit_phrase(sweep.metric.label, sweep.unit[1], sweep.metric.higher_is_better)}. "
        f"{PEAK_MARK} optimum: each target's best median ({NOISE_MARK}: another {option_label(sweep.option)}'s "
        f"interval reaches it, so it is the best only within noise); {KNEE_MARK} knee: the smallest "
        f"{option_label(sweep.option)} whose median reaches {KNEE_FRACTION:.0%} of that optimum."
    )
    if not sweep.generated:
        text += f" Recognised in a job file whose sections differ in {sweep.option} alone."
    return text


def grid_explanation(grid: SweepGrid) -> str:
    phrase = unit_phrase(grid.metric.label, grid.unit[1], grid.metric.higher_is_better)
    return (
        f"Points share {grid.settings or 'every other option'}. {phrase}; rows: "
        f"{option_label(grid.row_option)} ({grid.row_option}), columns: {option_label(grid.column_option)} "
        f"({grid.column_option}). {PEAK_MARK} each target's best point ({NOISE_MARK}: only within noise)."
    )


def number(value: float, divisor: float) -> str:
    """Three significant digits in the sweep's unit, never in scientific notation."""
    scaled = float(f"{value / divisor:.3g}")  # rounded first: 0.99996 is 1.00, not 1.000
    if scaled == 0 or not math.isfinite(scaled):
        return f"{scaled:g}"
    digits = max(0, 2 - math.floor(math.log10(abs(scaled))))
    return f"{scaled:.{min(digits, 9)}f}"


def point_text(cell: Cell, divisor: float) -> str:
    """``1.23 ±4%``; ``failed 3/3``; ``–`` where there is no sample."""
    if cell.summary is None:
        return f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
    text = number(cell.summary.median, divisor)
    spread = format_spread(cell)
    return f"{text} {spread}" if spread else text


def point_marks(sweep: Sweep, index: int, target: str) -> str:
    """' ★', ' ◆' or ' ★◆' after the point that is the target's optimum and/or knee."""
    optimum = sweep.optima.get(target)
    if optimum is None:
        return ""
    marks = (PEAK_MARK if optimum.peak == index else "") + (KNEE_MARK if optimum.knee == index else "")
    return f" {marks}" if marks else ""


def optimum_text(sweep: Sweep, target: str) -> str:
    """``1M: 2.10`` (the value and its median in the sweep's unit); ``–`` without data."""
    optimum = sweep.optima.get(target)
    if optimum is None:
        return "–"
    noise = "" if optimum.clear else f" {NOISE_MARK}"
    return f"{sweep.values[optimum.peak]}: {_median(sweep, optimum.peak, target)}{noise}"


def knee_text(sweep: Sweep, target: str) -> str:
    optimum = sweep.optima.get(target)
    if optimum is None:
        return "–"
    return f"{sweep.values[optimum.knee]}: {_median(sweep, optimum.knee, target)}"


def _median(sweep: Sweep, index: int, target: str) -> str:
    summary = sweep.rows[index].cells[target].summary
    return number(summary.median, sweep.unit[0]) if summary else "–"


def sweep_key(index: int, sweep: Sweep) -> str:
    """``index`` counts sweeps from 1, in report order."""
    return f"sweep-{index}-{slug(sweep.metric.name)}"


def grid_key(index: int, grid: SweepGrid) -> str:
    """``index`` counts grids from 1, in report order."""
    return f"grid-{index}-{slug(grid.metric.name)}"


# --- tables: one builder for Markdown and HTML -----------------------------------------------------


def sweep_table(report: Report, index: int, sweep: Sweep, svgs: Mapping[str, tuple[Chart, Markup]]) -> TableView:
    targets = report.summary.targets
    named = not sweep.generated  # a job file's own section names say which point is which
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
            cells.append(CellView(point_text(cell, sweep.unit[0]) + point_marks(sweep, i, t), sort, classes))
        rows.append(cells)
    blank = [CellView("")] if named else []
    rows.append([CellView(f"{PEAK_MARK} optimum", strong=True), *blank])
    rows[-1] += [CellView(optimum_text(sweep, t), "", "peak") for t in targets]
    rows.append([CellView(f"{KNEE_MARK} knee", strong=True), *blank])
    rows[-1] += [CellView(knee_text(sweep, t), "", "knee") for t in targets]
    chart = svgs.get(sweep_key(index, sweep))
    return TableView(
        f"sweep-{index}",
        heading(sweep),
        headers,
        rows,
        chart[1] if chart else None,
        chart[0].title if chart else "",
        numeric_from=2 if named else 1,
        caption=explanation(sweep),
        header_links=header_links,
    )


def grid_tables(
    report: Report, index: int, grid: SweepGrid, svgs: Mapping[str, tuple[Chart, Markup]]
) -> list[TableView]:
    """Per target: rows the first swept option, columns the second, the target's best point starred;
    the heat map under the last."""
    targets = report.summary.targets
    chart = svgs.get(grid_key(index, grid))
    views = []
    for k, target in enumerate(targets):
        last = k == len(targets) - 1
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
        views.append(
            TableView(
                f"grid-{index}-{k + 1}",
                f"{grid_heading(grid)} — {column_heading(report, target)}",
                headers,
                rows,
                chart[1] if chart and last else None,
                chart[0].title if chart and last else "",
                caption=grid_explanation(grid) if k == 0 else "",
            )
        )
    return views


def tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]] | None = None) -> list[TableView]:
    svgs = svgs or {}
    views = [sweep_table(report, i, sweep, svgs) for i, sweep in enumerate(report.sweeps, 1)]
    return views + [view for i, grid in enumerate(report.grids, 1) for view in grid_tables(report, i, grid, svgs)]


# --- the section's parts -------------------------------------------------------------------------


def terminal(report: Report, options: Options) -> list:
    found = render_terminal(report)
    return [] if found is None else [found]


def markdown(report: Report, charts: Mapping[str, str], options: Options) -> str:
    """One table and one chart per sweep, one unit each; a table per target and a heat map per grid."""
    if not report.sweeps and not report.grids:
        return ""
    parts = [f"## {TITLE}"]
    for i, sweep in enumerate(report.sweeps, 1):
        parts.append(f"### {md_text(heading(sweep))}")
        parts.append(md_text(explanation(sweep)))
        parts.append(md_view(sweep_table(report, i, sweep, {})))
        parts.append(md_image(charts, sweep_key(i, sweep), heading(sweep)))
    for i, grid in enumerate(report.grids, 1):
        parts.append(f"### {md_text(grid_heading(grid))}")
        parts.append(md_text(grid_explanation(grid)))
        parts += [md_view(view) for view in grid_tables(report, i, grid, {})]
        parts.append(md_image(charts, grid_key(i, grid), grid_heading(grid)))
    return "\n\n".join(p for p in parts if p)


def html(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options) -> Markup:
    views = tables(report, svgs)
    return html_section("sweeps", TITLE, views) if views else Markup("")


def charts(report: Report) -> list[Chart]:
    found = [
        Chart(sweep_key(i, sweep), "sweep", heading(sweep), lambda sweep=sweep: sweep_figure(report, sweep))
        for i, sweep in enumerate(report.sweeps, 1)
    ]
    return found + [
        Chart(grid_key(i, grid), "grid", grid_heading(grid), lambda grid=grid: grid_figure(report, grid))
        for i, grid in enumerate(report.grids, 1)
    ]


def exports(report: Report) -> list[Export]:
    if not report.sweeps and not report.grids:
        return []
    note = "one row per sweep point and target, with each target's optimum and knee"
    return [Export("sweeps", "-sweeps", note, sweep_records(report), sweeps_csv(report))]


# --- records: CSV and JSON -----------------------------------------------------------------------

SWEEP_COLUMNS = (
    "sweep",
    "kind",
    "heading",
    "metric",
    "metric_label",
    "unit",
    "higher_is_better",
    "generated",
    "option",
    "value",
    "number",
    "option2",
    "value2",
    "number2",
    "fixed",
    "workload",
    "target",
    "n",
    "median [unit]",
    "ci_low [unit]",
    "ci_high [unit]",
    "cv [fraction]",
    "optimum",
    "optimum_clear",
    "knee",
)


def sweep_records(report: Report) -> list[dict[str, object]]:
    """One record per (sweep point, target), sweeps first, then grids: the swept value(s),
    the median and its interval in the metric's own unit, and whether the point is the
    target's optimum or knee (a grid has an optimum only). Shared by CSV and JSON."""
    records: list[dict[str, object]] = []
    for index, sweep in enumerate(report.sweeps, 1):
        for k, (value, number, row) in enumerate(zip(sweep.values, sweep.numbers, sweep.rows, strict=True)):
            for target in report.summary.targets:
                optimum = sweep.optima.get(target)
                records.append(
                    _sweep_record(f"sweep-{index}", "sweep", heading(sweep), row, target, sweep.generated)
                    | {"option": sweep.option, "value": value, "number": number, "fixed": sweep.fixed}
                    | {
                        "optimum": bool(optimum and optimum.peak == k),
                        "optimum_clear": optimum.clear if optimum and optimum.peak == k else None,
                        "knee": bool(optimum and optimum.knee == k),
                    }
                )
    for index, grid in enumerate(report.grids, 1):
        for (i, j), row in sorted(grid.cells.items()):
            for target in report.summary.targets:
                records.append(
                    _sweep_record(f"grid-{index}", "grid", grid_heading(grid), row, target, True)
                    | {"option": grid.row_option, "value": grid.row_values[i], "number": grid.row_numbers[i]}
                    | {"option2": grid.column_option, "value2": grid.column_values[j]}
                    | {"number2": grid.column_numbers[j], "fixed": grid.fixed}
                    | {"optimum": grid.best.get(target) == (i, j), "knee": None}
                    | {"optimum_clear": grid.clear.get(target) if grid.best.get(target) == (i, j) else None}
                )
    return records


def _sweep_record(key: str, kind: str, heading: str, row, target: str, generated: bool) -> dict[str, object]:
    summary = row.cells[target].summary
    return {
        "sweep": key,
        "kind": kind,
        "heading": heading,
        "metric": row.metric.name,
        "metric_label": row.metric.label,
        "unit": row.metric.unit,
        "higher_is_better": row.metric.higher_is_better,
        "generated": generated,
        "option2": None,
        "value2": None,
        "number2": None,
        "workload": row.workload,
        "target": target,
        "n": summary.n if summary else 0,
        "median": summary.median if summary else None,
        "ci_low": summary.ci_low if summary else None,
        "ci_high": summary.ci_high if summary else None,
        "cv": summary.cv if summary else None,
    }


def sweeps_csv(report: Report) -> str:
    """sweep_records as CSV (README, "CSV columns"); numbers in full precision."""
    names = {"median [unit]": "median", "ci_low [unit]": "ci_low", "ci_high [unit]": "ci_high", "cv [fraction]": "cv"}
    rows = []
    for record in sweep_records(report):
        row = []
        for column in SWEEP_COLUMNS:
            value = record.get(names.get(column, column))
            if isinstance(value, bool):
                row.append(csv_bool(value))
            elif isinstance(value, float):
                row.append(csv_number(value))
            else:
                row.append("" if value is None else value)
        rows.append(row)
    return write_csv(SWEEP_COLUMNS, rows)


# --- terminal ---------------------------------------------------------------------------------------


def render_terminal(report: Report) -> Group | None:
    """One table per sweep (values down, targets across, one unit, ★ optimum and ◆ knee);
    per grid, one table per target. None when the runs hold no sweep."""
    if not report.sweeps and not report.grids:
        return None
    parts: list = []
    targets = report.summary.targets
    for sweep in report.sweeps:
        parts += [Text(""), Text(heading(sweep), style="bold")]
        table = Table(header_style="bold")
        table.add_column(option_label(sweep.option), no_wrap=True)
        for label in targets:
            table.add_column(label + (" (baseline)" if label == report.summary.baseline else ""), justify="right")
        for index, (value, row) in enumerate(zip(sweep.values, sweep.rows, strict=True)):
            table.add_row(value, *(_sweep_point(sweep, index, row.cells[t], t) for t in targets))
        table.add_section()
        table.add_row(Text(f"{PEAK_MARK} optimum", "bold"), *(optimum_text(sweep, t) for t in targets))
        table.add_row(Text(f"{KNEE_MARK} knee", "bold"), *(knee_text(sweep, t) for t in targets))
        parts += [table, Text(explanation(sweep), style="dim")]
        parts += _sweep_caveats(sweep.rows, targets)
    for grid in report.grids:
        parts += [Text(""), Text(grid_heading(grid), style="bold")]
        parts.append(Text(grid_explanation(grid), style="dim"))
        for target in targets:
            table = Table(title=f"{target}: {grid.row_option} ↓ {grid.column_option} →", title_justify="left")
            table.add_column(grid.row_option, no_wrap=True)
            for value in grid.column_values:
                table.add_column(value, justify="right")
            for i, value in enumerate(grid.row_values):
                cells = []
                for j in range(len(grid.column_values)):
                    row = grid.cells.get((i, j))
                    best = grid.best.get(target) == (i, j)
                    text = point_text(row.cells[target], grid.unit[0]) if row is not None else ""
                    cells.append(Text(text + (f" {PEAK_MARK}" if best else ""), "bold green" if best else ""))
                table.add_row(value, *cells)
            parts.append(table)
        parts += _sweep_caveats(grid.rows, targets)
    return Group(*parts)


def _sweep_caveats(rows, targets) -> list[Text]:
    """How the points were measured, spelled out under their table: 'caveat (on a, b)'."""
    found: dict[str, list[str]] = {}
    for label in targets:
        for row in rows:
            for caveat in row.cells[label].caveats:
                if caveat.code not in QUALITY_CODES and label not in found.setdefault(caveat.text, []):
                    found[caveat.text].append(label)
    return [Text(f"! {text} (on {', '.join(labels)})", style="yellow") for text, labels in found.items()]


def _sweep_point(sweep: Sweep, index: int, cell: Cell, target: str) -> Text:
    marks = point_marks(sweep, index, target)
    style = "bold green" if PEAK_MARK in marks else ("green" if marks else "")
    if cell.summary is None:
        style = "red"
    return Text(point_text(cell, sweep.unit[0]) + marks, style)


# --- charts ----------------------------------------------------------------------------------------


def sweep_figure(report: Report, sweep: Sweep) -> Figure:
    from matplotlib.ticker import FuncFormatter

    from mountbench.report.chartkit import (
        COLOURS,
        LINESTYLES,
        MARKERS,
        interval_phrase,
        new_figure,
        notes_footer,
        titles,
    )

    """One curve per target, the value axis from zero in the sweep's one unit; each target's
    optimum (★) and knee (◆) marked on its curve and named in the legend, which sits
    beside the plot so that no label covers a point."""
    targets = report.summary.targets
    divisor, unit = sweep.unit
    figure, ax = new_figure(8.6, 4.8)
    used: set[int] = set()
    tops = [0.0]
    for i, label in enumerate(targets):
        points = [
            (x, row.cells[label].summary, k)
            for k, (x, row) in enumerate(zip(sweep.numbers, sweep.rows, strict=True))
            if row.cells[label].summary
        ]
        for row in sweep.rows:
            used |= set(report.measurement_marks(row.cells[label]))
        if not points:
            continue
        colour = COLOURS[i % len(COLOURS)]
        xs = [x for x, _, _ in points]
        ys = [s.median / divisor for _, s, _ in points]
        tops += [s.ci_high / divisor for _, s, _ in points]
        ax.errorbar(
            xs,
            ys,
            yerr=[
                [max(0.0, (s.median - s.ci_low) / divisor) for _, s, _ in points],
                [max(0.0, (s.ci_high - s.median) / divisor) for _, s, _ in points],
            ],
            label=_sweep_legend(report, sweep, label),
            color=colour,
            marker=MARKERS[i % len(MARKERS)],
            markersize=4.5,
            linestyle=LINESTYLES[i % len(LINESTYLES)],
            linewidth=1.4,
            capsize=2.5,
            elinewidth=0.9,
        )
        optimum = sweep.optima.get(label)
        if optimum is not None:
            peak = sweep.rows[optimum.peak].cells[label].summary
            knee = sweep.rows[optimum.knee].cells[label].summary
            ax.plot(
                [sweep.numbers[optimum.knee]],
                [knee.median / divisor],
                linestyle="none",
                marker="D",
                markersize=8,
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.7,
                zorder=4,
            )
            ax.plot(
                [sweep.numbers[optimum.peak]],
                [peak.median / divisor],
                linestyle="none",
                marker="*",
                markersize=15,
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.7,
                zorder=5,
            )
    _swept_axis(ax, sweep.option, sweep.numbers, sweep.values)
    ax.set_ylim(0, max(tops) * 1.08 or 1.0)  # from zero: heights compare honestly
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylabel(f"{sweep.metric.label} ({unit})")
    ax.grid(alpha=0.3, which="major")
    ax.set_axisbelow(True)
    # beside the plot, never over a point; constrained layout makes room for it
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8,
              title="★ optimum · ◆ knee", title_fontsize=8)  # fmt: skip
    levels = sorted({r.cells[t].summary.ci_level for r in sweep.rows for t in targets if r.cells[t].summary})
    titles(
        figure,
        ax,
        heading(sweep),
        f"points: median; error bars: {interval_phrase(levels)}; ★ optimum: best median, "
        f"(≈) when only within noise; ◆ knee: smallest {option_label(sweep.option)} reaching "
        f"{KNEE_FRACTION:.0%} of the optimum",
    )
    notes_footer(figure, report, used)
    return figure


def _sweep_legend(report: Report, sweep: Sweep, label: str) -> str:
    from mountbench.report.chartkit import legend_label

    optimum = sweep.optima.get(label)
    name = legend_label(report, label)
    if optimum is None:
        return name
    noise = "" if optimum.clear else " (≈)"
    return f"{name}\n★ {sweep.values[optimum.peak]}{noise}  ◆ {sweep.values[optimum.knee]}"


def _swept_axis(ax, option: str, numbers: Sequence[float], values: Sequence[str]) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    """Ticks at the swept values, labelled as given; base-2 log when they span 4x or more."""
    if min(numbers) > 0 and max(numbers) / min(numbers) >= 4:
        ax.set_xscale("log", base=2)
        scale = ", log scale"
    else:
        scale = ""
    ax.xaxis.set_major_locator(FixedLocator(list(numbers)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: dict(zip(numbers, values, strict=True)).get(v, "")))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlabel(f"{option_label(option)} ({option}{scale})")
    if len(numbers) > 10:
        ax.tick_params(axis="x", labelsize=7)


def grid_figure(report: Report, grid: SweepGrid) -> Figure:
    import textwrap

    import matplotlib.colors
    import matplotlib.patches
    from matplotlib.figure import Figure

    from mountbench.report.chartkit import legend_label, wrap

    """A heat map per target on one colour scale from zero; the value in every cell when
    it fits, each target's best point outlined and starred."""
    targets = [t for t in report.summary.targets]
    divisor, unit = grid.unit
    n_rows, n_columns = len(grid.row_values), len(grid.column_values)
    panels_across = min(3, len(targets))
    panels_down = math.ceil(len(targets) / panels_across)
    panel_w = max(2.6, 0.62 * n_columns + 1.0)
    panel_h = max(2.2, 0.3 * n_rows + 1.0)
    figure = Figure(figsize=(panel_w * panels_across + 1.6, panel_h * panels_down + 1.6), layout="constrained")
    axes = figure.subplots(panels_down, panels_across, squeeze=False)
    values = [
        row.cells[t].summary.median / divisor for row in grid.cells.values() for t in targets if row.cells[t].summary
    ]
    norm = matplotlib.colors.Normalize(vmin=0, vmax=max(values, default=1.0) or 1.0)
    cmap = matplotlib.colormaps["viridis"]
    image = None
    used: set[int] = set()
    for k, target in enumerate(targets):
        ax = axes[k // panels_across][k % panels_across]
        matrix = [[math.nan] * n_columns for _ in range(n_rows)]
        for (i, j), row in grid.cells.items():
            summary = row.cells[target].summary
            if summary is not None:
                matrix[i][j] = summary.median / divisor
            used |= set(report.measurement_marks(row.cells[target]))
        image = ax.imshow(matrix, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        ax.set_xticks(range(n_columns), list(grid.column_values), fontsize=7)
        ax.set_yticks(range(n_rows), list(grid.row_values), fontsize=7)
        ax.set_xlabel(f"{option_label(grid.column_option)} ({grid.column_option})", fontsize=8)
        ax.set_ylabel(f"{option_label(grid.row_option)} ({grid.row_option})", fontsize=8)
        ax.set_title(legend_label(report, target), fontsize=9)
        best = grid.best.get(target)
        _annotate_cells(figure, ax, matrix, best, cmap, norm, divisor=1.0)
        if best is not None:
            ax.add_patch(
                matplotlib.patches.Rectangle(
                    (best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, edgecolor="#D55E00", linewidth=2.2
                )
            )
    for k in range(len(targets), panels_down * panels_across):
        axes[k // panels_across][k % panels_across].set_visible(False)
    if image is not None:
        figure.colorbar(image, ax=axes, label=f"{grid.metric.label} ({unit})", shrink=0.9)
    subtitle = "cell: median; ★ and outline: each target's best point; one colour scale from zero for every target"
    figure.suptitle(wrap(grid_heading(grid), int(figure.get_figwidth() * 11)), fontsize=11, fontweight="bold")
    width = int(figure.get_figwidth() * 15)
    lines = [textwrap.fill(subtitle, width)]
    lines += [textwrap.fill(f"[{n}] {report.notes[n - 1]}", width, subsequent_indent="     ") for n in sorted(used)]
    figure.supxlabel("\n".join(lines), x=0.01, ha="left", fontsize=7, color="#333333")  # laid out, never overlapping
    return figure


def _annotate_cells(figure: Figure, ax, matrix, best, cmap, norm, divisor: float) -> None:
    """Write each cell's value when the cell is wide and tall enough for it at 5 pt or more, in the
    cell's ink in both colour schemes (the map's colours do not change)."""
    from mountbench.report.chartkit import on_cell

    n_rows, n_columns = len(matrix), len(matrix[0])
    box = ax.get_position()
    cell_w = box.width * figure.get_figwidth() * 72 / n_columns  # points
    cell_h = box.height * figure.get_figheight() * 72 / n_rows
    texts = {
        (i, j): number(matrix[i][j], divisor) + (" ★" if best == (i, j) else "")
        for i in range(n_rows)
        for j in range(n_columns)
        if not math.isnan(matrix[i][j])
    }
    if not texts:
        return
    longest = max(len(t) for t in texts.values())
    size = min(8.0, cell_h * 0.55, cell_w * 0.8 / (0.62 * longest))
    if size < 5:
        return  # the tables carry the numbers
    for (i, j), text in texts.items():
        r, g, b, _ = cmap(norm(matrix[i][j]))
        dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
        on_cell(ax.text(j, i, text, ha="center", va="center", fontsize=size, color="white" if dark else "black"))
