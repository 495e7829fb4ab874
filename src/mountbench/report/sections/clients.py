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
- warnings where the clients differ in a host fact (content.HOST_FACTS) or see different
  filesystems at a target's path.

Which workloads ran on which clients is in their description (model.Description.clients,
given by their kind). Each table is built once (a TableView) and laid out by the terminal,
Markdown and HTML alike; the scaling chart draws the aggregate, each client's own and
linear scaling against the number of clients.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from markupsafe import Markup

from mountbench.analysis.metrics import MetricInfo, describe
from mountbench.analysis.multiclient import FEWER_CLIENTS, OVERLAP_FLOOR, overlap_of
from mountbench.model import RunData, Sample, Workload
from mountbench.report.cells import format_value
from mountbench.report.chartkeys import Chart, slug
from mountbench.report.labels import HOST_FACTS
from mountbench.report.model import Report
from mountbench.report.sections.base import Options, nothing
from mountbench.report.tables import CellView, TableView, html_section, md_image, md_text
from mountbench.report.tables import markdown as md_view
from mountbench.units import format_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TITLE = "Clients"
INTRO = (
    "Each sample ran on every client at once through fio's client/server engine. The aggregate is "
    "mountbench's own: the clients' IOPS and bandwidth summed, latency percentiles read off their merged "
    "histograms (never averaged)."
)
SWEEP_OPTION = "clients"
CLIENT_FACT_HEADERS = [
    "client", "server", "hostname", "kernel", "CPU", "fio", "clock offset", "filesystem of the target"
]  # fmt: skip
SKEW_HEADERS = ["workload", "target", "median start skew", "worst start skew", "least overlap", "flagged"]
SKEW_NOTE = (
    "Start skew: how long after the first client the last one started its I/O (clients started over SSH or "
    "running mountbench serve wait for a common instant first, unless a plain fio server is among them), from "
    "each client's own clock (fio's latency log stamps), less its offset to this machine's measured over SSH "
    "or through serve (a plain fio server's clock is taken as in sync). Overlap: the share of the sample every "
    f"client ran at once; below "
    f"{OVERLAP_FLOOR:.0%} the sum overstates the rate the clients reach together."
)


@dataclass(frozen=True)
class ClientFigure:
    """One workload, metric and target: the aggregate and each client's own median."""

    workload: str
    title: str
    metric: MetricInfo
    target: str
    aggregate: float | None  # median over the successful samples
    clients: tuple[tuple[str, float | None], ...]  # (client, median of its own figures)
    failures: tuple[tuple[str, int], ...]  # (client, samples in which it failed)
    samples: int

    @property
    def slowest(self) -> tuple[str, float] | None:
        """The client that did worst (least throughput, or most latency) and its median."""
        measured = [(value, label) for label, value in self.clients if value is not None]
        if len(measured) < 2:
            return None
        value, label = min(measured) if self.metric.higher_is_better else max(measured)
        return label, value

    @property
    def slowest_gap(self) -> float | None:
        """How far the slowest client is from the clients' mean, as a fraction (0.2: 20 % worse)."""
        slowest = self.slowest
        values = [v for _, v in self.clients if v is not None]
        if slowest is None or not values:
            return None
        mean = statistics.fmean(values)
        return abs(slowest[1] - mean) / mean if mean else None


@dataclass(frozen=True)
class ScalingPoint:
    clients: int
    workload: str  # the variant measured with this many clients
    aggregate: float | None
    per_client: float | None  # aggregate / clients
    efficiency: float | None  # aggregate / (linear extrapolation from the smallest count)
    client_values: tuple[tuple[str, float | None], ...]


@dataclass(frozen=True)
class ScalingCurve:
    base: str  # the fio workload's own name
    title: str
    metric: MetricInfo
    target: str
    points: tuple[ScalingPoint, ...]


# --- building -----------------------------------------------------------------------------------


def client_workloads(runs: Sequence[RunData]) -> list[Workload]:
    """The workloads that ran on several clients at once (their description lists them)."""
    seen: dict[str, Workload] = {}
    for run in runs:
        for workload in run.workloads:
            if workload.description.clients:
                seen.setdefault(workload.name, workload)
    return list(seen.values())


