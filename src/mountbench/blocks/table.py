"""A table as every output shows it, built once: display strings, note numbers, sort keys and
styles per cell (as hyperfine's exporters share one table builder). Markdown (to_markdown), the
page (to_html) and the terminal (to_terminal) lay it out; RichLayout says how the terminal does,
as data (its frame, title, caption, which columns wrap)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from markupsafe import Markup


@dataclass
class Mark:
    """A link to note ``number`` whose tooltip is the note."""

    number: int
    note: str


@dataclass
class Line:
    """A line under a cell's value (what a verdict stands on), with its notes."""

    text: str
    links: list[Mark] = field(default_factory=list)
    style: str = ""  # the terminal's rich style


@dataclass
class CellView:
    text: str
    sort: str = ""  # numeric sort key ("" sorts last)
    classes: str = ""
    notes: str = ""  # tooltip: the notes' text
    marks: str = ""  # "[1,2]" (plain; ``links`` instead where notes are linked)
    links: list[Mark] = field(default_factory=list)
    strong: bool = False  # a row's label or a verdict that stands out (bold)
    style: str = ""  # the terminal's rich style of ``text`` (HTML styles by ``classes``)
    lines: list[Line] = field(default_factory=list)  # under the value, one a line
    rich: Any = None  # the terminal's text when it is more than one style (a rich Text; ``text`` is its plain)
    code: bool = False  # a path, mount options, a job's settings: shown as code (Markdown)


@dataclass
class TableView:
    id: str
    heading: str
    headers: list[str]
    rows: list[list[CellView]]
    chart: Markup | None = None
    chart_title: str = ""
    numeric_from: int = 1  # columns from this index are right-aligned ...
    text_from: int = 1_000  # ... up to this one (text columns after the numbers)
    caption: str = ""  # a sentence on what the table shows, under its heading
    header_links: list[list[Mark]] = field(default_factory=list)  # per header: its notes
    header_cells: list[CellView] = field(default_factory=list)  # headers with a style or lines (the terminal's)
    align: str = ""  # one letter per column (l, r) where the numbers are not one run of columns
    breaks: tuple[int, ...] = ()  # rows a rule goes above (the terminal's table sections)

    def numeric(self, column: int) -> bool:
        if self.align:
            return self.align[column : column + 1] == "r"
        return self.numeric_from <= column < self.text_from


def note_links(notes: Sequence[str], numbers: Sequence[int]) -> list[Mark]:
    """Links to the notes ``numbers`` (1-based), each with its note as tooltip."""
    return [Mark(n, f"[{n}] {notes[n - 1]}") for n in numbers]


def note_tooltip(notes: Sequence[str], numbers: Sequence[int]) -> str:
    return "\n".join(f"[{n}] {notes[n - 1]}" for n in numbers)


def noted(text: str, notes: Sequence[str], numbers: Sequence[int], **view: str) -> CellView:
    """A cell whose value carries the notes ``numbers``: linked, and as its tooltip."""
    return CellView(text, notes=note_tooltip(notes, numbers), links=note_links(notes, numbers), **view)  # type: ignore[arg-type]


# --- how the terminal lays a table out ---------------------------------------------------------------

Overflow = Literal["fold", "ellipsis"]


@dataclass(frozen=True)
class Column:
    """One column laid out unlike the others: its share of spare width, its least width, whether it wraps."""

    width: int | None = None
    ratio: int | None = None
    min_width: int | None = None
    no_wrap: bool | None = None
    overflow: Overflow | None = None


@dataclass(frozen=True)
class RichLayout:
    """How the terminal lays a view out: the label column (the first), the value columns'
    wrapping, rules between rows, whether notes show as [n]; the frame (rich.box's name, edges)
    and whether the view's caption goes under it."""

    show_title: bool = True  # False: the view's heading is printed above it, not as its title
    title_style: str | None = None  # None: rich's (italic)
    title_justify: Literal["left", "center"] = "left"
    show_lines: bool = False
    marks: bool = True
    label_style: str = ""
    label_no_wrap: bool = False
    no_wrap: bool = False  # the value columns never wrap ...
    overflow: Overflow = "ellipsis"  # ... else what a word too long for its column does
    caption: bool = False  # the view's caption under the table, left-aligned
    box: str | None = "HEAVY_HEAD"  # rich.box's name; None: no frame at all
    show_edge: bool = True
    pad_edge: bool = True
    collapse_padding: bool = False
    columns: tuple[tuple[int, Column], ...] = ()  # (index, its own layout)
