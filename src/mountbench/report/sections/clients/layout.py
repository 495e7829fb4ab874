"""The clients section's tables, built once (TableViews) and laid out by every format: scaling,
the slowest client or every client (--per-client), start skew, and the client machines."""

from __future__ import annotations

from collections.abc import Sequence

from mountbench.analysis.metrics import MetricInfo
from mountbench.blocks.table import CellView, TableView
from mountbench.model import RunData
from mountbench.report.cells import format_value
from mountbench.report.sections.clients.machines import CLIENT_FACT_HEADERS, client_facts_rows
from mountbench.report.sections.clients.measures import (
    ClientFigure,
    by_workload,
    client_figures,
    figure_for,
    has_clients,
    median_of,
    samples_of,
    scaling_curves,
    skew_figures,
    skew_flag_text,
)
from mountbench.report.sections.section import Options

SKEW_HEADERS = ["workload", "target", "median start skew", "worst start skew", "least overlap", "flagged"]


def skew_table(runs: Sequence[RunData]) -> TableView | None:
    figures = [f for f in skew_figures(runs) if f.skews or f.fewer]
    if not figures:
        return None
    rows = [
        _row([f.title, f.target, _ms(median_of(f.skews)), _ms(max(f.skews) if f.skews else None),
              percent(min(f.overlaps) if f.overlaps else None), skew_flag_text(f)])
        for f in figures
    ]  # fmt: skip
    return TableView("start-skew", "Start skew", SKEW_HEADERS, rows, numeric_from=2, text_from=5)


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.0f} ms"


# --- formatting -----------------------------------------------------------------------------------


def fmt(metric: MetricInfo, value: float | None) -> str:
    return "—" if value is None else format_value(value, metric)


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def slowest_text(figure: ClientFigure) -> str:
    slowest, gap = figure.slowest, figure.slowest_gap
    if slowest is None:
        return "—"
    direction = "below" if figure.metric.higher_is_better else "above"
    gap_text = f", {gap:.0%} {direction} the clients' mean" if gap is not None else ""
    return f"{slowest[0]} ({fmt(figure.metric, slowest[1])}{gap_text})"


def failures_text(figure: ClientFigure) -> str:
    said = [f"{label} failed in {n} sample{'s' if n != 1 else ''}" for label, n in figure.failures]
    if figure.left_out:
        said.append(f"{figure.left_out} sample{'s' if figure.left_out != 1 else ''} on fewer clients left out")
    return "; ".join(said)


# --- tables: built once, laid out by every format ----------------------------------------------


def _row(texts: Sequence[str]) -> list[CellView]:
    return [CellView(t) for t in texts]


def scaling_tables(runs: Sequence[RunData]) -> list[TableView]:
    views = []
    for index, curve in enumerate(scaling_curves(runs), 1):
        rows = []
        for p in curve.points:
            workload = next(w for run in runs for w in run.workloads if w.name == p.workload)
            figure = figure_for(workload, curve.metric.name, curve.target, samples_of(runs, p.workload, curve.target))
            texts = [str(p.clients), fmt(curve.metric, p.aggregate), fmt(curve.metric, p.per_client),
                     percent(p.efficiency), slowest_text(figure)]  # fmt: skip
            rows.append(_row(texts))
        views.append(
            TableView(
                f"scaling-{index}",
                f"Scaling: {curve.title} · {curve.metric.label} · {curve.target}",
                ["clients", "aggregate", "per client", "vs linear", "slowest client"],
                rows,
                numeric_from=0,
                text_from=4,
            )
        )
    return views


def per_client_tables(figures: Sequence[ClientFigure]) -> list[TableView]:
    """--per-client: per workload, every client's median next to the aggregate."""
    views = []
    for index, group in enumerate(by_workload(figures), 1):
        labels = [label for label, _ in group[0].clients]
        rows = []
        for figure in group:
            values = dict(figure.clients)
            rows.append(
                _row(
                    [
                        f"{figure.metric.label} · {figure.target}",
                        *(fmt(figure.metric, values.get(label)) for label in labels),
                        fmt(figure.metric, figure.aggregate),
                        figure.slowest[0] if figure.slowest else "—",
                        failures_text(figure) or "—",
                    ]
                )
            )
        headers = ["metric · target", *labels, "aggregate", "slowest", "failures"]
        views.append(
            TableView(f"per-client-{index}", f"Per client: {group[0].title}", headers, rows, text_from=len(labels) + 2)
        )
    return views


def slowest_table(figures: Sequence[ClientFigure]) -> TableView:
    rows = [
        _row([f"{f.title} · {f.metric.label}", f.target, fmt(f.metric, f.aggregate), slowest_text(f),
              failures_text(f) or "—"])
        for f in figures
    ]  # fmt: skip
    headers = ["workload · metric", "target", "aggregate", "slowest client", "failures"]
    return TableView("slowest-client", "Slowest client", headers, rows, numeric_from=2, text_from=3)


def machines_table(runs: Sequence[RunData]) -> TableView | None:
    facts = client_facts_rows(runs)
    if not facts:
        return None
    return TableView(
        "client-machines", "Client machines", CLIENT_FACT_HEADERS, [_row(r) for r in facts], numeric_from=99
    )


def tables(runs: Sequence[RunData], options: Options) -> list[TableView]:
    """Scaling, then per client (--per-client) or the slowest client, then the client machines."""
    if not has_clients(runs):
        return []
    figures = client_figures(runs)
    views = scaling_tables(runs)
    views += per_client_tables(figures) if options.per_client else [slowest_table(figures)]
    skew = skew_table(runs)
    machines = machines_table(runs)
    return views + ([skew] if skew else []) + ([machines] if machines else [])
