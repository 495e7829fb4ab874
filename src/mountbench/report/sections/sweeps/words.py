"""The words of a sweep in every format: a heading that says what was swept over what, every
number in the sweep's one unit, each target's optimum ★ and knee ◆, and the chart keys."""

from __future__ import annotations

import math

from mountbench.analysis.stats import KNEE_FRACTION
from mountbench.analysis.summary import Cell
from mountbench.report.cells import format_spread
from mountbench.report.chartkeys import slug
from mountbench.report.model import Sweep, SweepGrid
from mountbench.report.sweep_discovery import OPTION_LABELS

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
