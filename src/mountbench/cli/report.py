"""`mountbench report`: stored runs and exported files as one document (md, html, csv, json).

Bad input raises UsageError/StoreError (cli.main maps them to exit code 2); nothing
here prints an error or exits by itself. The renderers (matplotlib, jinja2) are
imported inside the commands, so registering these commands costs other commands
no start-up time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from mountbench.cli.options import db_option, debug_option
from mountbench.errors import UsageError
from mountbench.model import RunData
from mountbench.records.export import read_document, write_document
from mountbench.report.document import make_document
from mountbench.store import Store, default_db_path

if TYPE_CHECKING:
    from mountbench.report.content import Report

FORMATS = ("md", "html", "csv", "json", "pdf")
CHART_FORMATS = ("png", "svg")
_SUFFIXES = {
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".csv": "csv",
    ".json": "json",
    ".pdf": "pdf",
}


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
    type=click.Choice(FORMATS),
    help="md, html, csv, json or pdf (HTML printed by Chromium) (default: from --out's suffix, else md)",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="write here (md: charts go next to it); default: standard output, without charts",
)
@click.option("--baseline", metavar="LABEL", help="compare with this target (label or label@host)")
@click.option(
    "--metric", "metrics", multiple=True, help="metric to report: iops, bw, lat-mean, lat-p99, read.lat_p99.9 …"
)
@click.option("--unit", metavar="UNIT", help="the summary's unit for every workload: MB/s, IOPS or us (mean latency)")
@click.option(
    "--chart-format",
    type=click.Choice(CHART_FORMATS),
    default="png",
    show_default=True,
    help="image format of the Markdown report's charts",
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
    """
    from mountbench.report.content import build_report
    from mountbench.report.grid import parse_unit

    chosen_unit = parse_unit(unit)
    fmt = fmt or _format_from_suffix(out)
    if out is not None:
        out = check_out_path(out)
    runs = load_runs(run_refs, sources, db)
    built = build_report(runs, baseline=baseline, metrics=metrics, unit=chosen_unit)
    if fmt == "md":
        _write_markdown(built, out, chart_format, per_client)
    elif fmt == "html":
        from mountbench.report.html import render_html

        _emit(render_html(built, per_client=per_client), out)
    elif fmt == "pdf":
        from mountbench.cli.pdf import html_to_pdf
        from mountbench.report.html import render_html

        if out is None:
            raise UsageError("--format pdf needs --out FILE.pdf: a PDF is not written to the terminal")
        html_to_pdf(render_html(built, per_client=per_client), out)
        _note(f"wrote {out}")
    elif fmt == "csv":
        _write_csv(built, out, samples)
    else:
        from mountbench.report.sections import exports

        document = make_document(list(built.runs), summary=built.summary)  # runs relabelled as in the summary
        for section in exports(built):  # sweeps, pick two: each section's records
            document[section.name] = section.records
        if out is None:
            click.echo(json.dumps(document, indent=1))
        else:
            write_document(out, document)
            _note(f"wrote {out}")


# --- helpers ------------------------------------------------------------------------------------


def load_runs(run_refs: Sequence[str], sources: Sequence[Path], db: Path | None) -> list[RunData]:
    """Runs named by id (default: the last stored run unless files are given), then the files' runs."""
    from mountbench.report.content import unique_runs

    runs: list[RunData] = []
    refs = list(run_refs) or ([] if sources else ["last"])
    if refs:
        with Store(db or default_db_path(), writer=False) as store:
            runs += [store.load_run(ref) for ref in refs]
    for path in sources:
        runs += read_document(path.expanduser())
    return unique_runs(runs)


def _format_from_suffix(out: Path | None) -> str:
    """The format --out's suffix names; no suffix: Markdown; a suffix of no format: refused (it used to
    get Markdown, so that r.pdf held Markdown)."""
    if out is None or not out.suffix:
        return "md"
    found = _SUFFIXES.get(out.suffix.lower())
    if found is None:
        known = ", ".join(sorted(set(_SUFFIXES)))
        raise UsageError(f"--out {out}: no report format has the suffix {out.suffix}; use one of {known} or --format")
    return found


def check_out_path(path: Path) -> Path:
    """Refuse an output path that cannot be written, before any work is done."""
    path = path.expanduser()
    if path.is_dir():
        raise UsageError(f"--out {path} is a directory; give a file name, e.g. {path / 'report.md'}")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"--out {path}: directory {parent} does not exist; create it or choose another path")
    probe = path.with_name(f".{path.name}.tmp")
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"cannot write {path} ({exc.strerror}); choose a writable path") from None
    return path


def write_text(path: Path, text: str) -> None:
    """Write atomically (temp file + rename): a reader never sees half a report."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path} ({exc.strerror}); choose a writable path") from None


def _emit(text: str, out: Path | None) -> None:
    if out is None:
        click.echo(text, nl=False)
        return
    write_text(out, text)
    _note(f"wrote {out}")


def _write_markdown(built: Report, out: Path | None, chart_format: str, per_client: bool = False) -> None:
    from mountbench.report.markdown import render_markdown

    if out is None:  # no charts: matplotlib is not even imported
        click.echo(render_markdown(built, per_client=per_client), nl=False)
        return
    from mountbench.report import charts as charts_mod

    written = charts_mod.write_charts(built, out.parent, out.stem, chart_format)
    charts = {chart.key: path.name for chart, path in written}
    write_text(out, render_markdown(built, charts, per_client=per_client))
    _note(f"wrote {out} and {len(written)} chart(s) next to it ({out.stem}-*.{chart_format})")


def _write_csv(built: Report, out: Path | None, samples: bool) -> None:
    from mountbench.report.csvexport import samples_csv, summary_csv

    if out is None:
        click.echo(samples_csv(built) if samples else summary_csv(built), nl=False)
        return
    raw = out.with_name(f"{out.stem}-samples{out.suffix or '.csv'}")
    write_text(out, summary_csv(built))
    write_text(raw, samples_csv(built))
    _note(f"wrote {out} (one row per summary cell) and {raw} (one row per sample)")
    from mountbench.report.sections import exports

    for section in exports(built):  # sweeps, pick two: a file each, next to the summary
        path = out.with_name(f"{out.stem}{section.suffix}{out.suffix or '.csv'}")
        write_text(path, section.csv)
        _note(f"wrote {path} ({section.note})")


def _note(text: str) -> None:
    click.echo(text, err=True)
