"""Runs on several clients at once (run --client): the scaling view and per-client figures.

The main tables show mountbench's aggregate (each sample's metrics). This section adds
what only a multi-client run has, from the per-client results stored with each sample:

- scaling (``--clients 1,2,4``): the aggregate and the mean per client against the client
  count, with the efficiency relative to linear scaling from the smallest count;
- per workload, the slowest client (by the median of its own figures) and, on request
  (``--per-client``), every client's median next to the aggregate;
- the start skew: how far apart the clients started, and how much of each sample they
  ran together (each client's own timestamps; clients/results.py), with the samples
  flagged for overlapping too little and those that ran on fewer clients than asked;
- warnings where the clients differ in a host fact (labels.HOST_FACTS) or see different
  filesystems at a target's path.

Which workloads ran on which clients is in their description (model.Description.clients,
given by their kind). This module is the section's parts; the package holds ``measures``
(the figures per client, scaling curves, start skew), ``machines`` (the client machines and
their warnings), ``layout`` (each table built once, a TableView every format lays out) and
``figure`` (the scaling chart: the aggregate, each client's own and linear scaling against the
number of clients).

Imports as report/sections/ may. Of report/'s sub-packages it may import: none.
"""

from __future__ import annotations

from mountbench.analysis.multiclient import OVERLAP_FLOOR
from mountbench.blocks.parts import Block, Chapter, Figure, Heading, Items, Paragraph, Table
from mountbench.report.chartkeys import Chart
from mountbench.report.model import Report
from mountbench.report.sections.clients.figure import scaling_figure, scaling_key, scaling_title
from mountbench.report.sections.clients.layout import tables
from mountbench.report.sections.clients.machines import client_host_warnings
from mountbench.report.sections.clients.measures import scaling_curves
from mountbench.report.sections.section import Options, nothing

TITLE = "Clients"
INTRO = (
    "Each sample ran on every client at once through fio's client/server engine. The aggregate is "
    "mountbench's own: the clients' IOPS and bandwidth summed, latency percentiles read off their merged "
    "histograms (never averaged)."
)
SKEW_NOTE = (
    "Start skew: how long after the first client the last one started its I/O (clients started over SSH or "
    "running mountbench serve wait for a common instant first, unless a plain fio server is among them), from "
    "each client's own clock (fio's latency log stamps), less its offset to this machine's measured over SSH "
    "or through serve (a plain fio server's clock is taken as in sync). Overlap: the share of the sample every "
    f"client ran at once; below "
    f"{OVERLAP_FLOOR:.0%} the sum overstates the rate the clients reach together."
)

# --- the section's parts -------------------------------------------------------------------------


def screen(report: Report, options: Options) -> list[Block]:
    """For the end of `run` and `show` (nothing for single-machine runs)."""
    views = tables(report.runs, options)
    if not views:
        return []
    titles = {v.heading: v.heading.replace("Scaling:", "Scaling with clients:", 1) for v in views}
    titles["Slowest client"] = "Clients (aggregate = mountbench's sum over the clients; --per-client shows each)"
    blocks: list[Block] = [Table(view, title=titles.get(view.heading, view.heading)) for view in views]
    if any(v.id == "start-skew" for v in views):
        blocks.append(Paragraph(SKEW_NOTE, "caption"))
    return [*blocks, Items.of(client_host_warnings(report.runs), "warning")]


def chapters(report: Report, options: Options) -> list[Chapter]:
    """The "Clients" chapter (None for single-machine runs): each table, the scaling charts, the start
    skew's reading under its table, and warnings where the clients differ."""
    views = tables(report.runs, options)
    if not views:
        return []
    curves = enumerate(scaling_curves(report.runs), 1)
    figures = {f"scaling-{i}": Figure(scaling_key(i, c), scaling_title(c)) for i, c in curves}
    blocks: list[Block] = [Paragraph(INTRO)]
    for view in views:
        blocks += [Heading(view.heading), Table(view)]
        if view.id == "start-skew":
            blocks.append(Paragraph(SKEW_NOTE, "caption"))
        if view.id in figures:
            blocks.append(figures[view.id])
    blocks.append(Items.of(client_host_warnings(report.runs), "warning"))
    return [Chapter("clients", TITLE, tuple(blocks))]


def charts(report: Report) -> list[Chart]:
    return [
        Chart(scaling_key(i, curve), "scaling", scaling_title(curve), lambda curve=curve: scaling_figure(curve))
        for i, curve in enumerate(scaling_curves(report.runs), 1)
        if any(p.aggregate is not None for p in curve.points)
    ]


exports = nothing  # parts this section does not have
page_charts = nothing  # the page draws no chart of its own here
