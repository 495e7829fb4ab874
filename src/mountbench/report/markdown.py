"""The Markdown report: a blog post's body, paste-ready. The same sections as the HTML
page, in the same order: the answer (one headline per target, the summary grid), the
verdicts, the detail per metric, percentiles, sweeps, environment, methodology and the
notes; every [n] mark links to its note.

Pure: ``render_markdown(report, charts)`` returns text; the caller writes the chart
files (charts.write_charts) and passes their relative paths in.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence

from mountbench.analysis.summary import Cell, Row
from mountbench.report import content, costview, picktwo, sweeptext
from mountbench.report.cells import format_spread, format_value
from mountbench.report.chartkeys import bars_key, grid_key, percentile_key, sweep_key
from mountbench.report.clients_views import clients_markdown
from mountbench.report.content import PercentileCurve, Report, Sweep, SweepGrid
from mountbench.report.grid import GridSection
from mountbench.report.phrasing import cell_standing
from mountbench.report.verdicts import verdicts
from mountbench.units import format_bytes, format_seconds

_SPECIAL = "\\`*[]<"
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # intraword _ never emphasises in GFM


def render_markdown(report: Report, charts: Mapping[str, str] | None = None, *, per_client: bool = False) -> str:
    """``charts`` maps chart keys (charts.plan_charts) to image paths relative to the document;
    without it the document says how to get the charts. ``per_client``: runs on several
    clients show each client's figures (report/clients.py)."""
    charts = dict(charts or {})
    parts = [
        _heading(report),
        _headlines(report),
        _intro(report, bool(charts)),
        _warnings(report),
        _summary(report),
        _verdicts(report),
        _results(report, charts),
        _host_cost(report, charts),
        _percentiles(report, charts),
        _sweeps(report, charts),
        clients_markdown(report.runs, charts, per_client=per_client),
        picktwo.render_markdown(report, charts),  # lab --probe (report/picktwo.py)
        _environment(report),
        _methodology(report),
        _notes(report),
    ]
    return "\n\n".join(part for part in parts if part).rstrip() + "\n"


# --- text helpers ------------------------------------------------------------------------------


def md_text(text: object) -> str:
    """Escape what Markdown would otherwise format."""
    out = str(text)
    for char in _SPECIAL:
        out = out.replace(char, "\\" + char)
    return _UNDERSCORE.sub(r"\_", out)


def md_code(text: object) -> str:
    body = str(text)
    fence = "``" if "`" in body else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A GFM table; ``align`` has one letter per column (l, r), default left."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    marks = [":--" if (align[i : i + 1] or "l") == "l" else "--:" for i in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join(marks) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _marks(numbers: Sequence[int]) -> str:
    """`` [[2]](#note-2)``: each mark links to its note at the end."""
    return " " + " ".join(f"[\\[{n}\\]](#note-{n})" for n in numbers) if numbers else ""


def _when(timestamp: float | None) -> str:
    if not timestamp:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(timestamp))


def column_heading(report: Report, label: str) -> str:
    return f"{label} (baseline)" if label == report.summary.baseline else label


# --- sections ---------------------------------------------------------------------------------------


def _heading(report: Report) -> str:
    return "# mountbench: " + md_text(" vs ".join(report.summary.targets))


def _headlines(report: Report) -> str:
    return "\n".join(f"- **{md_text(h.text)}**" for h in report.headlines)


def _intro(report: Report, with_charts: bool) -> str:
    ids = ", ".join(md_code(run.id) for run in report.runs)
    hosts = ", ".join(md_text(h) for h in dict.fromkeys(c.host for c in report.columns))
    text = (
        f"Runs {ids} on {hosts}; baseline **{md_text(report.summary.baseline)}**. "
        f"Each value: the median of {md_text(content.repetitions(report))} samples (± their coefficient of "
        "variation in the detail); each other target is N× faster or slower than the baseline (ratio of "
        "geometric means) with its 95% confidence interval; ≈ same = within noise (the interval contains 1); "
        "[n] = notes at the end."
    )
    if report.multi_host:
        text += " Columns are named label@host: these runs come from different machines."
    if not with_charts:
        text += " Charts: give --out FILE.md to have them written next to the report."
    return text


