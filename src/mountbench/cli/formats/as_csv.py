"""CSV: the summary (one row per cell), the samples next to it, and each section's records (sweeps,
pick two) in a file of their own; on standard output the summary, or the samples (--samples)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mountbench.cli.formats.plugin import Format, Request, Written, print_text

if TYPE_CHECKING:
    from mountbench.host.outputs import Output
    from mountbench.report.model import Report


def write(report: Report, output: Output | None, request: Request) -> Written:
    from mountbench.report.csvexport import samples_csv, summary_csv
    from mountbench.report.sections import exports

    if output is None:
        print_text(samples_csv(report) if request.samples else summary_csv(report))
        return []
    given = Path(output.given)
    suffix = given.suffix or ".csv"
    raw = output.sibling(f"{given.stem}-samples{suffix}")
    output.write_text(summary_csv(report))
    raw.write_text(samples_csv(report))
    said = [f"wrote {output} (one row per summary cell) and {raw} (one row per sample)"]
    for section in exports(report):  # sweeps, pick two: a file each, next to the summary
        path = output.sibling(f"{given.stem}{section.suffix}{suffix}")
        path.write_text(section.csv)
        said.append(f"wrote {path} ({section.note})")
    return said


FORMAT = Format("csv", (".csv",), "summary, samples and sections' records", write)
