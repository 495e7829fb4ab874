"""The Clients section of every output format (terminal, Markdown, HTML), drawn from the
builders of report/clients.py. Empty for runs made on one machine."""

from __future__ import annotations

from collections.abc import Sequence

from mountbench.model import RunData
from mountbench.report.clients import (
    CLIENT_FACT_HEADERS,
    ClientFigure,
    by_workload,
    client_facts_rows,
    client_figures,
    client_host_warnings,
    failures_text,
    figure_for,
    fmt,
    has_clients,
    percent,
    samples_of,
    scaling_curves,
    scaling_key,
    scaling_title,
    slowest_text,
)

# --- terminal ---------------------------------------------------------------------------------------


def clients_terminal(run: RunData, *, per_client: bool = False) -> list:
    """rich renderables for the end of `run` and `show` (nothing for single-machine runs)."""
    from rich.table import Table

    runs = [run]
    if not has_clients(runs):
        return []
    out: list = []
    for curve in scaling_curves(runs):
        table = Table(
            title=f"Scaling with clients: {curve.title} · {curve.metric.label} · {curve.target}",
            title_justify="left",
        )
        table.add_column("clients", justify="right")
        table.add_column("aggregate", justify="right")
        table.add_column("per client", justify="right")
        table.add_column("vs linear", justify="right")
        table.add_column("slowest client")
        for point in curve.points:
            figure = figure_for(run.workload(point.workload), curve.metric.name, curve.target,
                                samples_of(runs, point.workload, curve.target))  # fmt: skip
            table.add_row(
                str(point.clients),
                fmt(curve.metric, point.aggregate),
                fmt(curve.metric, point.per_client),
                percent(point.efficiency),
                slowest_text(figure),
            )
        out.append(table)
    figures = client_figures(runs)
    if per_client:
        out += _per_client_tables(figures)
    else:
        table = Table(title="Clients (aggregate = mountbench's sum over the clients; --per-client shows each)",
                      title_justify="left")  # fmt: skip
        for name in ("workload · metric", "target", "aggregate", "slowest client", "failures"):
            table.add_column(name, justify="right" if name == "aggregate" else "left")
        for figure in figures:
            table.add_row(
                f"{figure.title} · {figure.metric.label}",
                figure.target,
                fmt(figure.metric, figure.aggregate),
                slowest_text(figure),
                failures_text(figure) or "—",
            )
        out.append(table)
    for warning in client_host_warnings(runs):
        out.append(f"[yellow]warning:[/yellow] {warning}")
    return out


def _per_client_tables(figures: Sequence[ClientFigure]) -> list:
    from rich.table import Table

    tables = []
    for group in by_workload(figures):
        labels = [label for label, _ in group[0].clients]
        table = Table(title=f"Per client: {group[0].title}", title_justify="left")
        table.add_column("metric · target")
        for label in labels:
            table.add_column(label, justify="right")
        table.add_column("aggregate", justify="right")
        table.add_column("slowest")
        for figure in group:
            values = dict(figure.clients)
            table.add_row(
                f"{figure.metric.label} · {figure.target}",
                *(fmt(figure.metric, values.get(label)) for label in labels),
                fmt(figure.metric, figure.aggregate),
                figure.slowest[0] if figure.slowest else "—",
            )
        tables.append(table)
    return tables


# --- Markdown ----------------------------------------------------------------------------------------


