"""The pick-two chart: a lab's mounts down, its properties across (performance / coherence /
concurrency for the QEMU lab), each cell coloured by its verdict in the Okabe-Ito palette and
saying its mark and word, so it reads in black and white."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from mountbench.report.picktwo.rows import PickRow, PickTwo
from mountbench.report.picktwo.scale import MARK

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FILL = {
    "good": "#009E73",
    "fair": "#E69F00",
    "poor": "#D55E00",
    "data loss": "#000000",
    "not shared": "#DDDDDD",
    "not measured": "#FFFFFF",
}
ON_COLOUR = ("good", "fair", "poor", "not measured")  # cells that keep their colour (a hatch) in dark mode
INK = {"good": "white", "fair": "black", "poor": "white", "data loss": "white", "not shared": "#333333"}


def _short(row: PickRow, prop: str) -> str:
    """What a cell says under its verdict: the measures, shortened to fit."""
    measures = row.prop(prop).measures
    lines = [m.text.split(" (")[0] if prop == "performance" else m.text for m in measures if m.verdict != "not shared"]
    wrapped = [textwrap.shorten(line, 60, placeholder="…") for line in lines]
    return "\n".join(textwrap.fill(line, 30) for line in wrapped)


def pick_two_figure(found: PickTwo) -> Figure:
    import matplotlib.patches
    from matplotlib.figure import Figure

    from mountbench.report.chartkit import on_cell

    rows = [row for row in found.rows if not row.baseline]
    properties = found.properties
    width, height = 11.0, 1.2 + 1.15 * len(rows)
    figure = Figure(figsize=(width, height), layout="constrained")
    ax = figure.add_subplot()
    ax.set_xlim(0, len(properties))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([i + 0.5 for i in range(len(properties))], properties, fontsize=10, fontweight="bold")
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [textwrap.fill(r.label, 22) for r in rows], fontsize=9)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    for y, row in enumerate(rows):
        for x, prop in enumerate(properties):
            verdict = row.verdict(prop)
            patch = matplotlib.patches.Rectangle(
                (x + 0.02, y + 0.04), 0.96, 0.92, facecolor=FILL[verdict], edgecolor="#888888", linewidth=0.6
            )
            if verdict == "not measured":
                patch.set_hatch("//")
            ax.add_patch(patch)
            ink = INK.get(verdict, "black")
            texts = [
                ax.text(x + 0.5, y + 0.28, f"{MARK[verdict]} {verdict}", ha="center", va="center", color=ink,
                        fontsize=10, fontweight="bold"),
                ax.text(x + 0.5, y + 0.66, _short(row, prop), ha="center", va="center", color=ink, fontsize=6.5),
            ]  # fmt: skip
            if verdict in ON_COLOUR:  # a grey cell turns dark in dark mode, and its ink light, with the page
                for text in texts:
                    on_cell(text)
    figure.suptitle(found.title, fontsize=11, fontweight="bold")
    figure.supxlabel(textwrap.fill(found.chart_note, int(width * 15)), fontsize=7, color="#333333")
    return figure