def has_clients(runs: Sequence[RunData]) -> bool:
    return bool(client_workloads(runs))


def _targets(runs: Sequence[RunData]) -> list[str]:
    labels: list[str] = []
    for run in runs:
        labels += [label for label in run.target_labels() if label not in labels]
    return labels


def samples_of(runs: Sequence[RunData], workload: str, target: str) -> list[Sample]:
    return [s for run in runs for s in run.samples if s.workload == workload and s.target == target]


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _metrics_of(workload: Workload, samples: Sequence[Sample], every: bool) -> list[str]:
    present = {m for s in samples if s.ok for m in s.metrics}
    headline = [m for m in workload.description.headline if m in present]
    if not every:
        return headline
    return headline + sorted(m for m in present if m not in headline and not m.startswith("cpu."))


def figure_for(workload: Workload, metric: str, target: str, samples: Sequence[Sample]) -> ClientFigure:
    ok = [s for s in samples if s.ok and metric in s.metrics]
    labels = workload.description.clients
    per_client = []
    failures = []
    for label in labels:
        values = [p.metrics[metric] for s in ok for p in s.clients if p.client == label and metric in p.metrics]
        per_client.append((label, _median(values)))
        failed = sum(1 for s in samples for p in s.clients if p.client == label and p.error)
        if failed:
            failures.append((label, failed))
    return ClientFigure(
        workload=workload.name,
        title=workload.title,
        metric=describe(metric),
        target=target,
        aggregate=_median([s.metrics[metric] for s in ok]),
        clients=tuple(per_client),
        failures=tuple(failures),
        samples=len(ok),
    )


def by_workload(figures: Sequence[ClientFigure]) -> list[list[ClientFigure]]:
    """Figures grouped by workload, in order (one per-client table each)."""
    groups: dict[str, list[ClientFigure]] = {}
    for figure in figures:
        groups.setdefault(figure.workload, []).append(figure)
    return list(groups.values())


def client_figures(runs: Sequence[RunData], *, every_metric: bool = False) -> list[ClientFigure]:
    """Per (workload, headline metric, target) of each multi-client workload."""
    figures = []
    for workload in client_workloads(runs):
        for target in _targets(runs):
            samples = samples_of(runs, workload.name, target)
            if not samples:
                continue
            for metric in _metrics_of(workload, samples, every_metric) or []:
                figures.append(figure_for(workload, metric, target, samples))
    return figures


def scaling_curves(runs: Sequence[RunData]) -> list[ScalingCurve]:
    """One curve per (fio workload, headline metric, target) measured at two or more client counts."""
    groups: dict[str, list[Workload]] = {}
    for workload in client_workloads(runs):
        point = workload.description.sweep
        if point is not None and point.option == SWEEP_OPTION:
            groups.setdefault(point.group, []).append(workload)
    curves = []
    for variants in groups.values():
        variants.sort(key=lambda w: w.description.sweep.number)  # type: ignore[union-attr]
        if len(variants) < 2:
            continue
        base = variants[0].description.origin or variants[0].name
        title = variants[0].description.origin_title or base
        for target in _targets(runs):
            per_variant = [(w, samples_of(runs, w.name, target)) for w in variants]
            if not any(samples for _, samples in per_variant):
                continue
            metrics = [m for m in variants[0].description.headline if any(
                m in s.metrics for _, samples in per_variant for s in samples if s.ok)]  # fmt: skip
            for metric in metrics:
                curves.append(_curve(base, title, metric, target, per_variant))
    return curves


def _curve(
    base: str, title: str, metric: str, target: str, per_variant: list[tuple[Workload, list[Sample]]]
) -> ScalingCurve:
    points = []
    reference: tuple[int, float] | None = None
    for workload, samples in per_variant:
        count = int(workload.description.sweep.number)  # type: ignore[union-attr]
        figure = figure_for(workload, metric, target, samples)
        aggregate = figure.aggregate
        if reference is None and aggregate:
            reference = (count, aggregate)
        efficiency = None
        if reference and aggregate is not None:
            efficiency = aggregate / (reference[1] * count / reference[0])
        points.append(
            ScalingPoint(
                clients=count,
                workload=workload.name,
                aggregate=aggregate,
                per_client=aggregate / count if aggregate is not None else None,
                efficiency=efficiency,
                client_values=figure.clients,
            )
        )
    return ScalingCurve(base, title, describe(metric), target, tuple(points))


