"""PDF: the HTML page printed by headless Chromium (cli/pdf.py); a file only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mountbench.cli.formats.plugin import Format, Request, Written
from mountbench.errors import UsageError

if TYPE_CHECKING:
    from mountbench.host.outputs import Output
    from mountbench.report.model import Report


def write(report: Report, output: Output | None, request: Request) -> Written:
    from mountbench.cli.pdf import html_to_pdf
    from mountbench.report.html import render_html

    if output is None:
        raise UsageError("--format pdf needs --out FILE.pdf: a PDF is not written to the terminal")
    output.write_bytes(html_to_pdf(render_html(report, per_client=request.per_client, phone=False), output))
    return [f"wrote {output}"]


FORMAT = Format("pdf", (".pdf",), "the HTML page printed by Chromium", write)
