"""The terminal (rich): a TableView as a rich table, each cell in its style with its lines under it
(how, a RichLayout says: its frame, title, caption, which columns wrap), and blocks (parts.py) as
rich renderables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mountbench.blocks.parts import Block, Heading, Items, Paragraph, Table
from mountbench.blocks.table import CellView, Column, Mark, RichLayout, TableView


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


# --- blocks ------------------------------------------------------------------------------------------

TONE_STYLE = {"caption": "dim", "legend": "dim", "note": "dim", "warning": "yellow", "caveat": "yellow",
              "good": "green", "bad": "bold red", "loss": "bold white on red", "strong": "bold"}  # fmt: skip
# a list's entries: a mark before each, and a style of their own, where the tone has them (data lost: each
# finding in bold red under the heading's white on red)
BULLET = {"loss": "  ‼ "}
ITEM_STYLE = {"loss": "bold red"}


def renderables(blocks: Sequence[Block]) -> list:
    """Blocks as rich renderables, one after another: a heading bold after a blank line, a paragraph or
    a list in its tone's style, a table as rich_table lays it out; figures are a document's."""
    from rich.text import Text

    out: list = []
    for block in blocks:
        if isinstance(block, Heading):
            out += [Text(""), Text(block.text, style=TONE_STYLE.get(block.tone, "bold"))]
        elif isinstance(block, Paragraph):
            out.append(_toned(block.text, block.tone))
        elif isinstance(block, Items):
            for item in block.items:
                text = BULLET.get(block.tone, "") + item.text
                out.append(
                    Text(text, style=ITEM_STYLE[block.tone]) if block.tone in ITEM_STYLE else _toned(text, block.tone)
                )
                out += [Text(f"  · {sub}", style="dim") for sub in item.under]
        elif isinstance(block, Table):
            out.append(rich_table(block.view, block.title, block.layout))
    return out


def _toned(text: str, tone: str):  # -> rich.text.Text
    from rich.text import Text

    if tone == "warning":
        return Text.assemble(("warning:", TONE_STYLE[tone]), f" {text}")
    return Text(text, style=TONE_STYLE.get(tone, ""))
