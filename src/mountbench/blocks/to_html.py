"""The page's HTML: a TableView as a sortable table and blocks (parts.py) as the page shows them
(templates/blocks.html.j2, the macros every page uses), and the Jinja environment pages are made
with: a page's own templates (its package's templates/) beside these, its text held together where
a line may not break (tokens.py)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence

from markupsafe import Markup

from mountbench.blocks import tokens
from mountbench.blocks.parts import Block, Chapter
from mountbench.blocks.table import TableView


@functools.cache
def environment(package: str = ""):  # -> jinja2.Environment; imported here only when HTML is made
    """Templates of ``package`` (its templates/ folder) and of this package (blocks.html.j2)."""
    import jinja2

    loaders = [jinja2.PackageLoader(package, "templates")] if package else []
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([*loaders, jinja2.PackageLoader("mountbench.blocks", "templates")]),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    # text in the page: a number and its unit, an option and its value never apart (tokens.py); Markup (a
    # chart, a table already laid out) passes through
    env.filters["nw"] = lambda value: value if isinstance(value, Markup) else tokens.html(str(value))
    return env


def _macros():
    return environment().get_template("blocks.html.j2").module


def html(view: TableView) -> Markup:
    """The view as the page's sortable table (templates/blocks.html.j2), chart included."""
    return Markup(_macros().table(view))  # type: ignore[attr-defined]


def html_section(
    id: str, title: str, views: Sequence[TableView], intro: str = "", warnings: Sequence[str] = ()
) -> Markup:
    """A page section of tables: heading, intro, each table with its heading and caption, warnings."""
    return Markup(_macros().section(id, title, list(views), intro, list(warnings)))  # type: ignore[attr-defined]


# --- blocks ------------------------------------------------------------------------------------------

TONE_CLASS = {"caption": "muted", "legend": "legend", "note": "notes", "warning": "warning", "caveat": "caveat-line",
              "good": "good", "bad": "bad", "loss": "loss", "strong": "strong"}  # fmt: skip


def blocks_html(blocks: Sequence[Block], svgs: Mapping[str, tuple[object, Markup]] | None = None) -> Markup:
    """Blocks as the page shows them (templates/blocks.html.j2); ``svgs``: chart key -> (chart, inline
    <svg>), a figure without one left out."""
    return Markup(_macros().blocks(list(blocks), svgs or {}, TONE_CLASS))  # type: ignore[attr-defined]


def chapter_html(chapter: Chapter, svgs: Mapping[str, tuple[object, Markup]] | None = None) -> Markup:
    """A chapter as a ``<section>`` of the page ('' when it is its figures and none is drawn)."""
    svgs = svgs or {}
    if chapter.figures_only and not any(key in svgs for key in chapter.figures()):
        return Markup("")
    styled = dataclasses.replace(chapter, style=Markup(chapter.style))  # the chapter's own rules, as written
    return Markup(_macros().chapter(styled, svgs, TONE_CLASS))  # type: ignore[attr-defined]
