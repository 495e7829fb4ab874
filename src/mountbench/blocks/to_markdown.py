"""Markdown (GitHub's): the escaping every Markdown part uses (md_text, md_code, md_marks), a
TableView as a GFM table, and blocks (parts.py) as Markdown."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from mountbench.blocks.parts import Block, Chapter, Heading, Items, Paragraph, Table
from mountbench.blocks.table import CellView, TableView

_SPECIAL = "\\`*[]<"
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # intraword _ never emphasises in GFM


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


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "", *, padded: bool = False) -> str:
    """A GFM table of Markdown cells; ``align`` has one letter per column (l, r), default left.
    ``padded``: each column as wide as its widest cell, as it reads in plain text too (a CI job's
    summary, read raw in its log), under a rule of dashes."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    table = [[cell(text) for text in row] for row in [headers, *rows]]
    if padded:
        widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
        table = [[text.ljust(width) for text, width in zip(row, widths, strict=True)] for row in table]
        marks = ["-" * (width + 2) for width in widths]
    else:
        marks = [":--" if (align[i : i + 1] or "l") == "l" else "--:" for i in range(len(headers))]
    lines = ["| " + " | ".join(row) + " |" for row in table]
    lines.insert(1, "|" + "|".join(marks) + "|")
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


# --- blocks ------------------------------------------------------------------------------------------

_WRAP = {"legend": "_{}_", "good": "_{}_", "strong": "**{}**", "bad": "**{}**", "loss": "**{}**",
         "warning": "**warning**: {}"}  # fmt: skip
_ITEM_WRAP = {"loss": "**{}**", "warning": "**warning**: {}"}  # a list's entries: only these stand out


def blocks_markdown(blocks: Sequence[Block], images: Mapping[str, str] | None = None) -> str:
    """Blocks as Markdown, a blank line between them; ``images``: chart key -> image path (a figure
    without one is left out)."""
    parts = [_block(block, images or {}) for block in blocks]
    return "\n\n".join(part for part in parts if part)


def chapter_markdown(chapter: Chapter, images: Mapping[str, str] | None = None) -> str:
    """A chapter under its ``##`` heading ('' when it is its figures and none is drawn)."""
    images = images or {}
    if chapter.figures_only and not any(key in images for key in chapter.figures()):
        return ""
    return blocks_markdown([Heading(chapter.title, 2), *chapter.blocks], images)


def _block(block: Block, images: Mapping[str, str]) -> str:
    if isinstance(block, Heading):
        return f"{'#' * block.level} {md_text(block.text)}"
    if isinstance(block, Paragraph):
        return _WRAP.get(block.tone, "{}").format(md_text(block.text))
    if isinstance(block, Items):
        form = _ITEM_WRAP.get(block.tone, "{}")
        return "\n".join(
            line
            for item in block.items
            for line in (f"- {form.format(_one_line(item.text))}", *(f"  - {_one_line(sub)}" for sub in item.under))
        )
    if isinstance(block, Table):
        return markdown(block.view)
    return md_image(images, block.key, block.alt)


def _one_line(text: str) -> str:
    return md_text(text).replace("\n", " ")
