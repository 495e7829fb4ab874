"""Terminal layout that fits the width it is given: the first of several table layouts that
fits (Adaptive), phrases wrapped between fields and never inside one (Fields), styled words
wrapped between words and never inside one (Words: a number, unit, mark or name stays
whole), and a target's label wrapped between its parts (wrap_label). Neither breaks a number
from its unit or an option from its value (tokens.hold)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from mountbench.blocks.tokens import hold, release

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


class Adaptive:
    """Of several layouts built for the width it is given: the first that fits unwrapped; else
    the first that fits wrapped between words (its measured minimum: its longest word per
    column), so that no number, unit or name is cut; else the last (a layout that always fits)."""

    def __init__(self, build: Callable[[int], Sequence[Table | RenderableType]]) -> None:
        self.build = build

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        layouts = list(self.build(options.max_width))
        unbounded = options.update_width(10_000)
        measured = [Measurement.get(console, unbounded, layout) for layout in layouts[:-1]]
        for layout, size in zip(layouts, measured, strict=False):
            if size.maximum <= options.max_width:
                yield layout
                return
        for layout in layouts[:-1]:
            if least_width(console, unbounded, layout) <= options.max_width:
                yield layout
                return
        yield layouts[-1]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, list(self.build(options.max_width))[-1])


def least_width(console: Console, options: ConsoleOptions, layout: Table | RenderableType) -> int:
    """The narrowest a layout prints without cutting a word: a table's columns that never wrap
    at their widest, the others at their longest word, plus padding and borders (rich's own
    minimum counts a column that never wraps at its longest word, and then cuts it)."""
    if not isinstance(layout, Table):
        return Measurement.get(console, options, layout).minimum
    total = 0
    for column in layout.columns:
        cells = [column.header, *column.cells]
        sizes = [Measurement.get(console, options, cell) for cell in cells]
        total += max((size.maximum if column.no_wrap else size.minimum) for size in sizes)
        total += layout.padding[1] + layout.padding[3]
    return total + (len(layout.columns) + 1 if layout.box else 0)


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
        """The fields wrapped to ``width``; a number and its unit, an option and its value never apart
        (tokens.hold)."""
        return [release(line) for line in self._lines(width)]

    def _lines(self, width: int) -> list[str]:
        lines: list[str] = []
        current = " " * self.first_indent
        fresh = True
        for i, field in enumerate(hold(field) for field in self.fields):
            piece = field + (self.separator if i < len(self.fields) - 1 else "")
            candidate = current + ("" if fresh else " ") + piece
            if len(candidate) <= width:
                current, fresh = candidate, False
                continue
            if not fresh:
                lines.append(current)
                current = " " * self.indent
            # the piece starts a line; wider than the line, it wraps between its words
            room = width - self.indent
            wrapped = textwrap.wrap(piece, room, break_on_hyphens=False, break_long_words=False) or [piece]
            # a word wider than the line (mount options): broken after , / : = and the like
            wrapped = [part for line in wrapped for part in wrap_label(line, room).split("\n")]
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


class Words:
    """Styled texts as one paragraph, wrapped at spaces only: '1.49–259×', '[1,2]' or a
    target's name never splits across lines (a single word wider than the whole line is the
    only thing folded). Continuation lines are indented by ``indent``."""

    def __init__(self, pieces: Sequence[Text], *, first_indent: int = 0, indent: int = 4) -> None:
        self.words: list[Text] = []
        for piece in pieces:
            held = piece.copy()
            held.plain = hold(piece.plain)  # one character for one: the styles keep their places
            for line in held.split("\n"):
                self.words += [word for word in line.split(" ") if word.plain]
        self.first_indent = first_indent
        self.indent = indent

    def lines(self, width: int) -> list[Text]:
        lines: list[Text] = []
        current = Text(" " * self.first_indent)
        fresh = True
        for word in self.words:
            if not fresh and current.cell_len + 1 + word.cell_len > width:
                lines.append(current)
                current, fresh = Text(" " * self.indent), True
            if not fresh:
                current.append(" ")
            current.append_text(word)
            fresh = False
        lines.append(current)
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines(options.max_width):
            line.overflow = "fold"
            line.plain = release(line.plain)
            yield line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


def wrap_text(text: Text, width: int) -> Text:
    """``text`` wrapped to ``width`` between words, each of its own lines apart; a number and its unit, an
    option and its value, an interval never apart (tokens.hold). A word wider than ``width`` stays whole
    (the caller made ``width`` at least its longest: fit_columns)."""
    out: list[Text] = []
    for line in text.split("\n"):
        out += Words([line], indent=0).lines(max(1, width)) if line.plain else [Text("")]
    for line in out:
        line.plain = release(line.plain)
    return Text("\n").join(out)


def longest_word(text: Text) -> int:
    """The widest thing ``text`` may not be broken inside: a word, or a number with its unit (tokens.hold)."""
    return max((len(word) for word in hold(text.plain).replace("\n", " ").split(" ")), default=0)


def longest_line(text: Text) -> int:
    return max((len(line) for line in text.plain.split("\n")), default=0)


def fit_columns(columns: Sequence[Sequence[Text]], fixed: Sequence[bool], room: int) -> list[int] | None:
    """Each column's width (its cells and header in ``columns``) so that together they take at most ``room``:
    each as wide as its widest line where that fits, else narrowed, the one with the most to spare first,
    never below its longest word (``fixed`` columns never narrowed); None when even that is too wide.
    rich narrows a table's widest columns first, below their longest word ('(0.0263–1.01×' over ')')."""
    widest = [max((longest_line(text) for text in cells), default=1) for cells in columns]
    least = [w if keep else max([1] + [longest_word(text) for text in cells]) for w, keep, cells in
             zip(widest, fixed, columns, strict=True)]  # fmt: skip
    if sum(least) > room:
        return None
    widths = list(widest)
    while sum(widths) > room:
        spare = max(range(len(widths)), key=lambda i: widths[i] - least[i])
        widths[spare] -= 1
    return widths
