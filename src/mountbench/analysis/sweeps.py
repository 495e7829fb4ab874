"""Sweeps, read as statistics: where each target peaks, its knee, and whether the best
point is better than the rest beyond noise (on a line, ``optimum``; in a grid of two
swept options, ``best_cell`` and ``best_is_clear``). Also the sweep vocabulary both the
fio kind and the report use: how a swept value is written (``label``) and which of a
job's options must agree for its points to be one sweep (``fixed_options``).

Pure: summaries in, indices out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mountbench.analysis.stats import Summary, clearly_best, peak_and_knee

SIZE_OPTIONS = frozenset({"bs", "size"})
# options that name files or order jobs: sections of a hand-written sweep may differ in them
PLACEMENT_OPTIONS = frozenset(
    {"filename", "filename_format", "name", "description", "stonewall", "new_group", "wait_for", "write_bw_log",
     "write_lat_log", "write_iops_log", "write_hist_log", "per_job_logs"}
)  # fmt: skip


@dataclass(frozen=True)
class SweepOptimum:
    """One target's best point along a sweep and its knee, read from the medians."""

    peak: int  # index into the sweep's points
    knee: int  # the smallest value reaching 90 % of the peak (stats.peak_and_knee)
    clear: bool = True  # no other point's interval reaches the peak's (stats.clearly_best)


def optimum(summaries: Sequence[Summary | None], *, higher_is_better: bool) -> SweepOptimum | None:
    """The peak and knee of one target's points (in value order; None where a point has no
    value), and whether the peak is clearly the best. None when no point has a value."""
    found = peak_and_knee([s.median if s else None for s in summaries], higher_is_better=higher_is_better)
    if found is None:
        return None
    intervals = [(s.ci_low, s.ci_high) if s else None for s in summaries]
    return SweepOptimum(found[0], found[1], clearly_best(intervals, found[0], higher_is_better=higher_is_better))


Key = tuple[int, int]  # (row index, column index) of a grid's cell


def best_cell(summaries: Mapping[Key, Summary | None], *, higher_is_better: bool) -> Key | None:
    """The grid cell with the best median (the first in row-major order on a tie)."""
    keys = sorted(summaries)
    found = peak_and_knee([s.median if (s := summaries[k]) else None for k in keys], higher_is_better=higher_is_better)
    return keys[found[0]] if found else None


def best_is_clear(summaries: Mapping[Key, Summary | None], best: Key | None, *, higher_is_better: bool) -> bool:
    """Is no other cell's interval of the median reaching into the best cell's?"""
    if best is None:
        return False
    keys = sorted(summaries)
    intervals = [(s.ci_low, s.ci_high) if (s := summaries[k]) else None for k in keys]
    return clearly_best(intervals, keys.index(best), higher_is_better=higher_is_better)


def label(option: str, number: float) -> str:
    """How a value is written in names and passed to fio: 4096 → ``4k``, 1536 → ``1536``, 8 → ``8``."""
    value = int(number)
    if option in SIZE_OPTIONS:
        for power, suffix in ((4, "T"), (3, "G"), (2, "M"), (1, "k")):
            if value >= 1024**power and value % 1024**power == 0:
                return f"{value // 1024**power}{suffix}"
    return str(value)


def fixed_options(options: Sequence[str], swept: Sequence[str]) -> tuple[str, ...]:
    """A job's options (``name=value``) apart from the swept ones and file placement: jobs
    that differ here are not one sweep (other size, runtime, engine, depth, jobs or direction)."""
    ignored = {*swept, *PLACEMENT_OPTIONS}
    if "bs" in ignored:
        ignored.add("blocksize")
    return tuple(sorted(o for o in options if o.partition("=")[0].strip().lower() not in ignored))
