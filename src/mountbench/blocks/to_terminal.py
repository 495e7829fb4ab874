"""The terminal (rich): a TableView as a rich table, each cell in its style with its lines under it.
How a table is laid out there (its box, title, caption, which columns wrap) is a RichLayout."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mountbench.blocks.table import CellView, Mark, TableView

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


def rich_table(
    view: TableView, title: str = "", layout: RichLayout = RichLayout(), widths: Sequence[int] = ()
):  # -> rich.table.Table
    """The view as a rich table for the terminal: numeric columns right-aligned, notes as [n],
    each cell in its style (``strong``: bold) with its lines under it. ``widths``: each column's, its
    cells already wrapped to it (terminal_tables.fitted): rich wraps nothing again."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=(title or view.heading or None) if layout.show_title else None,
        title_justify=layout.title_justify,
        title_style=layout.title_style,
        caption=(view.caption or None) if layout.caption else None,
        caption_justify="left",
        header_style="bold",
        show_lines=layout.show_lines,
        box=getattr(box, layout.box) if layout.box else None,
        show_edge=layout.show_edge,
        pad_edge=layout.pad_edge,
        collapse_padding=layout.collapse_padding,
    )
    own = dict(layout.columns)
    for i, header in enumerate(view.headers):
        shown = rich_cell(view.header_cells[i]) if view.header_cells else header
        wrap = {"no_wrap": layout.label_no_wrap if i == 0 else layout.no_wrap, "overflow": layout.overflow}
        table.add_column(
            shown,
            justify="right" if view.numeric(i) else "left",
            style=layout.label_style if i == 0 else "",
            **(wrap | _column(own.get(i)) | ({"width": widths[i], "no_wrap": True} if widths else {})),
        )
    for index, row in enumerate(view.rows):
        if index in view.breaks:
            table.add_section()
        table.add_row(*(rich_cell(c, marks=layout.marks) for c in row))
    return table


def _column(column: Column | None) -> dict[str, Any]:
    if column is None:
        return {}
    given = {"width": column.width, "ratio": column.ratio, "min_width": column.min_width, "no_wrap": column.no_wrap,
             "overflow": column.overflow}  # fmt: skip
    return {name: value for name, value in given.items() if value is not None}


def rich_cell(cell: CellView, *, marks: bool = True):  # -> rich.text.Text
    """A cell as the terminal shows it: its own rich text, else its text (and notes) in its style."""
    from rich.text import Text

    if cell.rich is not None:
        return cell.rich
    style = cell.style or ("bold" if cell.strong else "")
    text = Text(cell.text + _plain_marks(cell.links if marks else ()), style=style)
    for line in cell.lines:
        text.append("\n" + line.text + _plain_marks(line.links if marks else ()), style=line.style)
    return text


def _plain_marks(links: Sequence[Mark]) -> str:
    return f" [{','.join(str(m.number) for m in links)}]" if links else ""
