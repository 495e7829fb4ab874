"""The terminal's tables, built as TableViews (tables.py) and laid out by tables.rich_table:

- the summary grid (grid.py): workloads as rows, read and write side by side per target,
  one unit per section; a non-baseline cell says "N× faster/slower" in green or red,
  "≈ same" in a neutral colour, "undecided" in yellow;
- one detail table per metric: median ±CV and the comparison with its 95% interval;
- rounds per cell, for adaptive runs.

Each is built for the console's width when it is printed (terminal_layout.Adaptive): side
by side when that fits, stacked (one line per direction; the comparison under the value)
when not, and as cards when no table fits (a long workload title, many targets, 40 columns):
each workload's title, then a line per target, wrapped between words (terminal_layout.Words),
so that no number, unit, mark or name is cut. A table's workload names never wrap.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Iterable, Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from mountbench.analysis.summary import Row
from mountbench.blocks.table import CellView, Column, RichLayout, TableView
from mountbench.blocks.to_terminal import rich_cell, rich_table
from mountbench.report import views
from mountbench.report.cells import format_spread, format_value
from mountbench.report.grid import GridSection
from mountbench.report.model import MetricGroup, Report, group_heading
from mountbench.report.phrasing import BETTER, SAME, UNDECIDED, WORSE, cell_standing
from mountbench.report.terminal_layout import Adaptive, Words, fit_columns, wrap_label, wrap_text

STYLES = {BETTER: "green", WORSE: "red", SAME: "dim", UNDECIDED: "yellow", "unknown": "yellow", "none": "dim"}
MARK_STYLE = "yellow"
# the grid's and the detail's tables: workload names bold and never wrapped
SIDE_BY_SIDE = RichLayout(title_style="italic", label_style="bold", label_no_wrap=True, no_wrap=True)
STACKED = RichLayout(title_style="italic", label_style="bold", label_no_wrap=True, overflow="fold")
ROUNDS = RichLayout(title_style="italic", overflow="fold")


def fitted(view: TableView, layout: RichLayout, width: int) -> list[Table]:
    """The view as a rich table no wider than ``width``, its columns narrowed where they can spare it and
    its cells wrapped here, between words, never inside a number and its unit or an interval (rich alone
    narrowed the widest columns below their longest word: '(0.0263–1.01×' over ')'); [] when it cannot fit."""
    headers = view.header_cells or [CellView(h) for h in view.headers]
    columns = [[rich_cell(headers[i]), *(rich_cell(row[i]) for row in view.rows)] for i in range(len(view.headers))]
    chrome = (len(columns) + 1) + 2 * len(columns)  # borders, and a space each side of every cell
    fixed = [layout.label_no_wrap if i == 0 else layout.no_wrap for i in range(len(columns))]
    widths = fit_columns(columns, fixed, width - chrome)
    if widths is None:
        return []
    wrapped = [[wrap_text(text, w) for text in cells] for cells, w in zip(columns, widths, strict=True)]
    body = zip(*(cells[1:] for cells in wrapped), strict=True)
    rows = [[CellView(text.plain, rich=text) for text in row] for row in body]
    held = TableView(view.id, view.heading, view.headers, rows, numeric_from=view.numeric_from,
                     text_from=view.text_from, align=view.align, breaks=view.breaks,
                     header_cells=[CellView(cells[0].plain, rich=cells[0]) for cells in wrapped])  # fmt: skip
    return [rich_table(held, layout=layout, widths=widths)]


def rounds_table(report: Report) -> Adaptive:
    """Adaptive runs: how many rounds each cell got and why it got no more; as cards when the
    table does not fit."""
    view = views.rounds_table(report)

    def layouts(width: int) -> list:
        labels = [_card_label(report, target) for target in report.summary.targets]
        body = [[Text(cell.text) for cell in row[1:]] for row in view.rows]
        return [*fitted(view, ROUNDS, width), _cards(view.heading, labels, [row[0].text for row in view.rows], body)]

    return Adaptive(layouts)


def _card_label(report: Report, target: str) -> Text:
    text = Text(target, style="bold")
    if target == report.summary.baseline:
        text.append(" (baseline)", style="dim")
    return text


def _cards(heading: str, labels: Sequence[Text], titles: Sequence[str], body: Sequence[Sequence[Text]]) -> Group:
    """No table fits: each workload's title, then a line per target ('disk: 1530 [2] undecided
    [3]'), wrapped between words."""
    parts: list = [Text(heading, style="italic")]
    for title, cells in zip(titles, body, strict=True):
        parts.append(Words([Text(title, style="bold")], indent=2))
        for label, cell in zip(labels, cells, strict=True):
            if cell.plain.strip(" ·"):
                parts.append(Words([label + Text(":"), cell], first_indent=2, indent=4))
    return Group(*parts)


