"""`mountbench history` as people read it: per storage, which runs are comparable, the steps between runs
the data support, and per workload every run's median and interval: on the terminal (tables within
80 columns) and as one self-contained HTML page with the chart (report/history_chart.py).

Pure: Histories in, renderables and text out.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from jinja2 import Environment
from markupsafe import Markup
from rich.text import Text

from mountbench import __version__
from mountbench.analysis.metrics import describe
from mountbench.analysis.overtime import ALPHA, MIN_RUNS, History, Point, Series, Step
from mountbench.blocks.table import CellView, Column, RichLayout, TableView
from mountbench.blocks.to_terminal import rich_table
from mountbench.model import DEFAULT_PRECISION
from mountbench.report.cells import format_value
from mountbench.report.history_chart import history_chart, step_words


def when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def _short_when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%m-%d %H:%M")


# --- what every format says ------------------------------------------------------------------------


def heading(history: History) -> str:
    runs = history.runs
    span = f"{when(runs[0][1])} to {when(runs[-1][1])}" if len(runs) > 1 else when(runs[0][1])
    return f"History of {history.storage.text}: {len(runs)} run{'s' if len(runs) != 1 else ''}, {span}"


def labels_line(history: History) -> str:
    """'labelled a (runs 1-4), b (runs 5-10)' when the target was renamed; '' when it kept one label."""
    spans: list[tuple[str, int, int]] = []
    for index, (_, _, label) in enumerate(history.runs, 1):
        if spans and spans[-1][0] == label:
            spans[-1] = (label, spans[-1][1], index)
        else:
            spans.append((label, index, index))
    if len(spans) < 2:
        return ""
    said = ", ".join(f"{label} ({_runs(first, last)})" for label, first, last in spans)
    return f"labelled {said}: matched by path and filesystem, not by label"


def _runs(first: int, last: int) -> str:
    return f"run {first}" if first == last else f"runs {first}–{last}"


def comparability(history: History) -> list[str]:
    """Which runs can be compared, and where that stops (a cut: a new segment)."""
    if not history.cuts:
        return [f"comparable: all {len(history.runs)} runs (one machine, one fio, the same file state; a workload "
                "whose options changed starts a new segment of its own)"]  # fmt: skip
    lines = [f"not comparable across {len(history.cuts)} cut{'s' if len(history.cuts) > 1 else ''} (no line drawn, "
             "no step looked for across one):"]  # fmt: skip
    for cut in history.cuts:
        lines.append(f"  before run {cut.index + 1}: " + "; ".join(d.text for d in cut.differences))
    return lines


def notes(history: History) -> list[str]:
    return [f"at run {note.index + 1} (compared across): " + "; ".join(d.text for d in note.differences)
            for note in history.notes]  # fmt: skip


def steps_lines(history: History) -> list[str]:
    """The steps, grouped by the runs they lie between."""
    tests = f"{history.tests} test{'s' if history.tests != 1 else ''}"
    family = (f"{ALPHA:.0%} family-wise over {tests}, a workload's comparable runs each (Holm); the run is the "
              "unit, each run's level variance counted")  # fmt: skip
    found: dict[int, list[tuple[Series, Step]]] = {}
    positions = {run_id: index for index, (run_id, _, _) in enumerate(history.runs)}
    for series in history.series:
        for step in series.steps:
            found.setdefault(positions[series.points[step.index].run_id], []).append((series, step))
    if not history.tests:
        return [
            f"steps the data support: none looked for (a step needs {MIN_RUNS} comparable runs of a workload on "
            f"each side, {2 * MIN_RUNS} in all; a permutation test shows one from about 8)"
        ]
    if not found:
        return [f"steps the data support: none ({family})"]
    lines = [f"steps the data support ({family}):"]
    for run_index in sorted(found):
        before = history.runs[run_index - 1][1]
        said = ", ".join(f"{s.title} {step_words(step.factor)}{_better(step.factor, s.metric)} (p {step.p_value:.2g})"
                         for s, step in found[run_index])  # fmt: skip
        lines.append(f"  between runs {run_index} and {run_index + 1} ({when(before)} → "
                     f"{when(history.runs[run_index][1])}): {said}")  # fmt: skip
    return lines


def _better(factor: float, metric: str) -> str:
    if abs(factor - 1) < DEFAULT_PRECISION / 10:
        return ""
    better = (factor > 1) == describe(metric).higher_is_better
    return " (better)" if better else " (worse)"


# --- the terminal ----------------------------------------------------------------------------------


def terminal(histories: Sequence[History]) -> list[object]:
    parts: list[object] = []
    for number, history in enumerate(histories):
        if number:
            parts.append(Text(""))
        parts.append(Text(heading(history), style="bold"))
        if number and histories[0].storage.path == history.storage.path:
            parts.append(Text("another filesystem under the same path: a series of its own", style="yellow"))
        for line in [labels_line(history), *comparability(history), *notes(history), *steps_lines(history)]:
            if line:
                parts.append(Text(line))
        for series in history.series:
            lines = series_lines(series, history)
            parts += [Text(""), Text(lines[0], style="bold"), Text(lines[1], style="dim")]
            parts += [Text(row, style="bold red" if "step:" in row else "yellow" if "──" in row else "",
                           no_wrap=True, overflow="fold") for row in lines[2:]]  # fmt: skip
    return parts


def interval_text(point: Point, metric: str) -> str:
    """'2.34–3.78 GB/s (75%)': the median's interval and what it covers; 'one sample' without one."""
    if point.level <= 0:
        return "one sample"
    info = describe(metric)
    low, high = format_value(point.low, info), format_value(point.high, info)
    low_number, _, low_unit = low.partition(" ")
    _, _, high_unit = high.partition(" ")
    shown = f"{low_number}–{high}" if low_unit and low_unit == high_unit else f"{low}–{high}"
    return f"{shown} ({point.level:.0%})"


