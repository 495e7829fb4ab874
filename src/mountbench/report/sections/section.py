"""What a report section is: a module giving its parts (sections/__init__.py lists them), in no
format's terms. A section says what it shows in blocks (blocks/parts.py: headings, paragraphs,
lists, tables, figures), once for documents (Chapters: Markdown, the HTML page, the PDF and any
format added later lay it out) and once for the screen after run, show and lab; its charts and
its records for CSV and JSON. Each part is empty (None, []) when the report has nothing for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from mountbench.blocks.parts import Block, Chapter
from mountbench.report.chartkeys import Chart
from mountbench.report.model import Report


@dataclass(frozen=True)
class Export:
    """A section's records for the machine-readable formats: ``records`` go into the JSON
    document under ``name``; ``csv`` is written next to the summary CSV as
    ``<stem><suffix>.csv``; ``note`` says what its rows are."""

    name: str
    suffix: str
    note: str
    records: list[dict[str, Any]]
    csv: str


@dataclass(frozen=True)
class Options:
    """What the caller asked for that changes a section: --per-client."""

    per_client: bool = False


def nothing(report: Report, *_: object) -> list:
    """A part a section does not have (its chapters, screen blocks, charts or exports)."""
    return []


class Section(Protocol):
    """One optional part of every report (a module; see sections/__init__.py)."""

    def chapters(self, report: Report, options: Options) -> list[Chapter]:
        """What every document shows: titled chapters of blocks (pick two: one per lab), figures by chart key."""
        ...

    def screen(self, report: Report, options: Options) -> list[Block]:
        """What the terminal shows after run, show and lab."""
        ...

    def charts(self, report: Report) -> list[Chart]:
        """The charts a document shows (Markdown's files, the page's inline drawings)."""
        ...

    def page_charts(self, report: Report) -> list[Chart]:
        """The charts the page alone draws (not Markdown's files): drawn with the page's others, in one go
        (chartkit.render_all, in parallel where a CPU is free)."""
        ...

    def exports(self, report: Report) -> list[Export]: ...
