"""HTML: one self-contained page, its charts inline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mountbench.cli.formats.plugin import Format, Request, Written, print_text

if TYPE_CHECKING:
    from mountbench.host.outputs import Output
    from mountbench.report.model import Report


def write(report: Report, output: Output | None, request: Request) -> Written:
    from mountbench.report.html import render_html

    page = render_html(report, per_client=request.per_client)
    if output is None:
        print_text(page)
        return []
    output.write_text(page)
    return [f"wrote {output}"]


FORMAT = Format("html", (".html", ".htm"), "one self-contained page", write)
