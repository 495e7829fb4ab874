"""The terminal report: the answer first, then the detail, in the width the terminal has.

1. one headline per compared target ("disk is 6.20× slower than ram in 5 of 6 workloads…");
2. the summary grid (grid.py): workloads as rows, read and write side by side per target,
   one unit per section; a non-baseline cell says "N× faster/slower" in green or red,
   "≈ same" in a neutral colour, "undecided" in yellow;
3. one table per metric: median ±CV and the comparison with its 95% interval;
4. the notes, a hint at the commands that show more, and how the run was made.

Every table is laid out for the console's width when it is printed: side by side when
that fits, stacked (one line per direction; the comparison under the value) when not.
Workload names never wrap; run facts wrap between fields, not inside one.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from mountbench.analysis.metrics import describe
from mountbench.analysis.summary import Row
from mountbench.model import QUALITY_CODES, RunData
from mountbench.report.cells import format_spread, format_value
from mountbench.report.grid import GridSection
from mountbench.report.methodology import run_facts
from mountbench.report.model import MetricGroup, Report, group_heading
from mountbench.report.phrasing import (
    BETTER,
    SAME,
    SAME_LEGEND,
    UNDECIDED,
    UNDECIDED_LEGEND,
    WORSE,
    cell_standing,
)
from mountbench.report.rounds import rounds_legend, rounds_rows
from mountbench.report.sections import SECTIONS, Options
from mountbench.units import format_bytes, format_seconds

STYLES = {BETTER: "green", WORSE: "red", SAME: "dim", UNDECIDED: "yellow", "unknown": "yellow", "none": "dim"}
MARK_STYLE = "yellow"


def render_run(report: Report, *, per_client: bool = False) -> list:
    """Everything `run`, `show` and `lab` print after a run: the report, then each section's part."""
    options = Options(per_client=per_client)
    return [render_report(report), *(part for section in SECTIONS for part in section.terminal(report, options))]


def render_report(report: Report) -> Group:
    """Everything `run`, `show` and `lab` print after a run."""
    parts: list = [_title(report)]
    parts += [
        Fields(["▶", *h.text.split()], style=STYLES.get(h.kind, ""), indent=2, separator="") for h in report.headlines
    ]
    parts += [Fields(["⚠", *w.split()], style="yellow", indent=2, separator="") for w in report.warnings]
    if report.grid.sections:
        parts.append(Text(""))
        parts.append(Text(f"Summary ({_unit_phrase(report)}):", style="bold"))
        parts += [Adaptive(partial(_grid_layouts, report, section)) for section in report.grid.sections]
    parts.append(Text(""))
    parts.append(Text("Detail:", style="bold"))
    parts += [Adaptive(partial(_detail_layouts, report, group)) for group in report.groups]
    if report.adaptive:
        parts += _rounds(report)
    parts.append(_notes(report))
    parts.append(Fields(_legend(report), style="dim", separator=" ·"))
    parts += environment_fields(report.runs, style="dim")
    return Group(*parts)


# --- pieces --------------------------------------------------------------------------------


def _rounds(report: Report) -> list:
    """Adaptive runs: how many rounds each cell got and why it got no more."""
    table = _grid_table("Rounds per cell (and why no more)")
    table.add_column("workload", overflow="fold")
    for target in report.summary.targets:
        table.add_column(target, justify="right", overflow="fold")
    for title, cells in rounds_rows(report):
        table.add_row(title, *cells)
    return [Text(""), table, Fields(rounds_legend(report).split("; "), style="dim")]


def _title(report: Report) -> Text:
    statuses = {run.status for run in report.runs}
    status = "" if statuses == {"complete"} else f" [{', '.join(sorted(statuses))}]"
    text = Text(f"mountbench run {', '.join(run.id for run in report.runs)}{status}", style="bold")
    text.append(f" · baseline {report.summary.baseline}", style="dim")
    return text


def _unit_phrase(report: Report) -> str:
    if report.grid.unit == "auto":
        return "medians; --unit MB/s, IOPS or us for one unit throughout"
    return f"--unit {report.grid.unit}"


def _legend(report: Report) -> list[str]:
    ids = report.runs[0].id if len(report.runs) == 1 else "RUN"
    return [
        "median ±CV",
        "N× faster/slower than the baseline, 95% CI",
        SAME_LEGEND,
        UNDECIDED_LEGEND,
        "[n]: notes",
        f"every sample: mountbench show {ids} --samples",
        f"charts: mountbench report {ids} --out report.html",
    ]


def _marks(numbers: Sequence[int]) -> str:
    return f" [{','.join(map(str, numbers))}]" if numbers else ""