def _warnings(report: Report) -> str:
    if not report.warnings:
        return ""
    return "> **Warnings**\n>\n" + "\n".join(f"> - {md_text(w)}" for w in report.warnings)


def _verdicts(report: Report) -> str:
    lines = []
    for item in verdicts(report.summary):
        row = next(r for r in report.summary.rows if r.workload == item.workload and r.metric.name == item.metric)
        lines.append(f"- {md_text(item.text)}{_marks(report.ratio_marks(row, item.target))}")
    return "## Verdicts\n\n" + "\n".join(lines) if lines else ""


def _summary(report: Report) -> str:
    """The summary grid: one table per unit, read and write side by side under each target."""
    if not report.grid.sections:
        return ""
    unit = "" if report.grid.unit == "auto" else f" (--unit {report.grid.unit})"
    parts = [f"## Summary{unit}"]
    for section in report.grid.sections:
        parts.append(f"### {md_text(section.heading)}")
        parts.append(_grid_table(report, section))
    return "\n\n".join(parts)


def _grid_table(report: Report, section: GridSection) -> str:
    targets = report.summary.targets
    columns = [(t, d) for t in targets for d in section.directions]
    headers = ["workload"] + [md_text(f"{column_heading(report, t)} {d}".strip()) for t, d in columns]
    rows = []
    for line in section.lines:
        cells = [md_text(line.title)]
        for target, direction in columns:
            row = line.row(direction)
            if row is None:
                cells.append("")
                continue
            cell = row.cells[target]
            text = section.scale.format(cell.summary.median) if cell.summary else _failed(cell)
            text += _marks(report.cell_marks(row, target))
            said = cell_standing(row, target)
            if said is not None and target != report.summary.baseline:
                text += f"<br>{said.short}{_marks(report.ratio_marks(row, target))}"
            cells.append(text)
        rows.append(cells)
    return md_table(headers, rows, "l" + "r" * len(columns))


def _failed(cell: Cell) -> str:
    return f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"


def _comparison_text(report: Report, row: Row, target: str) -> str:
    said = cell_standing(row, target)
    return (said.text if said else "–") + _marks(report.ratio_marks(row, target))


def _results(report: Report, charts: Mapping[str, str]) -> str:
    parts = ["## Results"]
    baseline = report.summary.baseline
    others = [t for t in report.summary.targets if t != baseline]
    for group in report.groups:
        headers = ["workload", *(md_text(column_heading(report, t)) for t in report.summary.targets)]
        headers += [f"{md_text(t)} vs {md_text(baseline)}" for t in others]
        most = max((c.summary.n for row in group.rows for c in row.cells.values() if c.summary), default=0)
        rows = [
            [md_text(row.title)]
            + [value_text(report, row, t, most) for t in report.summary.targets]
            + [_comparison_text(report, row, t) for t in others]
            for row in group.rows
        ]
        parts.append(f"### {md_text(content.group_heading(group))}")
        parts.append(md_table(headers, rows, "l" + "r" * (len(headers) - 1)))
        parts.append(_image(charts, bars_key(group), f"{group.metric.label} by workload"))
    ratio = _image(charts, "ratio", f"each target against {baseline}: right is better")
    if ratio:
        parts += ["### Against the baseline", ratio]
    if report.adaptive:
        headers = ["workload", *(md_text(t) for t in report.summary.targets)]
        rows = [[md_text(title), *cells] for title, cells in content.rounds_rows(report)]
        parts += [
            "### Rounds per cell (and why no more)",
            md_table(headers, rows, "l" + "r" * len(report.summary.targets)),
        ]
        parts.append(md_text(content.rounds_legend(report)))
    return "\n\n".join(p for p in parts if p)


def _host_cost(report: Report, charts: Mapping[str, str]) -> str:
    """Study S1's view (report/costview.py): per case, what it reached and what it cost the host."""
    cases = costview.cost_cases(report)
    if not cases:
        return ""
    parts = ["## Host cost per case (study S1)", md_text(costview.section_intro())]
    for case in cases:
        headers, body = costview.case_table(report, case)
        rows = [[md_text(text) + _marks(marks) for text, marks in cells] for cells in body]
        parts.append(f"### {md_text(case.title)}")
        parts.append(md_table([md_text(h) for h in headers], rows, "l" + "r" * (len(headers) - 1)))
        parts.append(_image(charts, case.key, f"{case.title}: throughput, host CPU and memory per target"))
    requests = costview.requests_group(report)
    if requests is not None:
        parts.append(_image(charts, bars_key(requests), "nginx requests/s per target"))
    return "\n\n".join(p for p in parts if p)


