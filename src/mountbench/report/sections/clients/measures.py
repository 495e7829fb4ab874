"""What a multi-client run measured, per workload and target: each client's own median next to
the aggregate (ClientFigure), the aggregate against the client count (ScalingCurve), and the
clients' start skew and overlap (SkewFigure), from the per-client results stored with each sample."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.analysis.metrics import MetricInfo, describe
from mountbench.analysis.multiclient import FEWER_CLIENTS, OVERLAP_FLOOR, comparable, overlap_of
from mountbench.model import RunData, Sample, Workload

SWEEP_OPTION = "clients"


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
    left_out: int = 0  # samples on fewer clients (one lost earlier) left out of the figures

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


def median_of(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _metrics_of(workload: Workload, samples: Sequence[Sample], every: bool) -> list[str]:
    present = {m for s in samples if s.ok for m in s.metrics}
    headline = [m for m in workload.description.headline if m in present]
    if not every:
        return headline
    return headline + sorted(m for m in present if m not in headline and not m.startswith("cpu."))


def figure_for(workload: Workload, metric: str, target: str, samples: Sequence[Sample]) -> ClientFigure:
    """The aggregate and each client's median over the same samples: those the cell's statistics stand on
    (analysis.multiclient.comparable: a lost client's later samples, on fewer clients, are left out where
    the cell has samples on all), so the clients' figures add up to the aggregate beside them."""
    ok, left_out = comparable([s for s in samples if s.ok and metric in s.metrics])
    labels = workload.description.clients
    per_client = []
    failures = []
    for label in labels:
        values = [p.metrics[metric] for s in ok for p in s.clients if p.client == label and metric in p.metrics]
        per_client.append((label, median_of(values)))
        failed = sum(1 for s in samples for p in s.clients if p.client == label and p.error)
        if failed:
            failures.append((label, failed))
    return ClientFigure(
        workload=workload.name,
        title=workload.title,
        metric=describe(metric),
        target=target,
        aggregate=median_of([s.metrics[metric] for s in ok]),
        clients=tuple(per_client),
        failures=tuple(failures),
        samples=len(ok),
        left_out=left_out,
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
