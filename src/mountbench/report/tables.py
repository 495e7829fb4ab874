"""Table views shared by every format, as hyperfine's exporters share one table builder: a
section builds a TableView once (display strings, note numbers, sort keys, styles) and
Markdown (``markdown``), HTML (``html``, the same Jinja macro the page uses) and the terminal
(``rich_table``) lay it out.
Also the Markdown escaping every Markdown part uses (md_text, md_code, md_table).

Imports nothing of the report: every renderer and section may import it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from markupsafe import Markup

_SPECIAL = "\\`*[]<"
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # intraword _ never emphasises in GFM


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


# --- Markdown ------------------------------------------------------------------------------------


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


def md_marks(numbers: Sequence[int]) -> str:
    """`` [[2]](#note-2)``: each mark links to its note at the end."""
    return " " + " ".join(f"[\\[{n}\\]](#note-{n})" for n in numbers) if numbers else ""


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A GFM table of Markdown cells; ``align`` has one letter per column (l, r), default left."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    marks = [":--" if (align[i : i + 1] or "l") == "l" else "--:" for i in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "|".join(marks) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def md_cell(cell: CellView) -> str:
    text = (md_code(cell.text) if cell.text else "") if cell.code else md_text(cell.text)
    if cell.strong and text:
        text = f"**{text}**"
    text += md_marks([m.number for m in cell.links]) + md_text(cell.marks)
    return "<br>".join([text, *(md_text(line.text) + md_marks([m.number for m in line.links]) for line in cell.lines)])


def markdown(view: TableView) -> str:
    """The view as a GFM table (heading, caption and chart are the caller's)."""
    headers = [
        md_text(h) + (md_marks([m.number for m in view.header_links[i]]) if i < len(view.header_links) else "")
        for i, h in enumerate(view.headers)
    ]
    align = "".join("r" if view.numeric(i) else "l" for i in range(len(view.headers)))
    return md_table(headers, [[md_cell(c) for c in row] for row in view.rows], align)


def md_image(charts: Mapping[str, str], key: str, alt: str) -> str:
    """``![alt](path)`` when ``charts`` (key -> path) has the chart, else ''."""
    path = charts.get(key)
    return f"![{md_text(alt)}]({path})" if path else ""


# --- HTML ------------------------------------------------------------------------------------------


@functools.cache
def environment():  # -> jinja2.Environment; imported here only when HTML is made
    import jinja2

    from mountbench.report import tokens

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("mountbench.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    # text in the page: a number and its unit, an option and its value never apart (tokens.py); Markup (a
    # chart, a table already laid out) passes through
    env.filters["nw"] = lambda value: value if isinstance(value, Markup) else tokens.html(str(value))
    return env


def html(view: TableView) -> Markup:
    """The view as the page's sortable table (templates/macros.html.j2), chart included."""
    return Markup(environment().get_template("macros.html.j2").module.table(view))  # type: ignore[attr-defined]


def html_section(
    id: str, title: str, views: Sequence[TableView], intro: str = "", warnings: Sequence[str] = ()
) -> Markup:
    """A page section of tables: heading, intro, each table with its heading and caption, warnings."""
    macros = environment().get_template("macros.html.j2").module
    return Markup(macros.section(id, title, list(views), intro, list(warnings)))  # type: ignore[attr-defined]


# --- terminal ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RichLayout:
    """How the terminal lays a view out: the label column (the first), the value columns'
    wrapping, rules between rows, whether notes show as [n]."""

    show_title: bool = True  # False: the view's heading is printed above it, not as its title
    title_style: str | None = None  # None: rich's (italic)
    title_justify: Literal["left", "center"] = "left"
    show_lines: bool = False
    marks: bool = True
    label_style: str = ""
    label_no_wrap: bool = False
    no_wrap: bool = False  # the value columns never wrap ...
    overflow: Literal["fold", "ellipsis"] = "ellipsis"  # ... else what a word too long for its column does


def rich_table(
    view: TableView, title: str = "", layout: RichLayout = RichLayout(), widths: Sequence[int] = ()
):  # -> rich.table.Table
    """The view as a rich table for the terminal: numeric columns right-aligned, notes as [n],
    each cell in its style (``strong``: bold) with its lines under it. ``widths``: each column's, its
    cells already wrapped to it (terminal_tables.fitted): rich wraps nothing again."""
    from rich.table import Table

    table = Table(
        title=(title or view.heading or None) if layout.show_title else None,
        title_justify=layout.title_justify,
        title_style=layout.title_style,
        header_style="bold",
        show_lines=layout.show_lines,
    )
    for i, header in enumerate(view.headers):
        shown = rich_cell(view.header_cells[i]) if view.header_cells else header
        justify = "right" if view.numeric(i) else "left"
        fixed = {"width": widths[i], "no_wrap": True} if widths else {}
        if i == 0:
            table.add_column(shown, justify=justify, style=layout.label_style,
                             **({"no_wrap": layout.label_no_wrap, "overflow": layout.overflow} | fixed))  # fmt: skip
        else:
            table.add_column(
                shown, justify=justify, **({"no_wrap": layout.no_wrap, "overflow": layout.overflow} | fixed)
            )
    for index, row in enumerate(view.rows):
        if index in view.breaks:
            table.add_section()
        table.add_row(*(rich_cell(c, marks=layout.marks) for c in row))
    return table


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


def note_links(notes: Sequence[str], numbers: Sequence[int]) -> list[Mark]:
    """Links to the report's notes ``numbers`` (1-based), each with its note as tooltip."""
    return [Mark(n, f"[{n}] {notes[n - 1]}") for n in numbers]


def note_tooltip(notes: Sequence[str], numbers: Sequence[int]) -> str:
    return "\n".join(f"[{n}] {notes[n - 1]}" for n in numbers)


def noted(text: str, notes: Sequence[str], numbers: Sequence[int], **view: str) -> CellView:
    """A cell whose value carries the report's notes ``numbers``: linked, and as its tooltip."""
    return CellView(text, notes=note_tooltip(notes, numbers), links=note_links(notes, numbers), **view)  # type: ignore[arg-type]
