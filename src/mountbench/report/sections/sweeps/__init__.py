"""Sweeps (study S3): workloads that differ in one swept option (block size, queue depth,
jobs, working-set size), or grids over two, found by sweep_discovery.find_sweeps. This
module is the section's parts in every format; the package holds what they are made of:

- ``words``: a heading that says what was swept over what, every number in the sweep's one
  unit, each target's optimum ★ and knee ◆;
- ``layout``: a table per sweep and per grid and target, in blocks for documents and the screen;
- ``records``: one record per point and target (CSV, JSON);
- ``figures``: a chart per sweep (one curve per target) or grid (a heat map per target).

Imports as report/sections/ may. Of report/'s sub-packages it may import: none.
"""

from __future__ import annotations

from mountbench.blocks.parts import Block, Chapter
from mountbench.report.chartkeys import Chart
from mountbench.report.model import Report
from mountbench.report.sections.section import Export, Options, nothing
from mountbench.report.sections.sweeps.figures import grid_figure, sweep_figure
from mountbench.report.sections.sweeps.layout import document_blocks, screen_blocks
from mountbench.report.sections.sweeps.records import sweep_records, sweeps_csv
from mountbench.report.sections.sweeps.words import TITLE, grid_heading, grid_key, heading, sweep_key

# --- the section's parts -------------------------------------------------------------------------


def chapters(report: Report, options: Options) -> list[Chapter]:
    """One table and one chart per sweep, one unit each; a table per target and a heat map per grid."""
    if not report.sweeps and not report.grids:
        return []
    return [Chapter("sweeps", TITLE, tuple(document_blocks(report)))]


def screen(report: Report, options: Options) -> list[Block]:
    return screen_blocks(report)


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


page_charts = nothing  # the page draws no chart of its own here