def client_host_warnings(runs: Sequence[RunData]) -> list[str]:
    """Where a run's clients differ in a host fact that affects their figures."""
    warnings = []
    for run in runs:
        facts = run.host.get("clients")
        if not isinstance(facts, dict) or len(facts) < 2:
            continue
        for key, name in HOST_FACTS:
            values = {label: f.get(key) for label, f in facts.items() if isinstance(f, dict)}
            known = {label: v for label, v in values.items() if v not in (None, "", "unknown")}
            if len({str(v) for v in known.values()}) > 1:
                listed = ", ".join(f"{label} {_fact(key, v)}" for label, v in known.items())
                warnings.append(f"the clients of run {run.id} differ in {name}: {listed}")
        warnings += _filesystem_warnings(run.id, facts)
    return warnings


def _filesystem_warnings(run_id: str, facts: Mapping[str, object]) -> list[str]:
    """Clients that see different filesystems at one target path are not sharing one directory."""
    seen: dict[str, dict[str, str]] = {}
    for label, f in facts.items():
        paths = f.get("paths") if isinstance(f, dict) else None
        for path, described in (paths or {}).items():
            fstype = str(described.get("fstype", "unknown")) if isinstance(described, dict) else "unknown"
            if fstype != "unknown":
                seen.setdefault(path, {})[label] = fstype
    return [
        f"the clients of run {run_id} see different filesystems at {path}: "
        + ", ".join(f"{label} {fstype}" for label, fstype in by_client.items())
        + "; they may not share one directory there"
        for path, by_client in seen.items()
        if len(set(by_client.values())) > 1
    ]


def _fact(key: str, value: object) -> str:
    if key == "ram_bytes" and isinstance(value, int | float):
        return format_bytes(float(value))
    return str(value)


def client_facts_rows(runs: Sequence[RunData]) -> list[list[str]]:
    """client, address, server, hostname, kernel, fio, filesystem(s) of the targets."""
    rows = []
    for run in runs:
        facts = run.host.get("clients")
        if not isinstance(facts, dict):
            continue
        for label, f in facts.items():
            paths = f.get("paths") or {}
            fs = ", ".join(sorted({str(p.get("fstype", "unknown")) for p in paths.values()})) or "unknown"
            rows.append(
                [
                    label,
                    str(f.get("server", "?")),
                    str(f.get("hostname", "?")),
                    str(f.get("kernel", "unknown")),
                    _cpu(f),
                    str(f.get("fio_version", "?")),
                    _clock(f),
                    fs,
                ]
            )
    return rows


def _cpu(facts: Mapping[str, object]) -> str:
    model, count = facts.get("cpu_model"), facts.get("cpu_count")
    if model in (None, "", "unknown"):
        return "unknown"
    return f"{count} × {model}" if isinstance(count, int) else str(model)


def _clock(facts: Mapping[str, object]) -> str:
    offset, uncertain = facts.get("clock_offset_ms"), facts.get("clock_uncertainty_ms")
    if not isinstance(offset, int | float):
        return "not measured"
    return f"{offset:+.1f} ms ± {uncertain:.1f}" if isinstance(uncertain, int | float) else f"{offset:+.1f} ms"


@dataclass(frozen=True)
class SkewFigure:
    """One multi-client workload on one target: its clients' start skew and overlap."""

    title: str
    target: str
    skews: tuple[float, ...]  # seconds, one per sample that has the clients' timestamps
    overlaps: tuple[float, ...]
    fewer: int  # samples that ran on fewer clients than asked
    samples: int

    @property
    def flagged(self) -> int:
        return sum(1 for o in self.overlaps if o < OVERLAP_FLOOR)