def _header(report: Report, label: str, suffix: str = "", *, width: int = 0) -> Text:
    """The target's label (wrapped between its parts to ``width``), '(baseline)', then ``suffix``."""
    text = Text(wrap_label(label, width) if width else label, style="bold")
    if label == report.summary.baseline:
        text.append("\n(baseline)", style="dim")
    if suffix:
        text.append("\n" + suffix, style="dim")
    return text


_BREAK_AFTER = "/:@=,_-. "


def wrap_label(label: str, width: int) -> str:
    """'tmpfs:/var/tmp/glance-shm' or 'glance-shm (tmpfs)' in lines of at most ``width``, broken
    after / : @ = , _ - . or a space where it can (a part longer than the width is cut; never a
    word of an automatic label: the width is at least its longest word)."""
    whole = [word for word in label.split() if not any(char in word for char in _BREAK_AFTER)]
    width = max(width, 6, *(len(word) for word in whole))  # '(tmpfs)' is never cut
    parts: list[str] = []
    current = ""
    for char in label:
        current += char
        if char in _BREAK_AFTER:
            parts.append(current)
            current = ""
    if current:
        parts.append(current)
    lines: list[str] = []
    line = ""
    parts = [p for p in parts if p]
    for part in parts:
        while len(part) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(part[:width])
            part = part[width:]
        if len(line) + len(part) > width and line:
            lines.append(line)
            line = ""
        line += part
    if line:
        lines.append(line)
    return "\n".join(line.rstrip() for line in lines)


def _widest(texts: Iterable[Text], least: int = 8) -> int:
    return max([least] + [len(line) for text in texts for line in text.plain.split("\n")])


def _value(report: Report, row: Row, target: str, *, formatted: str | None = None) -> Text:
    """The median (or why there is none) with the notes on it."""
    cell = row.cells[target]
    marks = _marks(report.cell_marks(row, target))
    if cell.summary is None:
        text = Text(f"✗ failed {cell.failed}/{cell.failed}" if cell.failed else "–", style="red" if cell.failed else "")
    else:
        text = Text(formatted if formatted is not None else format_value(cell.summary.median, row.metric))
        if cell.failed:
            text.append(f" ({cell.failed} failed)", style="red")
    text.append(marks, style=MARK_STYLE)
    return text


def _comparison(report: Report, row: Row, target: str, *, interval: bool, split: bool = False) -> Text:
    """'3.53× slower (2.62–4.75×) [1]' (``split``: the interval on a line of its own), or '3.53× slower'."""
    said = cell_standing(row, target)
    if said is None:
        return Text("")
    words = said.text if interval else said.short
    if split and said.text.startswith(said.short + " ("):
        interval = said.text[len(said.short) + 1 :]
        if len(interval) > 16:  # '(0.00803–109×)' whole; a longer one breaks after its dash, not in a number
            interval = interval.replace("–", "–\n", 1)
        words = said.short + "\n" + interval
    text = Text(words, style=STYLES.get(said.kind, ""))
    text.append(_marks(report.ratio_marks(row, target)), style=MARK_STYLE)
    return text


def _notes(report: Report) -> Text:
    quality = _quality_notes(report)
    text = Text()
    for number, note in enumerate(report.notes, 1):
        if number > 1:
            text.append("\n")
        text.append(f"[{number}] ", style=MARK_STYLE)
        text.append(note, style="magenta" if number in quality else MARK_STYLE)
    return text


def _quality_notes(report: Report) -> set[int]:
    """Numbers of notes about the samples' statistics (drift, outliers…), not how they were measured."""
    rows = report.grid.rows() + [row for group in report.groups for row in group.rows]
    found = set()
    for row in rows:
        for cell in row.cells.values():
            for caveat in cell.caveats:
                if caveat.code in QUALITY_CODES and caveat.text in report.notes:
                    found.add(report.notes.index(caveat.text) + 1)
    return found


# --- the summary grid ----------------------------------------------------------------------------


def _grid_layouts(report: Report, section: GridSection, width: int) -> list[Table]:
    """Side by side (read and write under each target), then one line per direction."""
    layouts = []
    if len(section.directions) > 1:
        layouts.append(_grid_side_by_side(report, section, width))
    layouts.append(_grid_stacked(report, section, width))
    return layouts


