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
from mountbench.drift import ALPHA, MIN_CHANGE
from mountbench.report import content, picktwo, sweeptext
from mountbench.report.cells import format_ratio, format_spread, format_value
from mountbench.report.chartkeys import bars_key, grid_key, percentile_key, sweep_key
from mountbench.report.charts import Chart, inline_svg, plan_charts
from mountbench.report.content import Report
from mountbench.report.verdicts import verdicts
from mountbench.stats import CONFIDENCE, OUTLIER_Z
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
    caption: str = ""  # a sentence on what the table shows, under its heading


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
    pick_two: Markup  # lab --probe: the pick-two section (report/picktwo.py), empty without it
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
        pick_two=Markup(picktwo.render_html(report, svgs[picktwo.KEY][1] if picktwo.KEY in svgs else None)),
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
    """One table and chart per sweep; per grid, a table per target and one heat map."""
    targets = report.summary.targets
    tables = []
    for index, sweep in enumerate(report.sweeps, 1):
        named = not sweep.generated
        headers = [sweeptext.option_label(sweep.option), *(["workload"] if named else [])]
        headers += [f"{_heading(report, t)} {_marks(_column_marks(report, sweep.rows, t))}".strip() for t in targets]
        rows = []
        for i, (value, number, row) in enumerate(zip(sweep.values, sweep.numbers, sweep.rows, strict=True)):
            cells = [CellView(value, repr(number)), *([CellView(row.workload)] if named else [])]
            for t in targets:
                cell = row.cells[t]
                optimum = sweep.optima.get(t)
                classes = " ".join(
                    name
                    for name, on in (("peak", optimum and optimum.peak == i), ("knee", optimum and optimum.knee == i))
                    if on
                )
                text = sweeptext.point_text(cell, sweep.unit[0]) + sweeptext.point_marks(sweep, i, t)
                sort = repr(cell.summary.median) if cell.summary else ""
                cells.append(CellView(text, sort, classes))
            rows.append(cells)
        blank = [CellView("")] if named else []
        rows.append([CellView(f"{sweeptext.PEAK_MARK} optimum"), *blank])
        rows[-1] += [CellView(sweeptext.optimum_text(sweep, t), "", "peak") for t in targets]
        rows.append([CellView(f"{sweeptext.KNEE_MARK} knee"), *blank])
        rows[-1] += [CellView(sweeptext.knee_text(sweep, t), "", "knee") for t in targets]
        chart = svgs.get(sweep_key(index, sweep))
        tables.append(
            TableView(
                f"sweep-{index}",
                sweeptext.heading(sweep),
                headers,
                rows,
                chart[1] if chart else None,
                chart[0].title if chart else "",
                numeric_from=2 if named else 1,
                caption=sweeptext.explanation(sweep),
            )
        )
    for index, grid in enumerate(report.grids, 1):
        chart = svgs.get(grid_key(index, grid))
        for k, target in enumerate(targets):
            last = k == len(targets) - 1
            headers = [f"{_heading(report, target)}: {grid.row_option} ↓ {grid.column_option} →"]
            headers += list(grid.column_values)
            rows = []
            for i, value in enumerate(grid.row_values):
                cells = [CellView(value, repr(grid.row_numbers[i]))]
                for j in range(len(grid.column_values)):
                    row = grid.cells.get((i, j))
                    if row is None:
                        cells.append(CellView(""))
                        continue
                    best = grid.best.get(target) == (i, j)
                    text = sweeptext.point_text(row.cells[target], grid.unit[0])
                    summary = row.cells[target].summary
                    cells.append(
                        CellView(
                            text + (f" {sweeptext.PEAK_MARK}" if best else ""),
                            repr(summary.median) if summary else "",
                            "peak" if best else "",
                        )
                    )
                rows.append(cells)
            tables.append(
                TableView(
                    f"grid-{index}-{k + 1}",
                    f"{sweeptext.grid_heading(grid)} — {_heading(report, target)}",
                    headers,
                    rows,
                    chart[1] if chart and last else None,
                    chart[0].title if chart and last else "",
                    caption=sweeptext.grid_explanation(grid) if k == 0 else "",
                )
            )
    return tables


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
        "Drift: the samples of each cell, in the order they were taken, are tested for a trend (Mann–Kendall, "
        f"p < {ALPHA:g}, and a change of at least {MIN_CHANGE:.0%} from the first rounds to the last); a trend on the "
        "baseline is drift of the machine. Interleaved rounds keep ratios fair under slow drift, which the "
        "per-round ratios show; a trend in them means the drift was too large for that. A first sample far from "
        f"the rest (a cold start) is flagged, and outliers are samples with a modified z-score above {OUTLIER_Z}.",
    ]
