"""Runs on several clients at once (run --client): the scaling view and per-client figures.

The main tables show mountbench's aggregate (each sample's metrics). This section adds
what only a multi-client run has, from the per-client results stored with each sample:

- scaling (``--clients 1,2,4``): the aggregate and the mean per client against the client
  count, with the efficiency relative to linear scaling from the smallest count;
- per workload, the slowest client (by the median of its own figures) and, on request
  (``--per-client``), every client's median next to the aggregate;
- warnings where the clients differ in fio version, kernel, CPU, CPU count, RAM or OS.

Pure builders here (``client_figures``, ``scaling_curves``, ``client_host_warnings``) and
the text they share; one renderer per format in clients_views.py, wired into the terminal,
Markdown and HTML outputs with small hooks; the chart in clients_chart.py.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.analysis.metrics import MetricInfo, describe
from mountbench.model import RunData, Sample, Workload
from mountbench.units import format_bytes, format_count, format_rate, format_seconds

KIND = "fioclients"
SWEEP_OPTION = "clients"
# host facts whose difference between clients makes their figures hard to compare
CLIENT_FACTS = (
    ("fio_version", "fio version"),
    ("kernel", "kernel"),
    ("cpu_model", "CPU"),
    ("cpu_count", "CPU count"),
    ("ram_bytes", "RAM"),
    ("os", "OS"),
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
    seen: dict[str, Workload] = {}
    for run in runs:
        for workload in run.workloads:
            if workload.kind == KIND:
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


def _client_labels(workload: Workload) -> list[str]:
    return [_label(c) for c in workload.spec.get("clients", [])]


def _label(client: dict) -> str:
    from mountbench.clients.spec import ClientSpec

    return ClientSpec.from_dict(client).label


def _metrics_of(workload: Workload, samples: Sequence[Sample], every: bool) -> list[str]:
    present = {m for s in samples if s.ok for m in s.metrics}
    headline = [m for m in workload.description.headline if m in present]
    if not every:
        return headline
    return headline + sorted(m for m in present if m not in headline and not m.startswith("cpu."))


def figure_for(workload: Workload, metric: str, target: str, samples: Sequence[Sample]) -> ClientFigure:
    ok = [s for s in samples if s.ok and metric in s.metrics]
    labels = _client_labels(workload)
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
        base = variants[0].spec.get("job", {}).get("name", variants[0].name)
        title = variants[0].spec.get("job", {}).get("title", base)
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
        for key, name in CLIENT_FACTS:
            values = {label: f.get(key) for label, f in facts.items() if isinstance(f, dict)}
            known = {label: v for label, v in values.items() if v not in (None, "", "unknown")}
            if len({str(v) for v in known.values()}) > 1:
                listed = ", ".join(f"{label} {_fact(key, v)}" for label, v in known.items())
                warnings.append(f"the clients of run {run.id} differ in {name}: {listed}")
    return warnings


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
                    str(f.get("fio_version", "?")),
                    fs,
                ]
            )
    return rows


CLIENT_FACT_HEADERS = ["client", "server", "hostname", "kernel", "fio", "filesystem of the target"]


# --- formatting -----------------------------------------------------------------------------------


def fmt(metric: MetricInfo, value: float | None) -> str:
    if value is None:
        return "—"
    if metric.unit == "B/s":
        return format_rate(value)
    if metric.unit == "s":
        return format_seconds(value)
    if metric.unit == "B":
        return format_bytes(value)
    text = format_count(value)
    return f"{text} {metric.unit}" if metric.unit in ("IOPS",) else text


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


# --- chart keys (no matplotlib here: Markdown links to chart files by key) ----------------------


def scaling_key(index: int, curve: ScalingCurve) -> str:
    """``index`` counts scaling curves from 1, in report order."""
    import re

    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{curve.base}-{curve.metric.name}").strip("-").lower()
    return f"scaling-{index}-{slug}"


def scaling_title(curve: ScalingCurve) -> str:
    return f"{curve.title}: {curve.metric.label} against the number of clients ({curve.target})"
