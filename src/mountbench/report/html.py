"""The HTML report: one self-contained file (inline CSS, inline SVG charts, a few
lines of inline JavaScript to sort tables; nothing fetched from the network).

Pure: ``render_html(report)`` returns the page. The view model built here holds
only display strings; the template (templates/report.html.j2) only lays them out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import jinja2
from markupsafe import Markup

from mountbench import __version__
from mountbench.report import content, costview
from mountbench.report.cells import format_ratio, format_spread, format_value
from mountbench.report.chartkeys import bars_key, block_label, percentile_key, sweep_key
from mountbench.report.charts import Chart, inline_svg, plan_charts
from mountbench.report.content import Report
from mountbench.report.verdicts import verdicts
from mountbench.stats import CONFIDENCE, OUTLIER_Z, UNSTABLE_CV
from mountbench.summary import Row
from mountbench.units import format_bytes, format_seconds

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("mountbench.report", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


@dataclass
class CellView:
    text: str
    sort: str = ""  # numeric sort key ("" sorts last)
    classes: str = ""
    notes: str = ""  # tooltip: the notes' text
    marks: str = ""  # "[1,2]"


@dataclass
class TableView:
    id: str
    heading: str
    headers: list[str]
    rows: list[list[CellView]]
    chart: Markup | None = None
    chart_title: str = ""
    numeric_from: int = 1  # columns from this index are right-aligned


@dataclass
class Page:
    title: str
    intro: str
    warnings: list[str]
    caveats: list[tuple[int, str]]
    verdicts: list[dict[str, str]]
    tables: list[TableView]
    ratio_chart: Markup | None
    ratio_title: str
    percentiles: list[TableView]
    sweeps: list[TableView]
    costs: list[TableView]  # study S1's host cost per case (report/costview.py)
    costs_intro: str
    hosts: list[list[str]]
    runs: list[dict[str, str]]
    targets: list[list[str]]
    workloads: list[dict[str, str]]
    methodology: list[str]
    notes: list[tuple[int, str]]
    generated: str


def render_html(report: Report, *, with_charts: bool = True) -> str:
    """The whole page as one string."""
    svgs = {chart.key: (chart, Markup(inline_svg(chart))) for chart in plan_charts(report)} if with_charts else {}
    return _ENV.get_template("report.html.j2").render(page=build_page(report, svgs))


def build_page(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> Page:
    ratio = svgs.get("ratio")
    return Page(
        title="mountbench: " + " vs ".join(report.summary.targets),
        intro=_intro(report),
        warnings=list(report.warnings),
        caveats=[(report.notes.index(c.text) + 1, c.text) for c in content.measurement_caveats(report)],
        verdicts=_verdicts(report),
        tables=_result_tables(report, svgs),
        ratio_chart=ratio[1] if ratio else None,
        ratio_title=ratio[0].title if ratio else "",
        percentiles=_percentile_tables(report, svgs),
        sweeps=_sweep_tables(report, svgs),
        costs=_cost_tables(report, svgs),
        costs_intro=costview.section_intro(),
        hosts=_hosts(report),
        runs=_runs(report),
        targets=_targets(report),
        workloads=[
            {
                "name": w.name,
                "title": w.title,
                "kind": w.kind,
                "settings": content.workload_summary(w),
                "options": content.workload_options(w),
                "source": w.source,
            }
            for w in content.all_workloads(report)
        ],
        methodology=_methodology(report),
        notes=list(enumerate(report.notes, 1)),
        generated=f"mountbench {__version__}",
    )


def _intro(report: Report) -> str:
    hosts = ", ".join(dict.fromkeys(c.host for c in report.columns))
    text = (
        f"Runs {', '.join(run.id for run in report.runs)} on {hosts}; baseline {report.summary.baseline}. "
        f"Each cell: the median of {content.repetitions(report)} samples ± their coefficient of variation; "
        "ratio = target ÷ baseline (ratio of geometric means) with its 95% confidence interval; "
        "≈ = the same within noise. Click a column heading to sort."
    )
    if report.multi_host:
        text += " Columns are named label@host: these runs come from different machines."
    return text


def _verdicts(report: Report) -> list[dict[str, str]]:
    found = []
    rows = {(r.workload, r.metric.name): r for r in report.summary.rows}
    for item in verdicts(report.summary):
        row = rows[(item.workload, item.metric)]
        numbers = sorted(
            set(report.measurement_marks(row.cells[item.target]))
            | set(report.measurement_marks(row.cells[item.baseline]))
        )
        kind = "same" if item.better is None else ("better" if item.better else "worse")
        found.append({"text": item.text, "kind": kind, "marks": _marks(numbers), "notes": _tooltip(report, numbers)})
    return found


def _marks(numbers: list[int] | tuple[int, ...]) -> str:
    return f"[{','.join(map(str, numbers))}]" if numbers else ""


def _tooltip(report: Report, numbers: list[int] | tuple[int, ...]) -> str:
    return "\n".join(f"[{n}] {report.notes[n - 1]}" for n in numbers)


def _heading(report: Report, label: str) -> str:
    """Merged runs from several hosts already have label@host column names."""
    return f"{label} (baseline)" if label == report.summary.baseline else label


# --- result tables ------------------------------------------------------------------------------


def _result_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    baseline = report.summary.baseline
    others = [t for t in report.summary.targets if t != baseline]
    tables = []
    for index, group in enumerate(report.groups):
        headers = ["workload", *(_heading(report, t) for t in report.summary.targets)]
        headers += [f"{t} ÷ {baseline}" for t in others]
        rows = [
            [CellView(row.title)]
            + [_value_cell(report, row, t) for t in report.summary.targets]
            + [_ratio_cell(report, row, t) for t in others]
            for row in group.rows
        ]
        chart = svgs.get(bars_key(group))
        tables.append(
            TableView(
                id=f"results-{index + 1}",
                heading=content.group_heading(group),
                headers=headers,
                rows=rows,
                chart=chart[1] if chart else None,
                chart_title=chart[0].title if chart else "",
            )
        )
    return tables


def _value_cell(report: Report, row: Row, target: str) -> CellView:
    cell = row.cells[target]
    marks = report.cell_marks(row, target)
    classes = []
    if report.measurement_marks(cell):
        classes.append("caveat")
    if any(c.code in content.QUALITY_CODES for c in cell.caveats):
        classes.append("quality")
    if cell.summary is None:
        classes.append("failed")
        text = f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
        return CellView(text, "", " ".join(classes), _tooltip(report, marks), _marks(marks))
    text = format_value(cell.summary.median, row.metric)
    spread = format_spread(cell)
    if spread:
        text += f" {spread}"
    if cell.failed:
        text += f", {cell.failed} failed"
    return CellView(text, repr(cell.summary.median), " ".join(classes), _tooltip(report, marks), _marks(marks))


def _ratio_cell(report: Report, row: Row, target: str) -> CellView:
    comparison = row.cells[target].comparison
    if comparison is None:
        return CellView("–")
    if math.isnan(comparison.low):
        kind = "unknown"  # no interval: too few samples to call it either way
    elif not comparison.significant:
        kind = "same"
    else:
        kind = "better" if (comparison.ratio > 1) == row.metric.higher_is_better else "worse"
    sort = repr(comparison.ratio) if math.isfinite(comparison.ratio) else ""
    marks = report.ratio_marks(row, target)
    return CellView(format_ratio(comparison), sort, f"ratio {kind}", _tooltip(report, marks), _marks(marks))


def _column_marks(report: Report, rows: tuple[Row, ...], target: str) -> list[int]:
    return sorted({n for row in rows for n in report.measurement_marks(row.cells[target])})


def _percentile_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    targets = report.summary.targets
    tables = []
    for index, curve in enumerate(report.percentiles):
        headers = ["percentile"]
        for t in targets:
            marks = _marks(_column_marks(report, curve.rows, t))
            headers.append(f"{_heading(report, t)} {marks}".strip())
        rows = []
        for percentile, row in zip(curve.percentiles, curve.rows, strict=True):
            cells = [CellView(f"p{percentile:g}", repr(percentile))]
            for t in targets:
                summary = row.cells[t].summary
                cells.append(
                    CellView(format_seconds(summary.median), repr(summary.median)) if summary else CellView("–")
                )
            rows.append(cells)
        chart = svgs.get(percentile_key(curve))
        tables.append(
            TableView(
                f"percentiles-{index + 1}",
                f"{curve.title}: {curve.direction} latency (lower is better)",
                headers,
                rows,
                chart[1] if chart else None,
                chart[0].title if chart else "",
            )
        )
    return tables


def _sweep_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    targets = report.summary.targets
    tables = []
    for index, sweep in enumerate(report.sweeps, 1):
        headers = ["block size", "workload"]
        headers += [f"{_heading(report, t)} {_marks(_column_marks(report, sweep.rows, t))}".strip() for t in targets]
        rows = []
        for size, row in zip(sweep.block_sizes, sweep.rows, strict=True):
            cells = [CellView(block_label(size), str(size)), CellView(row.workload)]
            for t in targets:
                cell = row.cells[t]
                if cell.summary is None:
                    cells.append(CellView("–"))
                    continue
                text = f"{format_value(cell.summary.median, row.metric)} {format_spread(cell)}".strip()
                cells.append(CellView(text, repr(cell.summary.median), "peak" if _is_peak(sweep, row, t) else ""))
            rows.append(cells)
        chart = svgs.get(sweep_key(index, sweep))
        tables.append(
            TableView(
                f"sweep-{index}",
                f"{sweep.metric.label} against block size ({sweep.settings}); bold: each target's best block size",
                headers,
                rows,
                chart[1] if chart else None,
                chart[0].title if chart else "",
                numeric_from=2,
            )
        )
    return tables


def _cost_tables(report: Report, svgs: Mapping[str, tuple[Chart, Markup]]) -> list[TableView]:
    tables = []
    for index, case in enumerate(costview.cost_cases(report), 1):
        headers, body = costview.case_table(report, case)
        rows = [
            [CellView(text, "", "", _tooltip(report, marks), _marks(marks)) for text, marks in cells] for cells in body
        ]
        chart = svgs.get(case.key)
        tables.append(TableView(f"cost-{index}", case.title, headers, rows, chart[1] if chart else None,
                                chart[0].title if chart else ""))  # fmt: skip
    return tables


def _is_peak(sweep: content.Sweep, row: Row, target: str) -> bool:
    medians = [r.cells[target].summary.median for r in sweep.rows if r.cells[target].summary]
    summary = row.cells[target].summary
    return bool(medians) and summary is not None and summary.median == max(medians)


# --- environment and methodology ------------------------------------------------------------------


def _hosts(report: Report) -> list[list[str]]:
    return [
        [
            name,
            str(host.get("os", "?")),
            str(host.get("cpu_model", "?")),
            str(host.get("cpu_count", "?")),
            format_bytes(float(host.get("ram_bytes") or 0)),
            str(host.get("fio_version") or "?"),
            str(host.get("mountbench_version", "?")),
        ]
        for name, host in content.run_hosts(report).items()
    ]


def _runs(report: Report) -> list[dict[str, str]]:
    found = []
    for run in report.runs:
        facts = content.run_facts(run)
        caches = "; ".join(f"{action}: {count} samples" for action, count in content.cache_actions(run))
        found.append(
            {
                "id": run.id,
                "host": content.host_of_run(report, run.id),
                "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(run.created_at)),
                "status": run.status,
                "command": run.command,
                "facts": "; ".join(facts),
                "caches": caches or "no samples",
            }
        )
    return found


def _targets(report: Report) -> list[list[str]]:
    rows = []
    for column in report.columns:
        info = column.info
        if info is None:
            rows.append([column.label, column.host, column.path, "not inspected", "", "", "", ""])
            continue
        rows.append(
            [
                column.label,
                column.host,
                column.path,
                info.fstype,
                info.mount_source,
                info.mount_options,
                "accepted" if info.odirect else f"refused ({info.odirect_detail})",
                f"{format_bytes(info.free_bytes)} of {format_bytes(info.total_bytes)}",
            ]
        )
    return rows


def _methodology(report: Report) -> list[str]:
    seeds = ", ".join(str(run.config.seed) for run in report.runs)
    fio = ", ".join(sorted({str(run.host.get("fio_version") or "?") for run in report.runs}))
    return [
        f"Every (target, workload) pair ran {content.repetitions(report)} measured times in interleaved rounds"
        f"{content.warmup_phrase(report)}: each round runs every pair once, in an order shuffled by the seed "
        f"({seeds}), so drift hits every target alike.",
        f"fio ({fio}) does the I/O and reports in JSON; mountbench only plans, parses and stores. Tree workloads "
        "time one real command (tar, find, cp, git, rm) as a whole process.",
        "O_DIRECT is probed on every target with a real aligned write and read; a direct workload on a target "
        "that refuses it runs buffered and its cells say so.",
        "A buffered workload whose working set is under twice the RAM may be served by the page cache and is "
        "marked; as root, caches are dropped before buffered samples, and what was done is recorded per sample.",
        "Median: its interval comes from order statistics (distribution-free) and states the confidence it "
        "really has (75% with 3 samples).",
        f"Ratio to the baseline: ratio of geometric means, with a {CONFIDENCE:.0%} interval from Welch's t on the "
        "logarithms; ≈ when that interval contains 1 (the difference is within noise).",
        f"A coefficient of variation above {UNSTABLE_CV:.0%} marks a cell unstable; outliers are samples with a "
        f"modified z-score above {OUTLIER_Z}.",
    ]