def value_text(report: Report, row: Row, target: str, most: int = 0) -> str:
    """``1.08 GB/s ±42% [2,3]``; ``failed 3/3 [4]``; ``(n=2)`` when a cell has fewer samples."""
    cell: Cell = row.cells[target]
    marks = _marks(report.cell_marks(row, target))
    if cell.summary is None:
        return _failed(cell) + marks
    text = format_value(cell.summary.median, row.metric)
    spread = format_spread(cell)
    if spread:
        text += f" {spread}"
    if cell.summary.n < most:
        text += f" (n={cell.summary.n})"
    if cell.failed:
        text += f", {cell.failed} failed"
    return text + marks


def _image(charts: Mapping[str, str], key: str, alt: str) -> str:
    path = charts.get(key)
    return f"![{md_text(alt)}]({path})" if path else ""


def _column_marks(report: Report, rows: Sequence[Row], target: str) -> list[int]:
    return sorted({n for row in rows for n in report.measurement_marks(row.cells[target])})


def _percentiles(report: Report, charts: Mapping[str, str]) -> str:
    if not report.percentiles:
        return ""
    parts = ["## Latency percentiles"]
    for curve in report.percentiles:
        parts.append(f"### {md_text(curve.title)}: {curve.direction} latency (lower is better)")
        parts.append(_percentile_table(report, curve))
        parts.append(_image(charts, percentile_key(curve), f"{curve.title}: {curve.direction} latency percentiles"))
    return "\n\n".join(p for p in parts if p)


def _percentile_table(report: Report, curve: PercentileCurve) -> str:
    targets = report.summary.targets
    headers = ["percentile"] + [
        md_text(column_heading(report, t)) + _marks(_column_marks(report, curve.rows, t)) for t in targets
    ]
    rows = []
    for percentile, row in zip(curve.percentiles, curve.rows, strict=True):
        cells = [row.cells[t] for t in targets]
        rows.append([f"p{percentile:g}"] + [format_seconds(c.summary.median) if c.summary else "–" for c in cells])
    return md_table(headers, rows, "l" + "r" * len(targets))


def _sweeps(report: Report, charts: Mapping[str, str]) -> str:
    """One table and one chart per sweep, one unit each; a table per target and a heat map per grid."""
    if not report.sweeps and not report.grids:
        return ""
    parts = ["## Sweeps"]
    for i, sweep in enumerate(report.sweeps, 1):
        parts.append(f"### {md_text(sweeptext.heading(sweep))}")
        parts.append(md_text(sweeptext.explanation(sweep)))
        parts.append(_sweep_table(report, sweep))
        parts.append(_image(charts, sweep_key(i, sweep), sweeptext.heading(sweep)))
    for i, grid in enumerate(report.grids, 1):
        parts.append(f"### {md_text(sweeptext.grid_heading(grid))}")
        parts.append(md_text(sweeptext.grid_explanation(grid)))
        for target in report.summary.targets:
            parts.append(_sweep_grid_table(report, grid, target))
        parts.append(_image(charts, grid_key(i, grid), sweeptext.grid_heading(grid)))
    return "\n\n".join(p for p in parts if p)


def _sweep_table(report: Report, sweep: Sweep) -> str:
    targets = report.summary.targets
    named = not sweep.generated  # a job file's own section names say which point is which
    headers = [md_text(sweeptext.option_label(sweep.option)), *(["workload"] if named else [])]
    headers += [md_text(column_heading(report, t)) + _marks(_column_marks(report, sweep.rows, t)) for t in targets]
    rows = []
    for index, (value, row) in enumerate(zip(sweep.values, sweep.rows, strict=True)):
        cells = [
            sweeptext.point_text(row.cells[t], sweep.unit[0]) + sweeptext.point_marks(sweep, index, t) for t in targets
        ]
        rows.append([md_text(value), *([md_text(row.workload)] if named else []), *cells])
    blank = [""] if named else []
    rows.append([f"**{sweeptext.PEAK_MARK} optimum**", *blank, *(sweeptext.optimum_text(sweep, t) for t in targets)])
    rows.append([f"**{sweeptext.KNEE_MARK} knee**", *blank, *(sweeptext.knee_text(sweep, t) for t in targets)])
    return md_table(headers, rows, "l" + "l" * len(blank) + "r" * len(targets))


