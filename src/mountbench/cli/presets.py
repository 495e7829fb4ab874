"""`mountbench presets`: the named suites and what each runs."""

from __future__ import annotations

import click

from mountbench.blocks.table import CellView, RichLayout, TableView
from mountbench.blocks.to_terminal import rich_table
from mountbench.cli.console import out
from mountbench.engine.workloads import DEFAULT_PRESET
from mountbench.presets import load_preset, preset_names

LAYOUT = RichLayout(title_justify="left", show_edge=False, label_no_wrap=True, caption=True)


@click.command()
def presets() -> None:
    """List the named suites and what each runs."""
    names = preset_names()
    for name in sorted(names, key=lambda name: name != DEFAULT_PRESET):  # the default first, then A to Z
        preset = load_preset(name)
        default = " (default)" if name == DEFAULT_PRESET else ""
        rows = [[CellView(w.name), CellView(w.description.summary)] for w in preset.workloads]  # as its kind said
        swept = " × ".join(axis.text for axis in preset.sweeps)
        caption = f"each fio workload runs once per point of --sweep {swept} (named WORKLOAD@OPTION=VALUE)"
        view = TableView("presets", f"{name}{default}: {preset.description}", ["workload", "what runs"], rows,
                         numeric_from=2, caption=caption if preset.sweeps else "")  # fmt: skip
        out.print(rich_table(view, layout=LAYOUT))
        out.print()
