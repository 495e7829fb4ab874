"""What a report section is: the parts it gives for every format (sections/__init__.py
lists them). A section is a module with these functions; each returns nothing ('' / [] /
None) when the report has nothing for it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from markupsafe import Markup

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
    """What the caller asked for that changes a section: --per-client, and whether an HTML
    page draws its charts."""

    per_client: bool = False
    draw: bool = True


def nothing(report: Report, *_: object) -> list:
    """A part a section does not have (its terminal part, charts or exports)."""
    return []


def no_text(report: Report, *_: object) -> str:
    """A Markdown part a section does not have."""
    return ""


class Section(Protocol):
    """One optional part of every report (a module; see sections/__init__.py)."""

    def terminal(self, report: Report, options: Options) -> list:  # rich renderables
        ...

    def markdown(self, report: Report, charts: Mapping[str, str], options: Options) -> str:
        """``charts``: chart key -> image path relative to the document."""
        ...

    def html(self, report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options) -> Markup:
        """``svgs``: chart key -> (chart, inline <svg>)."""
        ...

    def charts(self, report: Report) -> list[Chart]:
        """The charts Markdown writes next to the document and HTML inlines."""
        ...

    def page_charts(self, report: Report) -> list[Chart]:
        """The charts the page alone draws (not Markdown's files): drawn with the page's others, in one go
        (chartkit.render_all, in parallel where a CPU is free), and handed to ``html`` in its ``svgs``."""
        ...

    def exports(self, report: Report) -> list[Export]: ...