def clients_markdown(runs: Sequence[RunData], charts: dict[str, str] | None = None, *, per_client: bool = False) -> str:
    """The "Clients" section of the Markdown report ('' for single-machine runs)."""
    from mountbench.report.markdown import md_code, md_table, md_text

    if not has_clients(runs):
        return ""
    charts = charts or {}
    parts = ["## Clients"]
    parts.append(
        "Each sample ran on every client at once through fio's client/server engine. The aggregate is "
        "mountbench's own: the clients' IOPS and bandwidth summed, latency percentiles read off their merged "
        "histograms (never averaged)."
    )
    for index, curve in enumerate(scaling_curves(runs), 1):
        parts.append(f"### Scaling: {md_text(curve.title)} · {md_text(curve.metric.label)} · {md_text(curve.target)}")
        rows = [
            [str(p.clients), fmt(curve.metric, p.aggregate), fmt(curve.metric, p.per_client), percent(p.efficiency)]
            for p in curve.points
        ]
        parts.append(md_table(["clients", "aggregate", "per client", "vs linear"], rows, "rrrr"))
        path = charts.get(scaling_key(index, curve))
        if path:
            parts.append(f"![{md_text(scaling_title(curve))}]({path})")
    figures = client_figures(runs)
    if per_client:
        for group in by_workload(figures):
            labels = [label for label, _ in group[0].clients]
            parts.append(f"### Per client: {md_text(group[0].title)}")
            rows = []
            for figure in group:
                values = dict(figure.clients)
                rows.append(
                    [
                        md_text(f"{figure.metric.label} · {figure.target}"),
                        *(fmt(figure.metric, values.get(label)) for label in labels),
                        fmt(figure.metric, figure.aggregate),
                        md_text(failures_text(figure) or "—"),
                    ]
                )
            headers = ["metric · target", *(md_code(label) for label in labels), "aggregate", "failures"]
            parts.append(md_table(headers, rows, "l" + "r" * (len(labels) + 1) + "l"))
    else:
        rows = [
            [
                md_text(f"{f.title} · {f.metric.label}"),
                md_text(f.target),
                fmt(f.metric, f.aggregate),
                md_text(slowest_text(f)),
                md_text(failures_text(f) or "—"),
            ]
            for f in figures
        ]
        parts.append("### Slowest client")
        parts.append(
            md_table(["workload · metric", "target", "aggregate", "slowest client", "failures"], rows, "llrll")
        )
    facts = client_facts_rows(runs)
    if facts:
        parts.append("### Client machines")
        parts.append(md_table(CLIENT_FACT_HEADERS, [[md_text(v) for v in row] for row in facts]))
    warnings = client_host_warnings(runs)
    if warnings:
        parts.append("\n".join(f"- **warning**: {md_text(w)}" for w in warnings))
    return "\n\n".join(parts)


# --- HTML -------------------------------------------------------------------------------------------


def clients_html(runs: Sequence[RunData], svgs: dict[str, str] | None = None, *, per_client: bool = False) -> str:
    """The "Clients" section of the HTML report, escaped ('' for single-machine runs)."""
    from html import escape

    if not has_clients(runs):
        return ""
    svgs = svgs or {}

    def table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
        head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
        body = "".join(
            "<tr>"
            + "".join(f'<td class="{"num" if i >= numeric_from else ""}">{escape(c)}</td>' for i, c in enumerate(row))
            + "</tr>"
            for row in rows
        )
        inner = f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
        return f'<div class="scroll"><table class="sortable">{inner}</table></div>'

    parts = ['<section id="clients">', "<h2>Clients</h2>"]
    parts.append(
        "<p>Each sample ran on every client at once through fio's client/server engine. The aggregate is "
        "mountbench's own: the clients' IOPS and bandwidth summed, latency percentiles read off their merged "
        "histograms (never averaged).</p>"
    )
    for index, curve in enumerate(scaling_curves(runs), 1):
        parts.append(f"<h3>Scaling: {escape(curve.title)} · {escape(curve.metric.label)} · {escape(curve.target)}</h3>")
        rows = [
            [str(p.clients), fmt(curve.metric, p.aggregate), fmt(curve.metric, p.per_client), percent(p.efficiency)]
            for p in curve.points
        ]
        parts.append(table(["clients", "aggregate", "per client", "vs linear"], rows, 0))
        svg = svgs.get(scaling_key(index, curve))
        if svg:
            parts.append(f'<figure class="chart">{svg}<figcaption>{escape(scaling_title(curve))}</figcaption></figure>')
    figures = client_figures(runs)
    if per_client:
        for group in by_workload(figures):
            labels = [label for label, _ in group[0].clients]
            parts.append(f"<h3>Per client: {escape(group[0].title)}</h3>")
            rows = []
            for figure in group:
                values = dict(figure.clients)
                rows.append(
                    [
                        f"{figure.metric.label} · {figure.target}",
                        *(fmt(figure.metric, values.get(label)) for label in labels),
                        fmt(figure.metric, figure.aggregate),
                        failures_text(figure) or "—",
                    ]
                )
            parts.append(table(["metric · target", *labels, "aggregate", "failures"], rows))
    else:
        rows = [
            [f"{f.title} · {f.metric.label}", f.target, fmt(f.metric, f.aggregate), slowest_text(f),
             failures_text(f) or "—"]
            for f in figures
        ]  # fmt: skip
        parts.append("<h3>Slowest client</h3>")
        parts.append(table(["workload · metric", "target", "aggregate", "slowest client", "failures"], rows, 2))
    facts = client_facts_rows(runs)
    if facts:
        parts.append("<h3>Client machines</h3>")
        parts.append(table(CLIENT_FACT_HEADERS, facts, 99))
    for warning in client_host_warnings(runs):
        parts.append(f'<p class="warning">warning: {escape(warning)}</p>')
    parts.append("</section>")
    return "\n".join(parts)
