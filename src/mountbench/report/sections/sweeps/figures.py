"""A sweep's charts: one curve per target along a sweep (optimum and knee marked), a heat map
per target for a grid."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mountbench.analysis.stats import KNEE_FRACTION
from mountbench.report.model import Report, Sweep, SweepGrid
from mountbench.report.sections.sweeps.words import grid_heading, heading, number, option_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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
        if optimum is not None:  # the knee ◆, then the optimum ★ over it
            for index, marker, size, z in ((optimum.knee, "D", 8, 4), (optimum.peak, "*", 15, 5)):
                point = sweep.rows[index].cells[label].summary
                ax.plot([sweep.numbers[index]], [point.median / divisor], linestyle="none", marker=marker,
                        markersize=size, color=colour, markeredgecolor="black", markeredgewidth=0.7,
                        zorder=z)  # fmt: skip
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