def _label_width(width: int, titles: Iterable[str], columns: int, cells: int) -> int:
    """How wide a target's label may be in a table ``width`` wide: its share of what the
    workload column leaves, never narrower than the column's cells."""
    spare = width - max((len(t) for t in titles), default=8) - 3 * (columns + 1) - 1
    return max(cells, spare // max(1, columns))


def _grid_table(title: str) -> Table:
    return Table(title=title, title_justify="left", title_style="italic", header_style="bold", padding=(0, 1))


def _grid_side_by_side(report: Report, section: GridSection, width: int) -> Table:
    """One column per target, its label over both of its directions (read, write) and the
    directions laid out inside it, aligned: rich has no spanning header, so each target's
    cells are joined line by line at fixed widths."""
    table = _grid_table(section.heading)
    table.add_column("workload", no_wrap=True, style="bold")
    targets = report.summary.targets
    gap = "  "
    body = {
        target: [
            [
                _grid_cell(report, section, row, target) if (row := line.row(d)) else Text("·", style="dim")
                for d in section.directions
            ]
            for line in section.lines
        ]
        for target in targets
    }
    for target in targets:
        widths = [
            max(_widest((cells[i] for cells in body[target]), least=1), len(direction))
            for i, direction in enumerate(section.directions)
        ]
        inner = sum(widths) + len(gap) * (len(widths) - 1)
        header = _header(report, target, width=inner)
        header.append("\n" + gap.join(d.rjust(w) for d, w in zip(section.directions, widths, strict=True)), style="dim")
        table.add_column(header, justify="right", no_wrap=True)
        for cells in body[target]:
            cells[:] = [_side_by_side(cells, widths, gap)]
    for index, line in enumerate(section.lines):
        table.add_row(line.title, *(body[target][index][0] for target in targets))
    return table


def _side_by_side(cells: Sequence[Text], widths: Sequence[int], gap: str) -> Text:
    """Texts of several lines next to each other, each right-aligned in its width."""
    split = [cell.split("\n") for cell in cells]
    height = max(len(lines) for lines in split)
    out = Text()
    for number in range(height):
        if number:
            out.append("\n")
        for column, (lines, width) in enumerate(zip(split, widths, strict=True)):
            piece = lines[number] if number < len(lines) else Text("")
            out.append((gap if column else "") + " " * (width - len(piece.plain)))
            out.append_text(piece)
    return out


def _grid_stacked(report: Report, section: GridSection, width: int) -> Table:
    titles: list[str] = []
    body: list[list[Text]] = []
    for line in section.lines:
        for direction in section.directions:
            row = line.row(direction)
            if row is None:
                continue
            titles.append(f"{line.title} {direction}" if direction and len(line.rows) > 1 else line.title)
            body.append([_grid_cell(report, section, row, t) for t in report.summary.targets])
    table = _grid_table(section.heading)
    table.add_column("workload", no_wrap=True, style="bold")
    for index, target in enumerate(report.summary.targets):
        table.add_column(
            _header(report, target, width=_widest(r[index] for r in body)), justify="right", overflow="fold"
        )
    for title, cells in zip(titles, body, strict=True):
        table.add_row(title, *cells)
    return table


def _grid_cell(report: Report, section: GridSection, row: Row, target: str) -> Text:
    cell = row.cells[target]
    formatted = section.scale.format(cell.summary.median) if cell.summary else None
    text = _value(report, row, target, formatted=formatted)
    if target != report.summary.baseline and cell.comparison is not None:
        text.append("\n")
        text.append_text(_comparison(report, row, target, interval=False))
    return text


# --- the detail: one table per metric ----------------------------------------------------------------


def _detail_layouts(report: Report, group: MetricGroup, width: int) -> list[Table]:
    """Comparisons in columns of their own; else under each value; else (three targets at 80
    columns) the spread and its notes on a line of their own, so that '±13%' and '[1]' never wrap."""
    return [
        _detail_table(report, group, width, wide=True),
        _detail_table(report, group, width, wide=False),
        _detail_table(report, group, width, wide=False, tall=True),
    ]


def _detail_table(report: Report, group: MetricGroup, width: int, *, wide: bool, tall: bool = False) -> Table:
    baseline = report.summary.baseline
    columns: list[tuple[str, bool]] = []  # (target, is its comparison column)
    for target in report.summary.targets:
        columns.append((target, False))
        if wide and target != baseline:
            columns.append((target, True))
    body = []
    for row in group.rows:
        cells: list[Text] = []
        for target, is_comparison in columns:
            value = (
                _tall_value(report, row, target)
                if tall
                else _value(report, row, target, formatted=_with_spread(row, target))
            )
            comparison = _comparison(report, row, target, interval=True, split=tall) if target != baseline else Text("")
            if is_comparison:
                cells.append(comparison)
            elif wide or not comparison.plain:
                cells.append(value)
            else:
                cells.append(Text("\n").join([value, comparison]))
        body.append(cells)
    table = Table(
        title=group_heading(group), title_justify="left", title_style="italic", header_style="bold",
        padding=(0, 1),
    )  # fmt: skip
    table.add_column("workload", no_wrap=True, style="bold")
    titles = [row.title for row in group.rows]
    for index, (target, is_comparison) in enumerate(columns):
        room = _label_width(width, titles, len(columns), _widest(r[index] for r in body))
        header = Text("vs baseline", style="dim") if is_comparison else _header(report, target, width=room)
        table.add_column(header, justify="right", overflow="fold")
    for row, cells in zip(group.rows, body, strict=True):
        table.add_row(row.title, *cells)
    return table


def _tall_value(report: Report, row: Row, target: str) -> Text:
    """'1.34 GB/s' over '±6% [2]': the value, then its spread and notes on their own line."""
    cell = row.cells[target]
    if cell.summary is None:
        return _value(report, row, target)
    text = Text(format_value(cell.summary.median, row.metric))
    spread = format_spread(cell)
    marks = _marks(report.cell_marks(row, target)).strip()
    failed = f"({cell.failed} failed)" if cell.failed else ""
    if spread or marks or failed:
        text.append("\n" + " ".join(part for part in (spread, failed) if part))
        text.append((" " if spread or failed else "") + marks, style=MARK_STYLE)
    return text


def _with_spread(row: Row, target: str) -> str | None:
    cell = row.cells[target]
    if cell.summary is None:
        return None
    spread = format_spread(cell)
    return format_value(cell.summary.median, row.metric) + (f" {spread}" if spread else "")


# --- width-aware layout ----------------------------------------------------------------------------


class Adaptive:
    """The first of several layouts, built for the width it is given, that fits (else the last)."""

    def __init__(self, build: Callable[[int], Sequence[Table]]) -> None:
        self.build = build

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        layouts = list(self.build(options.max_width))
        unbounded = options.update_width(10_000)
        for layout in layouts[:-1]:
            if Measurement.get(console, unbounded, layout).maximum <= options.max_width:
                yield layout
                return
        yield layouts[-1]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, list(self.build(options.max_width))[-1])