def series_lines(series: Series, history: History) -> list[str]:
    """One workload's runs as a table of plain lines (a step or a cut is a line of its own between two
    runs), each within 80 columns for the run ids, dates and values mountbench writes."""
    info = describe(series.metric)
    positions = {run_id: index for index, (run_id, _, _) in enumerate(history.runs)}
    steps = {step.index: step for step in series.steps}
    header = ("#", "run", "when", "median", "interval")
    rows: list[tuple[str, ...] | str] = []
    for index, point in enumerate(series.points):
        if index and point.segment != series.points[index - 1].segment:
            rows.append("── not comparable with the runs above: a new segment ──")
        if index in steps:
            step = steps[index]
            rows.append(f"── step: {step_words(step.factor)}{_better(step.factor, series.metric)} from here "
                        f"(p {step.p_value:.2g}) ──")  # fmt: skip
        rows.append((str(positions[point.run_id] + 1), point.run_id, _short_when(point.created_at),
                     format_value(point.median, info), interval_text(point, series.metric)))  # fmt: skip
    cells = [header, *(row for row in rows if isinstance(row, tuple))]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    right = (True, False, False, True, False)

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)).rstrip()

    lines = [f"{series.title} · {info.label}", line(header)]
    lines += [line(row) if isinstance(row, tuple) else " " * (widths[0] + 2) + row for row in rows]
    return lines


@dataclass(frozen=True)
class Listed:
    """A storage with stored runs, for the listing `history` gives without a target."""

    path: str
    filesystem: str
    runs: int
    last: float
    labels: tuple[str, ...]


def listing(found: Sequence[Listed]) -> list[object]:
    if not found:
        return [Text("no runs stored yet: start with 'mountbench run'")]
    rows = [[CellView(item.path), CellView(item.filesystem), CellView(str(item.runs)), CellView(when(item.last)),
             CellView(", ".join(item.labels))] for item in found]  # fmt: skip
    view = TableView("storage", "Storage with stored runs ('mountbench history PATH' shows one)",
                     ["path", "filesystem", "runs", "last run", "labels"], rows, align="llrll")  # fmt: skip
    return [rich_table(view, layout=LISTING)]


LISTING = RichLayout(box="SIMPLE_HEAD", pad_edge=False, overflow="fold", columns=(
    (0, Column(ratio=3)), (1, Column(ratio=2)), (2, Column(no_wrap=True, overflow="ellipsis")),
    (3, Column(no_wrap=True, overflow="ellipsis")),
    (4, Column(ratio=2))))  # fmt: skip


