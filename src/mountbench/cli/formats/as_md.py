"""Markdown: the document, its charts written next to it as image files (none on standard output)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mountbench.cli.formats.plugin import Format, Request, Written, print_text

if TYPE_CHECKING:
    from mountbench.host.outputs import Output
    from mountbench.report.chartkeys import Chart
    from mountbench.report.model import Report


def write(report: Report, output: Output | None, request: Request) -> Written:
    from mountbench.report.markdown import render_markdown

    if output is None:  # no charts: matplotlib is not even imported
        print_text(render_markdown(report, per_client=request.per_client))
        return []
    stem = Path(output.given).stem
    written = write_charts(report, output.sibling, stem, request.chart_format)
    charts = {chart.key: path.name for chart, path in written}
    output.write_text(render_markdown(report, charts, per_client=request.per_client))
    return [f"wrote {output} and {len(written)} chart(s) next to it ({stem}-*.{request.chart_format})"]


def write_charts(
    report: Report, place: Path | Callable[[str], Output], stem: str, fmt: str = "png"
) -> list[tuple[Chart, Path]]:
    """Write every chart Markdown shows as ``<stem>-<key>.<fmt>`` in a directory, or where
    ``place`` puts each name (the document's Output.sibling), each an output checked by
    host/outputs.py (never over a device, a directory or the results database)."""
    from mountbench.host import outputs
    from mountbench.report.charts import chart_files

    files = chart_files(report, stem, fmt)
    paths = outputs.write_files(place, [(f.name, f.data) for f in files])
    return [(f.chart, path) for f, path in zip(files, paths, strict=True)]


FORMAT = Format("md", (".md", ".markdown"), "Markdown, charts next to it", write)
