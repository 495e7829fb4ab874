"""The report's optional sections, in the order every document shows them.

Each section is one module (sweeps/ and clients/ are packages: the section's parts in their
__init__, what they are made of beside them) giving its parts in no format's terms
(sections/section.Section): ``chapters`` (titled runs of blocks, blocks/parts.py, that Markdown,
the page and any format added later lay out), ``screen`` (the blocks the terminal shows after run),
``charts`` and ``exports`` (CSV files and JSON records); a part is empty when the report has
nothing for it. The renderers (terminal.py, markdown.py, html.py, charts.py, cli/formats/)
iterate SECTIONS and wire none by hand. Adding a section = one module here + one line in
SECTIONS; adding a format changes no section.

Of report/'s sub-packages it may import: picktwo/.
Beside that: model, labfacts, errors, units, analysis, probe (its results and their rendering), and the
report modules below the renderers (model, labels, cells, chartkeys, tables, phrasing,
csvexport, picktwo/, sweep_discovery, and chartkit inside chart-drawing functions only).
Never the renderers that iterate it (terminal, markdown, html, charts) and never engine/ or cli/.
"""

from __future__ import annotations

from mountbench.report.model import Report
from mountbench.report.sections import clients, costs, percentiles, picktwo, series, sweeps
from mountbench.report.sections.section import Export, Options, Section

SECTIONS: tuple[Section, ...] = (
    costs,  # study S1: host cost per case (--watch, lab)
    percentiles,  # study S4: latency percentiles
    sweeps,  # study S3: sweeps and grids
    series,  # within each sample (HTML only)
    clients,  # run --client: scaling and per-client figures
    picktwo,  # every lab's pick two: lab --probe, cloudlab, containers (picktwo/: each lab's judges)
)  # type: ignore[assignment]


def exports(report: Report) -> list[Export]:
    """Every section's records for CSV and JSON, in section order."""
    return [export for section in SECTIONS for export in section.exports(report)]


__all__ = ["SECTIONS", "Export", "Options", "exports"]
