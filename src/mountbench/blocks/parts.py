"""The blocks a document or a screen is made of, in no format's terms: a heading, a paragraph in a
tone, a list, a table (a TableView, and how the terminal lays it out), a figure (a chart named by
its key), and a chapter (a titled run of blocks: a report's section, a probe's findings).

Each medium lays them out its own way (to_markdown.blocks_markdown, to_html.blocks_html,
to_terminal.renderables); what a tone means there is theirs too (a legend: italics in Markdown,
``<p class="legend">`` on the page, dim on the terminal)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from mountbench.blocks.table import RichLayout, TableView

# "": plain; "caption": what a table or chart shows (under it); "legend": how to read what is above;
# "note": said of what is above; "warning" and "caveat": what limits a number; "good", "bad", "loss"
# (data lost or corrupted) and "strong": a verdict that stands out
Tone = Literal["", "caption", "legend", "note", "warning", "caveat", "good", "bad", "loss", "strong"]


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 3  # 2: a chapter's own title; 3 and below: a part of it
    tone: Tone = ""
    part: ClassVar[str] = "heading"


@dataclass(frozen=True)
class Paragraph:
    text: str
    tone: Tone = ""
    part: ClassVar[str] = "paragraph"


@dataclass(frozen=True)
class Item:
    """One entry of a list, with the entries said under it (a tool's notes under its target)."""

    text: str
    under: tuple[str, ...] = ()


@dataclass(frozen=True)
class Items:
    items: tuple[Item, ...]
    tone: Tone = ""
    part: ClassVar[str] = "items"

    @classmethod
    def of(cls, texts: Iterable[str], tone: Tone = "") -> Items:
        return cls(tuple(Item(text) for text in texts), tone)


@dataclass(frozen=True)
class Table:
    view: TableView
    layout: RichLayout = field(default_factory=RichLayout)  # how the terminal lays it out
    title: str = ""  # the terminal's title, where it says more than the view's heading
    part: ClassVar[str] = "table"


@dataclass(frozen=True)
class Figure:
    """A chart by its key: a document shows it where it has it drawn (an image file, an inline SVG)."""

    key: str
    alt: str
    part: ClassVar[str] = "figure"


Block = Heading | Paragraph | Items | Table | Figure


@dataclass(frozen=True)
class Chapter:
    """A titled run of blocks (a report's section). ``style``: style rules its classes need on a page;
    ``figures_only``: it shows its figures, and is left out where none of them is drawn."""

    id: str
    title: str
    blocks: tuple[Block, ...]
    style: str = ""
    figures_only: bool = False

    def figures(self) -> list[str]:
        return [block.key for block in self.blocks if isinstance(block, Figure)]
