"""`mountbench presets`: the named suites and what each runs."""

from __future__ import annotations

import click
from rich.table import Table

from mountbench.cli.console import out
from mountbench.engine.workloads import DEFAULT_PRESET
from mountbench.presets import load_preset, preset_names


@click.command()
def presets() -> None:
    """List the named suites and what each runs."""
    names = preset_names()
    for name in sorted(names, key=lambda name: name != DEFAULT_PRESET):  # the default first, then A to Z
        preset = load_preset(name)
        default = " (default)" if name == DEFAULT_PRESET else ""
        table = Table(title=f"{name}{default}: {preset.description}", title_justify="left", show_edge=False)
        table.add_column("workload", no_wrap=True)
        table.add_column("what runs")
        for workload in preset.workloads:
            table.add_row(workload.name, workload.description.summary)  # as its kind described it
        if preset.sweeps:
            swept = " × ".join(axis.text for axis in preset.sweeps)
            table.caption = f"each fio workload runs once per point of --sweep {swept} (named WORKLOAD@OPTION=VALUE)"
            table.caption_justify = "left"
        out.print(table)
        out.print()
