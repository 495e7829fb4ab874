"""Terminal layout that fits the width it is given: the first of several table layouts that
fits (Adaptive), phrases wrapped between fields and never inside one (Fields), and a
target's label wrapped between its parts (wrap_label)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

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
