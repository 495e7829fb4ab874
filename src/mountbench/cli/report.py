"""`mountbench report`: stored runs and exported files as one document (md, html, csv, json).

Bad input raises UsageError/StoreError (cli.main maps them to exit code 2); nothing
here prints an error or exits by itself. The renderers (matplotlib, jinja2) are
imported inside the commands, so registering these commands costs other commands
no start-up time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mountbench.cli.common import db_option, debug_option, metric_options
from mountbench.cli.formats import FORMATS
from mountbench.cli.formats.plugin import Request
from mountbench.errors import UsageError
from mountbench.host import outputs
from mountbench.model import RunData
from mountbench.records.export import read_document
from mountbench.store import Store, default_db_path

if TYPE_CHECKING:
    from mountbench.report.model import Report

CHART_FORMATS = ("png", "svg")


class FormatChoice(click.Choice):
    """--format's choices: the formats FORMATS holds when the command runs (a format added later is one)."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(FORMATS)

    @choices.setter
    def choices(self, _: object) -> None:  # click.Choice sets it; the registry decides
        pass


@click.command()
@click.argument("run_refs", metavar="[RUN]...", nargs=-1)
@click.option(
    "--from",
    "sources",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE.json",
    help="also report runs from a file made by 'mountbench export' (repeatable; not imported)",
)
@click.option(
    "--format",
    "fmt",
    type=FormatChoice(),
    help="; ".join(f"{name}: {format.description}" for name, format in FORMATS.items())
    + " (default: from --out's suffix, else md)",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="write here (md: charts go next to it); default: standard output, without charts",
)
@click.option("--baseline", metavar="LABEL", help="compare with this target (label or label@host)")
@metric_options("report")
@click.option(
    "--chart-format",
    type=click.Choice(CHART_FORMATS),
    default="png",
    show_default=True,
    help="image format of the Markdown report's charts",
)
@click.option(
    "--charts",
    "charts_dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="also write every chart into DIR as PNG and SVG (made if missing), whatever the format",
)
@click.option("--samples", is_flag=True, help="csv without --out: print the raw samples instead of the summary")
@click.option("--per-client", is_flag=True, help="runs on several clients (run --client): each client's figures too")
@db_option
@debug_option
def report(
    run_refs: tuple[str, ...],
    sources: tuple[Path, ...],
    fmt: str | None,
    out: Path | None,
    baseline: str | None,
    metrics: tuple[str, ...],
    unit: str | None,
    chart_format: str,
    charts_dir: Path | None,
    samples: bool,
    per_client: bool,
    db: Path | None,
    debug: bool,
) -> None:
    """Write a report of stored runs (default: the last) and/or exported files.

    \b
    mountbench report --out report.md                 Markdown + charts next to it
    mountbench report RUN1 RUN2 --out report.html     one self-contained page
    mountbench report --from mac.json --from vm.json --format html --out s0.html
    mountbench report --format csv --out results.csv  results.csv + results-samples.csv (+ -sweeps, -picktwo)
    mountbench report --out report.pdf                the HTML page printed by headless Chromium
    mountbench report --format csv --out r.csv --charts charts/   and every chart as PNG and SVG
    """
    from mountbench.report.content import build_report
    from mountbench.report.grid import parse_unit

    chosen_unit = parse_unit(unit)
    fmt = _check_suffix(fmt, out) if fmt else _format_from_suffix(out)
    db_path = db or default_db_path()
    protect = [*outputs.database(db_path), *outputs.inputs(sources, "a file this report reads (--from)")]
    output = outputs.check(out, "--out", protect) if out is not None else None
    if output is not None and output.is_stdout:
        output = None  # --out -: standard output, as without --out
    if charts_dir is not None and charts_dir.exists() and not charts_dir.is_dir():
        raise UsageError(f"--charts {charts_dir}: not a directory; name a directory (it is made if missing)")
    runs = load_runs(run_refs, sources, db_path)
    built = build_report(runs, baseline=baseline, metrics=metrics, unit=chosen_unit)
    if charts_dir is not None:
        _write_every_chart(built, charts_dir, protect)
    request = Request(chart_format=chart_format, per_client=per_client, samples=samples)
    for line in FORMATS[fmt].write(built, output, request):
        _note(line)


# --- helpers ------------------------------------------------------------------------------------


def load_runs(run_refs: Sequence[str], sources: Sequence[Path], db: Path | None = None) -> list[RunData]:
    """Runs named by id (default: the last stored run unless files are given), then the files' runs."""
    from mountbench.report.labels import unique_runs

    runs: list[RunData] = []
    refs = list(run_refs) or ([] if sources else ["last"])
    if refs:
        with Store(db or default_db_path(), writer=False) as store:
            runs += [store.load_run(ref) for ref in refs]
    for path in sources:
        runs += read_document(path.expanduser())
    if len(runs) > REPORT_RUN_LIMIT:
        raise UsageError(
            f"a report compares at most {REPORT_RUN_LIMIT} runs, and {len(runs)} runs were given; name the runs to "
            "report (import the file, then 'mountbench report RUN...')"
        )
    return unique_runs(runs)


REPORT_RUN_LIMIT = 100  # a report of more is no comparison anyone reads, and its work grows with the runs


def _format_from_suffix(out: Path | None) -> str:
    """The format --out's suffix names; no suffix: Markdown; a suffix of no format: refused (it used to
    get Markdown, so that r.pdf held Markdown)."""
    if out is None or not out.suffix:
        return "md"
    found = _suffixes().get(out.suffix.lower())
    if found is None:
        known = ", ".join(sorted(_suffixes()))
        raise UsageError(f"--out {out}: no report format has the suffix {out.suffix}; use one of {known} or --format")
    return found


def _check_suffix(fmt: str, out: Path | None) -> str:
    """--format with an --out whose suffix names another format is refused: `--format pdf --out
    r.md` wrote a PDF into r.md. A suffix of no format (r.txt) or none at all is the user's choice."""
    named = _suffixes().get(out.suffix.lower()) if out is not None and str(out) != "-" else None
    if named is not None and named != fmt:
        raise UsageError(
            f"--out {out} names a {named} file but --format {fmt} writes {fmt}; name it {out.with_suffix('.' + fmt)} "
            f"or give --format {named}"
        )
    return fmt


def _suffixes() -> dict[str, str]:
    """Each file suffix a format owns -> the format's name."""
    return {suffix: name for name, format in FORMATS.items() for suffix in format.suffixes}


def _write_every_chart(built: Report, directory: Path, protect: Sequence[outputs.Protected]) -> None:
    """--charts DIR: every chart as <key>.png and <key>.svg, each an output checked by host/outputs.py."""
    from mountbench.report.charts import every_chart_file

    directory.mkdir(parents=True, exist_ok=True)
    files = every_chart_file(built)
    outputs.write_files(
        lambda name: outputs.check(directory / name, "--charts", protect), [(f.name, f.data) for f in files]
    )
    _note(f"wrote {len(files)} chart files into {directory} ({len(files) // 2} charts, each as PNG and SVG)")


def _note(text: str) -> None:
    click.echo(text, err=True)