# --- the page --------------------------------------------------------------------------------------

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{ title }}</title>
<style>
  :root { --ink: #1d1d1f; --muted: #5a5a5f; --rule: #d0d0d5; --head: #f2f2f5; --page: #ffffff;
          --better: #0b6e3b; --worse: #a3261b; --mark: #7a4b00; color-scheme: light dark; }
  @media screen and (prefers-color-scheme: dark) {
    :root { --ink: #e6e6e9; --muted: #a6a6ad; --rule: #44444b; --head: #26262b; --page: #161618;
            --better: #5fd08e; --worse: #ff8a7a; --mark: #e0b060; }
  }
  body { font: 15px/1.45 system-ui, sans-serif; color: var(--ink); background: var(--page);
         max-width: 60rem; margin: 0 auto; padding: 1rem; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; } h3 { font-size: 1rem; }
  .muted { color: var(--muted); } .worse { color: var(--worse); font-weight: 600; }
  .cut { color: var(--mark); }
  table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-variant-numeric: tabular-nums; }
  th, td { padding: .25rem .6rem; border-bottom: 1px solid var(--rule); text-align: right; }
  th { background: var(--head); } td.left, th.left { text-align: left; }
  figure { margin: 1rem 0; } svg { max-width: 100%; height: auto; }
  .chart-narrow { display: none; }
  @media (max-width: 40rem) { .chart-wide { display: none; } .chart-narrow { display: block; } }
  footer { margin-top: 3rem; color: var(--muted); font-size: .85em; }
  {{ chart_css }}
</style>
</head>
<body>
<h1>{{ title }}</h1>
{% for h in histories %}
<section>
  <h2>{{ h.heading }}</h2>
  {% if h.renamed %}<p class="muted">{{ h.renamed }}</p>{% endif %}
  {% for line in h.comparable %}<p{% if h.cut %} class="cut"{% endif %}>{{ line }}</p>{% endfor %}
  {% for line in h.notes %}<p class="muted">{{ line }}</p>{% endfor %}
  {% for line in h.steps %}<p>{{ line }}</p>{% endfor %}
  <figure class="chart">{{ h.chart }}</figure>
  {% for s in h.series %}
  <h3>{{ s.title }}</h3>
  <table>
    <tr><th>#</th><th class="left">run</th><th class="left">when</th><th>median</th><th>interval</th></tr>
    {% for row in s.rows %}
    {% if row.mark %}<tr><td></td><td class="left {{ row.css }}" colspan="4">{{ row.mark }}</td></tr>{% endif %}
    <tr><td>{{ row.number }}</td><td class="left">{{ row.run }}</td><td class="left">{{ row.when }}</td>
        <td>{{ row.median }}</td><td>{{ row.interval }}</td></tr>
    {% endfor %}
  </table>
  {% endfor %}
</section>
{% endfor %}
<footer>mountbench {{ version }} · made {{ made }} · every number from the samples stored with each run</footer>
</body>
</html>
"""


def page(histories: Sequence[History]) -> str:
    """One self-contained HTML page: every history's facts, chart and tables (charts inline, as SVG)."""
    from mountbench.report.chartkit import page_chart, page_css, page_jobs, render_all

    charts = [history_chart(h) for h in histories]
    jobs = [job for chart in charts for job in page_jobs(chart)]
    drawn = render_all(jobs)
    views, offset = [], 0
    for history, chart in zip(histories, charts, strict=True):
        count = len(page_jobs(chart))
        svg = page_chart(chart, svgs=drawn[offset : offset + count])
        offset += count
        views.append({
            "heading": heading(history), "renamed": labels_line(history), "comparable": comparability(history),
            "cut": bool(history.cuts), "notes": notes(history), "steps": steps_lines(history), "chart": Markup(svg),
            "series": [_series_view(s, history) for s in history.series],
        })  # fmt: skip
    title = "mountbench history" if len(histories) != 1 else f"mountbench history: {histories[0].storage.path}"
    environment = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    body = environment.from_string(PAGE).render(
        title=title, histories=views, version=__version__, made=when(datetime.datetime.now().timestamp()),
        chart_css=Markup("{{CHART_CSS}}"),
    )  # fmt: skip
    return body.replace("{{CHART_CSS}}", page_css(body))


def _series_view(series: Series, history: History) -> dict[str, object]:
    info = describe(series.metric)
    positions = {run_id: index for index, (run_id, _, _) in enumerate(history.runs)}
    steps = {step.index: step for step in series.steps}
    rows = []
    for index, point in enumerate(series.points):
        mark, css = "", ""
        if index and point.segment != series.points[index - 1].segment:
            mark, css = "not comparable with the runs above (a new segment)", "cut"
        if index in steps:
            mark = f"step: {step_words(steps[index].factor)}{_better(steps[index].factor, series.metric)}"
            mark += f" (p {steps[index].p_value:.2g})"
            css = "worse"
        interval = interval_text(point, series.metric)
        rows.append({"mark": mark, "css": css, "number": positions[point.run_id] + 1, "run": point.run_id,
                     "when": when(point.created_at), "median": format_value(point.median, info),
                     "interval": interval})  # fmt: skip
    return {"title": f"{series.title} · {info.label}", "rows": rows}
