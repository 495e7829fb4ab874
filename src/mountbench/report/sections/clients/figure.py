"""The scaling chart: the aggregate, each client's own median and linear scaling against the
number of clients."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mountbench.report.chartkeys import slug
from mountbench.report.sections.clients.measures import ScalingCurve

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def scaling_key(index: int, curve: ScalingCurve) -> str:
    """``index`` counts scaling curves from 1, in report order."""
    return f"scaling-{index}-{slug(f'{curve.base}-{curve.metric.name}')}"


def scaling_title(curve: ScalingCurve) -> str:
    return f"{curve.title}: {curve.metric.label} against the number of clients ({curve.target})"


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
