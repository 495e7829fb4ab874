"""The terminal table: one row per workload metric, one column per target."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from mountbench.metrics import describe
from mountbench.model import QUALITY_CODES, RunData
from mountbench.report import sweeptext
from mountbench.report.cells import Footnotes, format_ratio, format_spread, format_value
from mountbench.report.content import Report, Sweep
from mountbench.summary import Cell, Row, RunSummary
from mountbench.units import format_bytes, format_seconds


def render_summary(summary: RunSummary, runs: list[RunData]) -> Group:
    notes = Footnotes.empty()
    table = Table(
        title=_title(summary, runs),
        caption=f"median ±CV · ratio to {summary.baseline} with 95% CI (≈: within noise) · \\[n] footnotes",
        show_lines=True,
        header_style="bold",
    )
    table.add_column("workload · metric", no_wrap=False)
    for label in summary.targets:
        suffix = " (baseline)" if label == summary.baseline else ""
        table.add_column(label + suffix, justify="right")
    for row in summary.rows:
        base = row.cells[summary.baseline]
        table.add_row(_row_label(row), *(_cell_text(row, row.cells[label], notes, base) for label in summary.targets))
    parts: list = [table]
    if notes.texts:
        parts.append(Text("\n".join(f"[{i}] {text}" for i, text in enumerate(notes.texts, 1)), style="yellow"))
    parts.append(Text(environment_text(runs), style="dim"))
    return Group(*parts)


def _title(summary: RunSummary, runs: list[RunData]) -> str:
    statuses = {run.status for run in runs}
    status = "" if statuses == {"complete"} else f" [{', '.join(sorted(statuses))}]"
    return f"mountbench run {', '.join(summary.run_ids)}{status}"


def _row_label(row: Row) -> Text:
    better = "higher is better" if row.metric.higher_is_better else "lower is better"
    return Text.assemble((row.title, "bold"), "\n", (f"{row.metric.label} ({better})", "dim"))


def _cell_text(row: Row, cell: Cell, notes: Footnotes, base: Cell) -> Text:
    marks = notes.marks(cell)
    mark_text = f" [{','.join(map(str, marks))}]" if marks else ""
    if cell.summary is None:
        text = Text(f"✗ failed {cell.failed}/{cell.failed}" if cell.failed else "no data", style="red")
        text.append(mark_text, style="yellow")
        return text
    text = Text(format_value(cell.summary.median, row.metric), style="bold")
    spread = format_spread(cell)
    if spread:
        text.append(f" {spread}", style="dim")
    text.append(mark_text, style="yellow")
    if cell.failed:
        text.append(f"\n{cell.failed} failed", style="red")
    ratio = format_ratio(cell.comparison)
    if ratio:
        text.append("\n" + ratio, style="dim" if ratio.startswith("≈") else "cyan")
        # the ratio also stands on how the baseline was measured
        inherited = sorted({notes.mark(c.text) for c in base.caveats if c.code not in QUALITY_CODES})
        if inherited:
            text.append(f" [{','.join(map(str, inherited))}]", style="yellow")
    return text


def _warmup_text(run: RunData) -> str:
    warmup = run.config.warmup
    return f" after {warmup} warm-up round{'s' if warmup != 1 else ''}" if warmup else ""


def environment_text(runs: list[RunData]) -> str:
    lines = []
    for run in runs:
        host = run.host
        lines.append(
            f"run {run.id} on {host.get('hostname', '?')}: {host.get('os', '?')}, {host.get('cpu_model', '?')}, "
            f"{host.get('cpu_count', '?')} CPUs, {format_bytes(host.get('ram_bytes', 0))} RAM, "
            f"{host.get('fio_version', '')}, mountbench {host.get('mountbench_version', '?')}; "
            f"{run.config.repeat} repetitions{_warmup_text(run)}, seed {run.config.seed}, "
            f"drop caches: {run.config.drop_caches}"
        )
        for record in run.targets:
            info = record.info
            if info is None:
                continue
            direct = "O_DIRECT ok" if info.odirect else f"O_DIRECT refused ({info.odirect_detail})"
            lines.append(
                f"  {record.target.label}: {record.target.path} on {info.fstype} {info.mount_source} "
                f"({info.mount_options}); {direct}; {format_bytes(info.free_bytes)} free"
            )
    return "\n".join(lines)


def render_samples(run: RunData) -> Table:
    """Every sample of a run in the order it was taken: what 'show RUN --samples' prints, so
    outliers, drift and failures can be seen sample by sample."""
    import time

    table = Table(title=f"samples of run {run.id}, in the order they were taken", header_style="bold")
    for name in ("#", "time", "round", "target", "workload", "value", "wall", "notes"):
        table.add_column(name, justify="right" if name in ("#", "round", "value", "wall") else "left")
    workloads = {w.name: w for w in run.workloads}
    ordered = sorted(run.samples, key=lambda s: (s.started_at, s.round))
    for index, sample in enumerate(ordered, 1):
        workload = workloads.get(sample.workload)
        headline = [m for m in (workload.description.headline if workload else ()) if m in sample.metrics]
        value = ", ".join(format_value(sample.metrics[m], describe(m)) for m in headline) or "–"
        when = time.strftime("%H:%M:%S", time.localtime(sample.started_at)) if sample.started_at else "?"
        notes = (
            Text(sample.error, style="red")
            if not sample.ok
            else Text(" ".join(dict.fromkeys(c.code for c in sample.caveats)), style="yellow")
        )
        table.add_row(
            str(index), when, str(sample.round + 1), sample.target, sample.workload,
            value if sample.ok else Text("failed", style="red"), format_seconds(sample.wall_s), notes,
        )  # fmt: skip
    return table


# --- sweeps ------------------------------------------------------------------------------------


def render_sweeps(report: Report) -> Group | None:
    """One table per sweep (values down, targets across, one unit, ★ optimum and ◆ knee);
    per grid, one table per target. None when the runs hold no sweep."""
    if not report.sweeps and not report.grids:
        return None
    parts: list = []
    targets = report.summary.targets
    for sweep in report.sweeps:
        parts += [Text(""), Text(sweeptext.heading(sweep), style="bold")]
        table = Table(header_style="bold")
        table.add_column(sweeptext.option_label(sweep.option), no_wrap=True)
        for label in targets:
            table.add_column(label + (" (baseline)" if label == report.summary.baseline else ""), justify="right")
        for index, (value, row) in enumerate(zip(sweep.values, sweep.rows, strict=True)):
            table.add_row(value, *(_sweep_point(sweep, index, row.cells[t], t) for t in targets))
        table.add_section()
        table.add_row(
            Text(f"{sweeptext.PEAK_MARK} optimum", "bold"), *(sweeptext.optimum_text(sweep, t) for t in targets)
        )
        table.add_row(Text(f"{sweeptext.KNEE_MARK} knee", "bold"), *(sweeptext.knee_text(sweep, t) for t in targets))
        parts += [table, Text(sweeptext.explanation(sweep), style="dim")]
        parts += _sweep_caveats(sweep.rows, targets)
    for grid in report.grids:
        parts += [Text(""), Text(sweeptext.grid_heading(grid), style="bold")]
        parts.append(Text(sweeptext.grid_explanation(grid), style="dim"))
        for target in targets:
            table = Table(title=f"{target}: {grid.row_option} ↓ {grid.column_option} →", title_justify="left")
            table.add_column(grid.row_option, no_wrap=True)
            for value in grid.column_values:
                table.add_column(value, justify="right")
            for i, value in enumerate(grid.row_values):
                cells = []
                for j in range(len(grid.column_values)):
                    row = grid.cells.get((i, j))
                    best = grid.best.get(target) == (i, j)
                    text = sweeptext.point_text(row.cells[target], grid.unit[0]) if row is not None else ""
                    cells.append(Text(text + (f" {sweeptext.PEAK_MARK}" if best else ""), "bold green" if best else ""))
                table.add_row(value, *cells)
            parts.append(table)
        parts += _sweep_caveats(grid.rows, targets)
    return Group(*parts)


def _sweep_caveats(rows, targets) -> list[Text]:
    """How the points were measured, spelled out under their table: 'caveat (on a, b)'."""
    found: dict[str, list[str]] = {}
    for label in targets:
        for row in rows:
            for caveat in row.cells[label].caveats:
                if caveat.code not in QUALITY_CODES and label not in found.setdefault(caveat.text, []):
                    found[caveat.text].append(label)
    return [Text(f"! {text} (on {', '.join(labels)})", style="yellow") for text, labels in found.items()]


def _sweep_point(sweep: Sweep, index: int, cell: Cell, target: str) -> Text:
    marks = sweeptext.point_marks(sweep, index, target)
    style = "bold green" if sweeptext.PEAK_MARK in marks else ("green" if marks else "")
    if cell.summary is None:
        style = "red"
    return Text(sweeptext.point_text(cell, sweep.unit[0]) + marks, style)