def skew_figures(runs: Sequence[RunData]) -> list[SkewFigure]:
    figures = []
    for workload in client_workloads(runs):
        if len(workload.description.clients) < 2:
            continue
        for target in _targets(runs):
            samples = samples_of(runs, workload.name, target)
            if not samples:
                continue
            skews, overlaps = [], []
            for sample in samples:
                skew, together = overlap_of(sample.clients) if sample.ok else (None, None)
                if skew is not None and together is not None:
                    skews.append(skew)
                    overlaps.append(together)
            fewer = sum(1 for s in samples if any(c.code == FEWER_CLIENTS for c in s.caveats))
            figures.append(SkewFigure(workload.title, target, tuple(skews), tuple(overlaps), fewer, len(samples)))
    return figures


def skew_flag_text(figure: SkewFigure) -> str:
    parts = []
    if figure.flagged:
        parts.append(f"{figure.flagged} of {len(figure.overlaps)} overlapped < {OVERLAP_FLOOR:.0%}")
    if figure.fewer:
        parts.append(f"{figure.fewer} of {figure.samples} on fewer clients than asked")
    return "; ".join(parts) or "—"


def skew_table(runs: Sequence[RunData]) -> TableView | None:
    figures = [f for f in skew_figures(runs) if f.skews or f.fewer]
    if not figures:
        return None
    rows = [
        _row([f.title, f.target, _ms(_median(f.skews)), _ms(max(f.skews) if f.skews else None),
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
    return "; ".join(f"{label} failed in {n} sample{'s' if n != 1 else ''}" for label, n in figure.failures)


# --- tables: built once, laid out by every format ----------------------------------------------


def _row(texts: Sequence[str]) -> list[CellView]:
    return [CellView(t) for t in texts]


def scaling_tables(runs: Sequence[RunData], svgs: Mapping[str, tuple[Chart, Markup]] | None = None) -> list[TableView]:
    views = []
    for index, curve in enumerate(scaling_curves(runs), 1):
        rows = []
        for p in curve.points:
            workload = next(w for run in runs for w in run.workloads if w.name == p.workload)
            figure = figure_for(workload, curve.metric.name, curve.target, samples_of(runs, p.workload, curve.target))
            texts = [str(p.clients), fmt(curve.metric, p.aggregate), fmt(curve.metric, p.per_client),
                     percent(p.efficiency), slowest_text(figure)]  # fmt: skip
            rows.append(_row(texts))
        chart = (svgs or {}).get(scaling_key(index, curve))
        views.append(
            TableView(
                f"scaling-{index}",
                f"Scaling: {curve.title} · {curve.metric.label} · {curve.target}",
                ["clients", "aggregate", "per client", "vs linear", "slowest client"],
                rows,
                chart[1] if chart else None,
                chart[0].title if chart else "",
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


def tables(
    runs: Sequence[RunData], options: Options, svgs: Mapping[str, tuple[Chart, Markup]] | None = None
) -> list[TableView]:
    """Scaling, then per client (--per-client) or the slowest client, then the client machines."""
    if not has_clients(runs):
        return []
    figures = client_figures(runs)
    views = scaling_tables(runs, svgs)
    views += per_client_tables(figures) if options.per_client else [slowest_table(figures)]
    skew = skew_table(runs)
    machines = machines_table(runs)
    return views + ([skew] if skew else []) + ([machines] if machines else [])


# --- the section's parts -------------------------------------------------------------------------


def terminal(report: Report, options: Options) -> list:
    """rich renderables for the end of `run` and `show` (nothing for single-machine runs)."""
    from mountbench.report.tables import rich_table

    views = tables(report.runs, options)
    if not views:
        return []
    titles = {v.heading: v.heading.replace("Scaling:", "Scaling with clients:", 1) for v in views}
    titles["Slowest client"] = "Clients (aggregate = mountbench's sum over the clients; --per-client shows each)"
    out: list = [rich_table(view, titles.get(view.heading, view.heading)) for view in views]
    if skew_note(views):
        from rich.text import Text

        out.append(Text(SKEW_NOTE, style="dim"))
    return out + [f"[yellow]warning:[/yellow] {w}" for w in client_host_warnings(report.runs)]


def skew_note(views: Sequence[TableView]) -> str:
    return SKEW_NOTE if any(v.id == "start-skew" for v in views) else ""


def markdown(report: Report, charts: Mapping[str, str], options: Options) -> str:
    """The "Clients" section of the Markdown report ('' for single-machine runs)."""
    views = tables(report.runs, options)
    if not views:
        return ""
    parts = [f"## {TITLE}", INTRO]
    curves = enumerate(scaling_curves(report.runs), 1)
    images = {f"scaling-{i}": (scaling_key(i, c), scaling_title(c)) for i, c in curves}
    for view in views:
        parts += [f"### {md_text(view.heading)}", md_view(view)]
        if view.id == "start-skew":
            parts.append(md_text(SKEW_NOTE))
        if view.id in images:
            parts.append(md_image(charts, *images[view.id]))
    warnings = client_host_warnings(report.runs)
    if warnings:
        parts.append("\n".join(f"- **warning**: {md_text(w)}" for w in warnings))
    return "\n\n".join(p for p in parts if p)


def html(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options) -> Markup:
    """The "Clients" section of the HTML report ('' for single-machine runs)."""
    views = tables(report.runs, options, svgs)
    if not views:
        return Markup("")
    intro = " ".join(p for p in (INTRO, skew_note(views)) if p)
    return html_section("clients", TITLE, views, intro, warnings=client_host_warnings(report.runs))


# --- the chart ------------------------------------------------------------------------------------


def scaling_key(index: int, curve: ScalingCurve) -> str:
    """``index`` counts scaling curves from 1, in report order."""
    return f"scaling-{index}-{slug(f'{curve.base}-{curve.metric.name}')}"


def scaling_title(curve: ScalingCurve) -> str:
    return f"{curve.title}: {curve.metric.label} against the number of clients ({curve.target})"


def charts(report: Report) -> list[Chart]:
    return [
        Chart(scaling_key(i, curve), "scaling", scaling_title(curve), lambda curve=curve: scaling_figure(curve))
        for i, curve in enumerate(scaling_curves(report.runs), 1)
        if any(p.aggregate is not None for p in curve.points)
    ]


def scaling_figure(curve: ScalingCurve) -> Figure:
    from matplotlib.ticker import FixedLocator

    from mountbench.report.chartkit import COLOURS, MARKERS, axis_label, axis_unit, new_figure, titles, value_axis

    points = [p for p in curve.points if p.aggregate is not None]
    values = [p.aggregate for p in points] + [v for p in points for _, v in p.client_values if v is not None]
    first = points[0]
    linear = [first.aggregate * p.clients / first.clients for p in points]  # type: ignore[operator]
    divisor, unit = axis_unit(curve.metric, values + linear)
    figure, ax = new_figure(7.2, 4.6)
    xs = [p.clients for p in points]
    ax.plot(xs, [v / divisor for v in linear], color="#999999", linestyle=":", linewidth=1.2, label="linear scaling")
    ax.plot(xs, [p.aggregate / divisor for p in points], color=COLOURS[0], marker=MARKERS[0], linewidth=1.6,
            label="aggregate (sum over the clients)")  # fmt: skip
    ax.plot(xs, [p.per_client / divisor for p in points], color=COLOURS[1], marker=MARKERS[1], linestyle="--",
            linewidth=1.2, label="per client (aggregate / clients)")  # fmt: skip
    each = [(p.clients, v / divisor) for p in points for _, v in p.client_values if v is not None]
    if each:
        ax.scatter([x for x, _ in each], [y for _, y in each], color=COLOURS[2], marker=MARKERS[2], s=14,
                   label="each client's own median", zorder=3)  # fmt: skip
    for p in points:
        if p.efficiency is not None:
            ax.annotate(f"{p.efficiency:.0%}", (p.clients, p.aggregate / divisor), xytext=(0, 8),  # type: ignore[operator]
                        textcoords="offset points", ha="center", fontsize=7, color=COLOURS[0])  # fmt: skip
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.set_xlabel("clients at once")
    ax.set_ylim(bottom=0)
    ax.margins(y=0.15)
    value_axis(ax.yaxis, ax.set_yscale, curve.metric, unit, False)
    ax.set_ylabel(axis_label(curve.metric, unit, False))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    titles(
        figure,
        ax,
        scaling_title(curve),
        "medians of the samples; labels: the aggregate as a share of linear scaling from the smallest count",
    )
    return figure


exports = nothing  # parts this section does not have
