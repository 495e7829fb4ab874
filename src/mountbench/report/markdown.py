"""The Markdown report: a blog post's body, paste-ready. The same sections as the HTML
page, in the same order: the answer (one headline per target, the summary grid), the
verdicts, the detail per metric, percentiles, sweeps, environment, methodology and the
notes; every [n] mark links to its note.

Pure: ``render_markdown(report, charts)`` returns text; the caller writes the chart
files (charts.write_charts) and passes their relative paths in. The optional sections
come from the registry (sections/); the tables are the same views HTML lays out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from mountbench.blocks.to_markdown import chapter_markdown, md_code, md_image, md_text
from mountbench.blocks.to_markdown import markdown as md_view
from mountbench.blocks.to_markdown import md_marks as _marks
from mountbench.report import views
from mountbench.report.chartkeys import bars_key
from mountbench.report.grid import unit_name
from mountbench.report.labels import host_of_run
from mountbench.report.methodology import cache_actions, methodology, repetitions, run_facts
from mountbench.report.model import Report
from mountbench.report.notes import in_words
from mountbench.report.phrasing import NOISE, UNDECIDED_LEGEND, interval_legend, same_legend
from mountbench.report.rounds import rounds_legend
from mountbench.report.sections import SECTIONS, Options
from mountbench.report.verdicts import verdicts


def render_markdown(report: Report, charts: Mapping[str, str] | None = None, *, per_client: bool = False) -> str:
    """``charts`` maps chart keys (charts.plan_charts) to image paths relative to the document;
    without it the document says how to get the charts. ``per_client``: runs on several
    clients show each client's figures (report/clients.py)."""
    charts = dict(charts or {})
    options = Options(per_client=per_client)
    parts = [
        _heading(report),
        _headlines(report),
        _intro(report, bool(charts)),
        _warnings(report),
        _summary(report),
        _verdicts(report),
        _results(report, charts),
        *(chapter_markdown(chapter, charts) for section in SECTIONS for chapter in section.chapters(report, options)),
        _environment(report),
        _methodology(report),
        _notes(report),
    ]
    return "\n\n".join(part for part in parts if part).rstrip() + "\n"


# --- text helpers ------------------------------------------------------------------------------


def _when(timestamp: float | None) -> str:
    if not timestamp:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(timestamp))


# --- sections ---------------------------------------------------------------------------------------


def _heading(report: Report) -> str:
    return "# mountbench: " + md_text(" vs ".join(report.summary.targets))


def _headlines(report: Report) -> str:
    """A headline per target in bold; the busy machine under them in italics (issue 48: the answer is the
    strongest type on the page)."""
    answer = "\n".join(f"- **{md_text(h.text)}**" for h in report.headlines if h.kind != NOISE)
    busy = "\n\n".join(f"_{md_text(h.text)}_" for h in report.headlines if h.kind == NOISE)
    return "\n\n".join(part for part in (answer, busy) if part)


def _intro(report: Report, with_charts: bool) -> str:
    ids = ", ".join(md_code(run.id) for run in report.runs)
    hosts = ", ".join(md_text(h) for h in dict.fromkeys(c.host for c in report.columns))
    text = (
        f"Runs {ids} on {hosts}; baseline **{md_text(report.summary.baseline)}**. "
        f"Each value: the median of {md_text(repetitions(report))} samples (± their coefficient of "
        "variation in the detail); each other target is N× faster or slower than the baseline (ratio of "
        "geometric means, paired by round where the run paired them) with its "
        f"{md_text(interval_legend(report.summary, report.adaptive))}; "
        f"{md_text(same_legend(report.summary, report.adaptive))}; {UNDECIDED_LEGEND}; [n] = notes at the end."
    )
    if report.multi_host:
        text += " Columns are named label@host: these runs come from different machines."
    if not with_charts:
        text += " Charts: give --out FILE.md to have them written next to the report."
    return text


def _warnings(report: Report) -> str:
    if not report.warnings:
        return ""
    return "> **Warnings**\n>\n" + "\n".join(f"> - {md_text(w)}" for w in report.warnings)


def _verdicts(report: Report) -> str:
    lines = []
    for item in verdicts(report.summary):
        row = next(r for r in report.summary.rows if r.workload == item.workload and r.metric.name == item.metric)
        lines.append(f"- {md_text(item.text)}{_marks(report.ratio_marks(row, item.target))}")
    return "## Verdicts\n\n" + "\n".join(lines) if lines else ""


def _summary(report: Report) -> str:
    """The summary grid: one table per unit, read and write side by side under each target."""
    if not report.grid.sections:
        return ""
    unit = "" if report.grid.unit == "auto" else f" (--unit {unit_name(report.grid.unit)})"
    parts = [f"## Summary{unit}"]
    for section in report.grid.sections:
        parts.append(f"### {md_text(section.heading)}")
        parts.append(md_view(views.grid_table(report, section)))
    return "\n\n".join(parts)


def _results(report: Report, charts: Mapping[str, str]) -> str:
    parts = ["## Results"]
    baseline = report.summary.baseline
    for group, view in zip(report.groups, views.results_tables(report), strict=True):
        parts.append(f"### {md_text(view.heading)}")
        parts.append(md_view(view))
        parts.append(md_image(charts, bars_key(group), f"{group.metric.label} by workload"))
    ratio = md_image(charts, "ratio", f"each target against {baseline}: right is better")
    if ratio:
        parts += ["### Against the baseline", ratio]
    if report.adaptive:
        table = views.rounds_table(report)
        parts += [f"### {table.heading}", md_view(table), md_text(rounds_legend(report))]
    return "\n\n".join(p for p in parts if p)


# --- environment ------------------------------------------------------------------------------------


def _environment(report: Report) -> str:
    parts = ["## Environment", "### Hosts", md_view(views.hosts_table(report)), "### Runs", _runs_list(report)]
    parts += ["### Targets", md_view(views.targets_table(report))]
    return "\n\n".join(parts)


def _methodology(report: Report) -> str:
    lines = "\n".join(f"- {md_text(line)}" for line in methodology(report))
    return "\n\n".join(["## Methodology", lines, "### Workloads", md_view(views.workloads_table(report))])


def _runs_list(report: Report) -> str:
    lines = []
    for run in report.runs:
        facts = run_facts(run)
        caches = ", ".join(
            f"{action} before {count} sample{'s' if count != 1 else ''}" for action, count in cache_actions(run)
        )
        lines.append(
            f"- {md_code(run.id)} on {md_text(host_of_run(report, run.id))}, started {_when(run.created_at)}, "
            f"{md_text(run.status)}: {md_code(run.command)}; {md_text('; '.join(facts))}. "
            f"Caches: {md_text(caches or 'no samples')}."
        )
    return "\n".join(lines)


def _notes(report: Report) -> str:
    if not report.notes:
        return ""
    return "## Notes\n\n" + "\n".join(
        f'{i}. <a id="note-{i}"></a>{md_text(in_words(text, report.runs))}' for i, text in enumerate(report.notes, 1)
    )
