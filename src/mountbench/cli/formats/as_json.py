"""JSON: the runs as `mountbench export` writes them (readable by --from and import), relabelled as
in the summary, with each section's records (sweeps, pick two) under its name."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mountbench.cli.formats.plugin import Format, Request, Written

if TYPE_CHECKING:
    from mountbench.host.outputs import Output
    from mountbench.report.model import Report


def write(report: Report, output: Output | None, request: Request) -> Written:
    import click

    from mountbench.records.export import write_document
    from mountbench.report.document import make_document
    from mountbench.report.sections import exports

    # runs relabelled as in the summary, and the rounds' reasons the report already has
    document = make_document(list(report.runs), summary=report.summary, stops=report.stops)
    for section in exports(report):  # sweeps, pick two: each section's records
        document[section.name] = section.records
    if output is None:
        click.echo(json.dumps(document, indent=1))
        return []
    write_document(output, document)
    return [f"wrote {output}"]


FORMAT = Format("json", (".json",), "runs and sections' records, readable by --from", write)