def styled(text: Text) -> CellView:
    """A cell whose terminal text has several styles (a value, its notes, its comparison)."""
    return CellView(text.plain, rich=text)


def marks_text(numbers: Sequence[int]) -> str:
    return f" [{','.join(map(str, numbers))}]" if numbers else ""


def _header(report: Report, label: str, suffix: str = "", *, width: int = 0) -> Text:
    """The target's label (wrapped between its parts to ``width``), '(baseline)', then ``suffix``."""
    text = Text(wrap_label(label, width) if width else label, style="bold")
    if label == report.summary.baseline:
        text.append("\n(baseline)", style="dim")
    if suffix:
        text.append("\n" + suffix, style="dim")
    return text


def _widest(texts: Iterable[Text], least: int = 8) -> int:
    return max([least] + [len(line) for text in texts for line in text.plain.split("\n")])


def _value(report: Report, row: Row, target: str, *, formatted: str | None = None) -> Text:
    """The median (or why there is none) with the notes on it."""
    cell = row.cells[target]
    marks = marks_text(report.cell_marks(row, target))
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
    text.append(marks_text(report.ratio_marks(row, target)), style=MARK_STYLE)
    return text


# --- the summary grid ----------------------------------------------------------------------------


def grid_layouts(report: Report, section: GridSection, width: int) -> list[Table]:
    """Side by side (read and write under each target), then one line per direction."""
    layouts: list = []
    if len(section.directions) > 1:
        layouts.append(_grid_side_by_side(report, section))
    titles, body = _grid_lines(report, section)
    headers = [
        _header(report, target, width=_widest(r[index] for r in body))
        for index, target in enumerate(report.summary.targets)
    ]
    layouts += fitted(_view(section.heading, headers, titles, body), STACKED, width)
    labels = [_card_label(report, target) for target in report.summary.targets]
    layouts.append(_cards(section.heading, labels, titles, body))
    return layouts


def compact_grid(report: Report, width: int) -> Group:
    """`show`'s one screen (issue 48: three targets took 30 lines, the tree preset 48): a table per
    section without rules, its heading in the workload column's header, a line per workload and
    direction, each cell its median, its notes and its comparison ('923 2.88× slower'; a difference
    known by its near end as '≥4.07× slower'). A cell that makes the table wider than ``width`` puts its
    comparison under its median, and a title longer than its column wraps between words. Wider than the
    screen all the same, Adaptive takes the summary's own layouts instead."""
    return Group(*(_compact_section(report, section, width) for section in report.grid.sections))


def _compact_section(report: Report, section: GridSection, width: int) -> Table:
    targets = report.summary.targets
    titles: list[str] = []
    body: list[list[tuple[Text, Text]]] = []  # per line, per target: (median and notes, comparison)
    for line in section.lines:
        for direction in section.directions:
            row = line.row(direction)
            if row is None:
                continue
            titles.append(f"{line.title} {direction}" if direction and len(line.rows) > 1 else line.title)
            body.append([_compact_cell(report, section, row, target) for target in targets])
    one = [max([len(t)] + [_joined(cells[i]).cell_len for cells in body]) for i, t in enumerate(targets)]
    two = [max([len(t)] + [max(v.cell_len, c.cell_len) for v, c in (cells[i] for cells in body)])
           for i, t in enumerate(targets)]  # fmt: skip
    widths, room = _compact_widths(section.heading, titles, [[_joined(c).cell_len for c in cells] for cells in body],
                                   one, two, width)  # fmt: skip
    headers = [CellView(section.heading, style="italic"), *(CellView(t, style="bold") for t in targets)]
    rows = []
    for title, cells in zip(titles, body, strict=True):
        shown = [CellView(title)]
        for (value, comparison), column in zip(cells, widths, strict=True):
            joined = _joined((value, comparison))
            text = joined if joined.cell_len <= column else Text("\n").join([value, comparison])
            shown.append(CellView(text.plain, rich=text))
        rows.append(shown)
    view = TableView("compact", "", [c.text for c in headers], rows, header_cells=headers)
    columns = tuple(enumerate([Column(width=room), *(Column(width=w) for w in widths)]))
    layout = RichLayout(show_title=False, box=None, pad_edge=False, collapse_padding=True, label_style="bold",
                        no_wrap=True, columns=columns)  # fmt: skip
    return rich_table(view, layout=layout)