def _sweep_grid_table(report: Report, grid: SweepGrid, target: str) -> str:
    """Rows: the first swept option; columns: the second; the target's best point starred."""
    corner = f"{md_text(column_heading(report, target))}: {grid.row_option} ↓ {grid.column_option} →"
    headers = [corner, *(md_text(v) for v in grid.column_values)]
    rows = []
    for i, value in enumerate(grid.row_values):
        cells = []
        for j in range(len(grid.column_values)):
            row = grid.cells.get((i, j))
            if row is None:
                cells.append("")
                continue
            text = sweeptext.point_text(row.cells[target], grid.unit[0])
            cells.append(text + (f" {sweeptext.PEAK_MARK}" if grid.best.get(target) == (i, j) else ""))
        rows.append([md_text(value), *cells])
    return md_table(headers, rows, "l" + "r" * len(grid.column_values))


# --- environment ------------------------------------------------------------------------------------


def _environment(report: Report) -> str:
    parts = ["## Environment", "### Hosts", _hosts_table(report), "### Runs", _runs_list(report)]
    parts += ["### Targets", _targets_table(report)]
    return "\n\n".join(parts)


def _methodology(report: Report) -> str:
    lines = "\n".join(f"- {md_text(line)}" for line in content.methodology(report))
    return "\n\n".join(["## Methodology", lines, "### Workloads", _workloads_table(report)])


def _hosts_table(report: Report) -> str:
    rows = []
    for name, host in content.run_hosts(report).items():
        rows.append(
            [
                md_text(name),
                md_text(host.get("os", "?")),
                md_text(host.get("cpu_model", "?")),
                str(host.get("cpu_count", "?")),
                format_bytes(float(host.get("ram_bytes") or 0)),
                md_text(host.get("fio_version") or "?"),
                md_text(host.get("mountbench_version", "?")),
            ]
        )
    return md_table(["host", "OS and kernel", "CPU", "CPUs", "RAM", "fio", "mountbench"], rows, "lllrrll")


def _runs_list(report: Report) -> str:
    lines = []
    for run in report.runs:
        facts = content.run_facts(run)
        caches = ", ".join(
            f"{action} before {count} sample{'s' if count != 1 else ''}" for action, count in content.cache_actions(run)
        )
        lines.append(
            f"- {md_code(run.id)} on {md_text(content.host_of_run(report, run.id))}, started {_when(run.created_at)}, "
            f"{md_text(run.status)}: {md_code(run.command)}; {md_text('; '.join(facts))}. "
            f"Caches: {md_text(caches or 'no samples')}."
        )
    return "\n".join(lines)


def _targets_table(report: Report) -> str:
    rows = []
    for column in report.columns:
        info = column.info
        if info is None:
            rows.append(
                [md_text(column.label), md_text(column.host), md_code(column.path), "not inspected", "", "", "", ""]
            )
            continue
        direct = "accepted" if info.odirect else f"refused ({info.odirect_detail})"
        rows.append(
            [
                md_text(column.label),
                md_text(column.host),
                md_code(column.path),
                md_text(info.fstype),
                md_code(info.mount_source),
                md_code(info.mount_options),
                md_text(direct),
                f"{format_bytes(info.free_bytes)} of {format_bytes(info.total_bytes)}",
            ]
        )
    headers = ["column", "host", "path", "filesystem", "mount source", "mount options", "O_DIRECT", "free"]
    return md_table(headers, rows, "lllllllr")


def _workloads_table(report: Report) -> str:
    rows = [
        [md_text(w.name), md_text(w.title), md_text(w.kind), md_code(content.workload_summary(w)), md_text(w.source)]
        for w in content.all_workloads(report)
    ]
    return md_table(["workload", "title", "engine", "settings", "from"], rows)


def _notes(report: Report) -> str:
    if not report.notes:
        return ""
    return "## Notes\n\n" + "\n".join(
        f'{i}. <a id="note-{i}"></a>{md_text(text)}' for i, text in enumerate(report.notes, 1)
    )
