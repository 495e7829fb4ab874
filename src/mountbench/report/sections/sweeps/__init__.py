"""Sweeps (study S3): workloads that differ in one swept option (block size, queue depth,
jobs, working-set size), or grids over two, found by sweep_discovery.find_sweeps. This
module is the section's parts in every format; the package holds what they are made of:

- ``words``: a heading that says what was swept over what, every number in the sweep's one
  unit, each target's optimum ★ and knee ◆;
- ``layout``: a table per sweep and per grid and target (terminal, Markdown, HTML);
- ``records``: one record per point and target (CSV, JSON);
- ``figures``: a chart per sweep (one curve per target) or grid (a heat map per target).
"""

from __future__ import annotations

from collections.abc import Mapping

from markupsafe import Markup

from mountbench.blocks.to_html import html_section
from mountbench.blocks.to_markdown import markdown as md_view
from mountbench.blocks.to_markdown import md_image, md_text
from mountbench.report.chartkeys import Chart
from mountbench.report.model import Report
from mountbench.report.sections.base import Export, Options, nothing
from mountbench.report.sections.sweeps.figures import grid_figure, sweep_figure
from mountbench.report.sections.sweeps.layout import grid_tables, render_terminal, sweep_table, tables
from mountbench.report.sections.sweeps.records import sweep_records, sweeps_csv
from mountbench.report.sections.sweeps.words import (
    TITLE,
    explanation,
    grid_explanation,
    grid_heading,
    grid_key,
    heading,
    sweep_key,
)

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


page_charts = nothing  # the page draws no chart of its own here