def _compact_widths(
    heading: str,
    titles: Sequence[str],
    lengths: Sequence[Sequence[int]],
    one: Sequence[int],
    two: Sequence[int],
    width: int,
) -> tuple[list[int], int]:
    """Each target column's width (its cells on one line, or the comparison under the median) and the workload
    column's: the choice that takes the fewest lines, its titles wrapped between words in what is left (a
    space between columns); on a tie the fewest columns of two lines."""
    least = max([8] + [len(word) for text in (heading, *titles) for word in text.split()])
    wanted = max([len(heading)] + [len(t) for t in titles])
    best: tuple[tuple[int, int], list[int], int] | None = None
    choices = (
        itertools.product((False, True), repeat=len(one))
        if len(one) <= 8
        else [(False,) * len(one), (True,) * len(one)]
    )
    for split in choices:
        widths = [b if s else a for a, b, s in zip(one, two, split, strict=True)]
        room = max(least, min(wanted, width - sum(widths) - len(widths)))
        lines = len(textwrap.wrap(heading, room)) + sum(
            max([len(textwrap.wrap(title, room)) or 1] + [2 if n > w else 1 for n, w in zip(row, widths, strict=True)])
            for title, row in zip(titles, lengths, strict=True)
        )
        key = (lines, sum(split))
        if best is None or key < best[0]:
            best = (key, widths, room)
    assert best is not None
    return best[1], best[2]


def _compact_cell(report: Report, section: GridSection, row: Row, target: str) -> tuple[Text, Text]:
    """(the median and its notes, the comparison and its notes): 'at least 4.07× slower' said '≥4.07× slower'."""
    cell = row.cells[target]
    value = _value(report, row, target, formatted=section.scale.format(cell.summary.median) if cell.summary else None)
    if target == report.summary.baseline or cell.comparison is None:
        return value, Text("")
    said = cell_standing(row, target)
    if said is None:
        return value, Text("")
    words = f"≥{said.short[len('at least ') :]}" if said.bounded else said.short
    comparison = Text(words, style=STYLES.get(said.kind, ""))
    comparison.append(marks_text(report.ratio_marks(row, target)), style=MARK_STYLE)
    return value, comparison


def _joined(cell: tuple[Text, Text]) -> Text:
    value, comparison = cell
    return Text(" ").join([value, comparison]) if comparison.plain else value