class Fields:
    """Short phrases joined by ``separator`` and wrapped between them, never inside one
    (a phrase wider than a whole line wraps between its words); continuation lines are indented."""

    def __init__(
        self, fields: Sequence[str], *, style: str = "", indent: int = 4, first_indent: int = 0, separator: str = ";"
    ) -> None:
        self.fields = [f for f in fields if f]
        self.style = style
        self.indent = indent
        self.first_indent = first_indent
        self.separator = separator

    def lines(self, width: int) -> list[str]:
        lines: list[str] = []
        current = " " * self.first_indent
        fresh = True
        for i, field in enumerate(self.fields):
            piece = field + (self.separator if i < len(self.fields) - 1 else "")
            candidate = current + ("" if fresh else " ") + piece
            if len(candidate) <= width:
                current, fresh = candidate, False
                continue
            if not fresh:
                lines.append(current)
                current = " " * self.indent
            # the piece starts a line; wider than the line, it wraps between its words
            wrapped = textwrap.wrap(piece, width - self.indent, break_on_hyphens=False) or [piece]
            lines += [current + wrapped[0]] + [" " * self.indent + more for more in wrapped[1:-1]]
            current = (" " * self.indent + wrapped[-1]) if len(wrapped) > 1 else lines.pop()
            fresh = False
        lines.append(current)
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines(options.max_width):
            yield Text(line, style=self.style, overflow="fold")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


def environment_fields(runs: Iterable[RunData], *, style: str = "") -> list[Fields]:
    """How each run was made, and each target: phrases that wrap between fields."""
    found = []
    for run in runs:
        host = run.host
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created_at)) if run.created_at else "?"
        fields = [
            f"run {run.id} on {host.get('hostname', '?')} at {when}",
            str(host.get("os", "?")),
            str(host.get("cpu_model", "?")),
            f"{host.get('cpu_count', '?')} CPUs",
            f"{format_bytes(host.get('ram_bytes', 0))} RAM",
            str(host.get("fio_version", "")),
            f"mountbench {host.get('mountbench_version', '?')}",
            *run_facts(run),
        ]
        found.append(Fields(fields, style=style))
        for record in run.targets:
            info = record.info
            if info is None:
                continue
            direct = "O_DIRECT ok" if info.odirect else f"O_DIRECT refused ({info.odirect_detail})"
            found.append(
                Fields(
                    [
                        f"{record.target.label}: {record.target.path}",
                        f"{info.fstype} from {info.mount_source}",
                        f"options {info.mount_options}",
                        direct,
                        f"{format_bytes(info.free_bytes)} free",
                    ],
                    style=style,
                    first_indent=2,
                    indent=6,
                )
            )
    return found


# --- show RUN --samples -------------------------------------------------------------------------------


def render_samples(run: RunData) -> Table:
    """Every sample of a run in the order it was taken: what 'show RUN --samples' prints, so
    outliers, drift and failures can be seen sample by sample."""
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
