"""The report's formats, as plug-ins (hyperfine's exporters are the model): each format is one
module here giving a ``FORMAT`` (a formats.plugin.Format: its name, its file suffixes, what it
writes), and FORMATS lists them. `report --format`'s choices, the suffixes --out is read by and
their checks all follow from FORMATS; cli/report.py names no format. Adding a format = one
module here + one line in FORMATS. A document format lays out the sections' blocks
(blocks/parts.py: to_markdown, to_html, to_terminal show how); it needs no section to change.

Imports what cli/ may (it is part of it). Of cli/'s sub-packages it may import: none.
"""

from __future__ import annotations

from mountbench.cli.formats import as_csv, as_html, as_json, as_md, as_pdf
from mountbench.cli.formats.plugin import Format, Written

FORMATS: dict[str, Format] = {
    format.name: format
    for format in (
        as_md.FORMAT,
        as_html.FORMAT,
        as_csv.FORMAT,
        as_json.FORMAT,
        as_pdf.FORMAT,
    )
}

__all__ = ["FORMATS", "Format", "Written"]