def _label_width(width: int, titles: Iterable[str], columns: int, cells: int) -> int:
    """How wide a target's label may be in a table ``width`` wide: its share of what the
    workload column leaves, never narrower than the column's cells."""
    spare = width - max((len(t) for t in titles), default=8) - 3 * (columns + 1) - 1
    return max(cells, spare // max(1, columns))


def _view(heading: str, headers: Sequence[Text], titles: Sequence[str], body: Sequence[Sequence[Text]]) -> TableView:
    """Workloads down (``titles``), one column per header, every cell styled."""
    header_cells = [CellView("workload"), *map(styled, headers)]
    rows = [[CellView(title), *map(styled, cells)] for title, cells in zip(titles, body, strict=True)]
    return TableView("terminal", heading, [h.text for h in header_cells], rows, header_cells=header_cells)


def _grid_side_by_side(report: Report, section: GridSection) -> Table:
    """One column per target, its label over both of its directions (read, write) and the
    directions laid out inside it, aligned: rich has no spanning header, so each target's
    cells are joined line by line at fixed widths."""
    targets = report.summary.targets
    gap = "  "
    headers = []
    joined: list[list[Text]] = [[] for _ in section.lines]
    for target in targets:
        cells = [
            [
                _grid_cell(report, section, row, target) if (row := line.row(d)) else Text("·", style="dim")
                for d in section.directions
            ]
            for line in section.lines
        ]
        widths = [
            max(_widest((by_direction[i] for by_direction in cells), least=1), len(direction))
            for i, direction in enumerate(section.directions)
        ]
        inner = sum(widths) + len(gap) * (len(widths) - 1)
        header = _header(report, target, width=inner)
        header.append("\n" + gap.join(d.rjust(w) for d, w in zip(section.directions, widths, strict=True)), style="dim")
        headers.append(header)
        for index, by_direction in enumerate(cells):
            joined[index].append(_side_by_side(by_direction, widths, gap))
    view = _view(section.heading, headers, [line.title for line in section.lines], joined)
    return rich_table(view, layout=SIDE_BY_SIDE)


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


def _grid_lines(report: Report, section: GridSection) -> tuple[list[str], list[list[Text]]]:
    """One line per workload and direction: its title and each target's cell."""
    titles: list[str] = []
    body: list[list[Text]] = []
    for line in section.lines:
        for direction in section.directions:
            row = line.row(direction)
            if row is None:
                continue
            titles.append(f"{line.title} {direction}" if direction and len(line.rows) > 1 else line.title)
            body.append([_grid_cell(report, section, row, t) for t in report.summary.targets])
    return titles, body


def _grid_cell(report: Report, section: GridSection, row: Row, target: str) -> Text:
    cell = row.cells[target]
    formatted = section.scale.format(cell.summary.median) if cell.summary else None
    text = _value(report, row, target, formatted=formatted)
    if target != report.summary.baseline and cell.comparison is not None:
        text.append("\n")
        text.append_text(_comparison(report, row, target, interval=False))
    return text


# --- the detail: one table per metric ----------------------------------------------------------------


def detail_layouts(report: Report, group: MetricGroup, width: int) -> list[Table]:
    """Comparisons in columns of their own; else under each value; else (three targets at 80
    columns) the spread and its notes on a line of their own, so that '±13%' and '[1]' never wrap."""
    body = _detail_body(report, group, wide=False)
    labels = [_card_label(report, target) for target in report.summary.targets]
    return [
        *_detail_table(report, group, width, wide=True),
        *_detail_table(report, group, width, wide=False),
        *_detail_table(report, group, width, wide=False, tall=True),
        _cards(group_heading(group), labels, [row.title for row in group.rows], body),
    ]


def _columns(report: Report, wide: bool) -> list[tuple[str, bool]]:
    """(target, is its comparison column) for each column of a detail table."""
    columns: list[tuple[str, bool]] = []
    for target in report.summary.targets:
        columns.append((target, False))
        if wide and target != report.summary.baseline:
            columns.append((target, True))
    return columns


def _detail_table(report: Report, group: MetricGroup, width: int, *, wide: bool, tall: bool = False) -> list[Table]:
    columns = _columns(report, wide)
    body = _detail_body(report, group, wide=wide, tall=tall)
    titles = [row.title for row in group.rows]
    headers = []
    for index, (target, is_comparison) in enumerate(columns):
        room = _label_width(width, titles, len(columns), _widest(r[index] for r in body))
        headers.append(Text("vs baseline", style="dim") if is_comparison else _header(report, target, width=room))
    return fitted(_view(group_heading(group), headers, titles, body), STACKED, width)


def _detail_body(report: Report, group: MetricGroup, *, wide: bool, tall: bool = False) -> list[list[Text]]:
    baseline = report.summary.baseline
    columns = _columns(report, wide)
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
    return body


def _tall_value(report: Report, row: Row, target: str) -> Text:
    """'1.34 GB/s' over '±6% [2]': the value, then its spread and notes on their own line."""
    cell = row.cells[target]
    if cell.summary is None:
        return _value(report, row, target)
    text = Text(format_value(cell.summary.median, row.metric))
    spread = format_spread(cell)
    marks = marks_text(report.cell_marks(row, target)).strip()
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
