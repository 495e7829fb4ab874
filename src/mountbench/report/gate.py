"""A run against its baseline (analysis/across.py) as people and CI systems read it: the terminal's
tables, a Markdown summary for a CI job's page (every line within 80 columns) and a JUnit XML file
(one testsuite, one testcase per target and workload: a <failure> for a regression beyond the
threshold, <skipped> for an undecided one with the bound it showed, <error> for no data).

Pure: an Against and the two runs in, text out.
"""

from __future__ import annotations

import datetime
import math
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from mountbench.analysis.across import IMPROVED, NO_DATA, REGRESSED, UNDECIDED, WITHIN, Against, Outcome
from mountbench.analysis.comparable import Difference
from mountbench.analysis.metrics import describe
from mountbench.analysis.noise import noise_of
from mountbench.blocks.table import CellView, Column, RichLayout, TableView
from mountbench.blocks.to_markdown import md_table
from mountbench.blocks.to_terminal import rich_table
from mountbench.model import ACCESS_CLASSES, RunData, RunLevel
from mountbench.report.cells import format_value
from mountbench.report.phrasing import factor_text, standing
from mountbench.units import sig3

WIDTH = 80  # the Markdown summary's lines, at most
STYLE = {REGRESSED: "bold red", IMPROVED: "green", WITHIN: "", UNDECIDED: "yellow", NO_DATA: "red"}


def percent(threshold: float) -> str:
    """'±10%'."""
    return f"±{threshold * 100:g}%"


@dataclass(frozen=True)
class Context:
    """What the outputs say about the two runs besides the verdicts."""

    run: RunData
    baseline: RunData
    source: str  # how the baseline was named: "run 2026…", "base.json (run 2026…)"
    warnings: tuple[Difference, ...] = ()
    fail_on: bool = False  # --fail-on given: a regression fails the command


def change_text(outcome: Outcome) -> str:
    """'2.31× slower (1.90–2.80×)', '≈ same (0.96–1.04×)', 'within 0.79–1.27×', 'no data: why'."""
    c = outcome.comparison
    if c is None:
        return f"no data: {outcome.how}"
    if outcome.verdict == UNDECIDED:
        if outcome.reach is not None:
            return f"within {sig3(outcome.reach.low)}–{sig3(outcome.reach.bound)}×"
        return f"{factor_text(c.ratio)}, {outcome.how}"
    return standing(c, describe(outcome.metric)).text


def verdict_text(outcome: Outcome, threshold: float) -> str:
    """'regressed: 2.31× slower (1.90–2.80×)', 'within ±10%: ≈ same (…)', 'undecided: within 0.79–1.27×'."""
    word = f"within {percent(threshold)}" if outcome.verdict == WITHIN else outcome.verdict
    if outcome.verdict == NO_DATA:
        return f"no data: {outcome.how}"
    return f"{word}: {change_text(outcome)}"


def decider(outcome: Outcome, threshold: float, levels: dict[str, tuple[RunLevel, RunLevel]]) -> str:
    """What would decide an undecided comparison, one sentence ('' for the others)."""
    if outcome.verdict != UNDECIDED:
        return ""
    reach = outcome.reach
    if reach is None:
        return "one sample a side gives no interval: run at least two rounds"
    if reach.run_level_bound or reach.rounds is None:
        now, then = levels.get(outcome.target, (None, None))
        moved = _level_words(now, then, outcome)
        return (f"no number of rounds shows it within {percent(threshold)}: {moved}; `mountbench calibrate DIR` "
                "measures how far yours moves, or a wider --fail-on")  # fmt: skip
    return f"about {reach.range_text} a side (a baseline and a run of --repeat {reach.sure_rounds or reach.rounds})"


def _level_words(now: RunLevel | None, then: RunLevel | None, outcome: Outcome) -> str:
    if now is None or then is None or outcome.comparison is None:
        return "runs of this storage differ from each other by more than that"
    sd = math.sqrt(outcome.comparison.run_var)
    sources = {now.source, then.source}
    source = "calibrated" if sources == {"calibrated"} else "its filesystem type's default"
    return f"two runs of this storage differ by ±{sd * 100:.2g}% in level ({source})"


# --- the terminal --------------------------------------------------------------------------------


FOLDED = RichLayout(overflow="fold", columns=((1, Column(overflow="ellipsis")), (2, Column(overflow="ellipsis"))))


def terminal(against: Against, context: Context) -> list[object]:
    """Rich renderables: the heading, one table per target, the notes and the result line."""
    parts: list[object] = [Text(heading(against, context), style="bold")]
    levels = _levels(against)
    notes: list[str] = []
    for pair in against.pairs:
        rows = [o for o in against.outcomes if o.target == pair.target]
        said = f"{pair.target} against the baseline's {pair.baseline}" if pair.renamed else pair.target
        if pair.across:
            said += f" (across storage: {pair.across})"
        view = TableView(f"against-{pair.target}", said, ["workload", "then", "now", "verdict"], [], align="lrrl")
        for outcome in rows:
            info = describe(outcome.metric)
            mark = ""
            note = decider(outcome, against.threshold, levels) or (outcome.how if outcome.verdict == WITHIN else "")
            if note:  # one number a note, however many comparisons it is said of
                if note not in notes:
                    notes.append(note)
                mark = f" [{notes.index(note) + 1}]"
            view.rows.append([
                CellView(f"{outcome.title} · {info.label}"),
                CellView(_median(outcome.then, outcome.metric)),
                CellView(_median(outcome.now, outcome.metric)),
                CellView(verdict_text(outcome, against.threshold) + mark, style=STYLE[outcome.verdict]),
            ])  # fmt: skip
        parts.append(rich_table(view, layout=FOLDED))
    parts += [Text(f"[{i}] {note}") for i, note in enumerate(notes, 1)]
    parts += [Text(line) for line in facts(against, context)]
    parts.append(Text(result_line(against, context), style="bold red" if against.regressed else "bold"))
    return parts


def _median(values: Sequence[float], metric: str) -> str:
    if not values:
        return "–"
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return format_value(median, describe(metric))


def _levels(against: Against) -> dict[str, tuple[RunLevel, RunLevel]]:
    return {target: (now, then) for target, now, then in against.levels}


def heading(against: Against, context: Context) -> str:
    when = _when(context.baseline.created_at)
    return (f"Against baseline {context.source}, {when}: threshold {percent(against.threshold)}, "
            f"{against.size} comparisons, 95% for all of them together")  # fmt: skip


def facts(against: Against, context: Context) -> list[str]:
    """The notes every output carries: what differs between the runs, and each side's run level."""
    lines = []
    for name, run in (("this run", context.run), ("the baseline", context.baseline)):
        busy = noise_of(run.samples).sentence()
        if busy:  # what moves a run's level beyond the run level assumed: said beside every verdict it touches
            lines.append(f"{name}: {busy}, and runs on a busy machine differ by more than their run level says")
    if context.warnings:
        lines.append("compared, though these differ: " + "; ".join(d.text for d in context.warnings))
    for target, now, then in against.levels:
        lines.append(f"run level of {target} (how far its level moves between runs): now {_level_text(now)}; "
                     f"the baseline's {_level_text(then)}")  # fmt: skip
        shown = [o for o in against.outcomes if o.target == target and o.shown_runs and o.comparison is not None]
        if shown:
            moved = sorted(math.sqrt(o.comparison.run_var / 2) for o in shown if o.comparison is not None)
            spread = f"±{moved[0] * 100:.2g}%" if moved[0] == moved[-1] else (
                f"±{moved[0] * 100:.2g}–{moved[-1] * 100:.2g}%")  # fmt: skip
            runs = max(o.shown_runs for o in shown)
            uses = "1 of its comparisons uses" if len(shown) == 1 else f"{len(shown)} of its comparisons use"
            lines.append(f"run level of {target}: {uses} what {runs} earlier runs of this storage show instead: its "
                         f"level moved {spread} between them, more than that")  # fmt: skip
    return lines


def _level_text(level: RunLevel) -> str:
    shown = ", ".join(f"±{sd * 100:.2g}% {access}" for sd, access in zip(level.level, ACCESS_CLASSES, strict=True))
    return f"{shown} ({level.source})"


def counts(against: Against) -> str:
    """'1 regressed, 2 within ±10%, 3 undecided' (the verdicts that occur, in a fixed order)."""
    said = []
    for verdict in (REGRESSED, IMPROVED, WITHIN, UNDECIDED, NO_DATA):
        found = len(against.of(verdict))
        if found:
            said.append(f"{found} {'within ' + percent(against.threshold) if verdict == WITHIN else verdict}")
    return ", ".join(said) or "nothing compared"


def result_line(against: Against, context: Context) -> str:
    total = len(against.outcomes)
    line = f"against {context.baseline.id}: {counts(against)} (of {total})"
    if against.regressed:
        worst = ", ".join(f"{o.target} {o.title}" for o in against.regressed[:3])
        more = f" and {len(against.regressed) - 3} more" if len(against.regressed) > 3 else ""
        line += f"; regressed beyond {percent(against.threshold)}: {worst}{more}"
        line += " (exit status 1: --fail-on)" if context.fail_on else " (--fail-on would make that exit status 1)"
    return line


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


# --- Markdown --------------------------------------------------------------------------------------


def markdown(against: Against, context: Context) -> str:
    """A summary for a CI job's page ($GITHUB_STEP_SUMMARY): every line within WIDTH columns."""
    title = (f"regressed beyond {percent(against.threshold)}" if against.regressed
             else f"no regression beyond {percent(against.threshold)}")  # fmt: skip
    lines = [f"## mountbench: {title}", ""]
    lines += _wrapped(
        f"Run `{context.run.id}` against baseline {context.source} ({_when(context.baseline.created_at)}) on "
        f"{context.run.host.get('hostname', '?')}, {context.run.host.get('fio_version', 'fio')}: {counts(against)}; "
        f"{against.size} comparisons, 95% for all of them together."
    )
    lines.append("")
    rows = [
        (o.target, o.title, f"**{o.verdict}**" if o.verdict == REGRESSED else _short_verdict(o, against.threshold),
         change_text(o) if o.verdict != NO_DATA else o.how)
        for o in against.outcomes
    ]  # fmt: skip
    table = md_table(("target", "workload", "verdict", "change (now vs then)"), rows, padded=True).splitlines()
    if all(len(line) <= WIDTH for line in table):
        lines += table
    else:  # a long label or title: one item a comparison, wrapped
        for target, title, verdict, change in rows:
            lines += _wrapped(f"- {verdict} · {target} · {title}: {change}", indent="  ")
    levels = _levels(against)
    notes: dict[str, list[str]] = {}
    for outcome in against.outcomes:
        text = decider(outcome, against.threshold, levels)
        if text:
            notes.setdefault(text, []).append(f"{outcome.target} · {outcome.title}")
    if notes:
        lines.append("")
        for text, said in notes.items():
            lines += _wrapped(f"- {', '.join(said)}: {text}", indent="  ")
    said = facts(against, context)
    if said:
        lines.append("")
        for line in said:
            lines += _wrapped(line)
    return "\n".join(lines) + "\n"


def _short_verdict(outcome: Outcome, threshold: float) -> str:
    return f"within {percent(threshold)}" if outcome.verdict == WITHIN else outcome.verdict


def _wrapped(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False)


# --- JUnit XML -------------------------------------------------------------------------------------


def junit(against: Against, context: Context) -> str:
    """The Ant/Jenkins JUnit format: <testsuites> holding one <testsuite>, one <testcase> per (target,
    workload); a regression is a <failure>, an undecided comparison <skipped> with its bound, no data an
    <error>; each testcase's <system-out> says every metric's verdict."""
    cases = against.cases()
    verdicts = [_case_verdict(outcomes) for outcomes in cases.values()]
    walls = _walls(context.run)
    total_time = sum(walls.values())
    totals = {
        "tests": str(len(cases)),
        "failures": str(verdicts.count(REGRESSED)),
        "errors": str(verdicts.count(NO_DATA)),
        "skipped": str(verdicts.count(UNDECIDED)),
        "time": f"{total_time:.3f}",
    }
    root = ET.Element("testsuites", {"name": "mountbench", **totals})
    suite = ET.SubElement(root, "testsuite", {
        "name": f"mountbench run --against {context.baseline.id}",
        **totals,
        "timestamp": datetime.datetime.fromtimestamp(context.run.created_at).isoformat(timespec="seconds"),
        "hostname": str(context.run.host.get("hostname", "")),
    })  # fmt: skip
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("run", context.run.id),
        ("baseline", context.baseline.id),
        ("baseline.source", context.source),
        ("threshold", f"{against.threshold:g}"),
        ("fio", str(context.run.host.get("fio_version", ""))),
        ("comparisons", str(against.size)),
        ("level", "0.95 for all comparisons together"),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    for (target, workload), outcomes in cases.items():
        case = ET.SubElement(suite, "testcase", {
            "name": f"{outcomes[0].title} ({workload})",
            "classname": f"mountbench.{target}",
            "time": f"{walls.get((target, workload), 0.0):.3f}",
        })  # fmt: skip
        verdict = _case_verdict(outcomes)
        detail = "\n".join(f"{describe(o.metric).label}: {verdict_text(o, against.threshold)}" for o in outcomes)
        chosen = [o for o in outcomes if o.verdict == verdict]
        message = "; ".join(f"{describe(o.metric).label} {verdict_text(o, against.threshold)}" for o in chosen)
        if verdict == REGRESSED:
            failure = ET.SubElement(case, "failure", {"message": f"{message}, beyond {percent(against.threshold)}",
                                                      "type": "regressed"})  # fmt: skip
            failure.text = detail
        elif verdict == NO_DATA:
            error = ET.SubElement(case, "error", {"message": message, "type": "no-data"})
            error.text = detail
        elif verdict == UNDECIDED:
            ET.SubElement(case, "skipped", {"message": message})
        out = ET.SubElement(case, "system-out")
        out.text = detail
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _case_verdict(outcomes: Sequence[Outcome]) -> str:
    """A testcase's: regressed if any metric regressed, else no data, else undecided, else passed."""
    found = {o.verdict for o in outcomes}
    for verdict in (REGRESSED, NO_DATA, UNDECIDED, IMPROVED):
        if verdict in found:
            return verdict
    return WITHIN


def _walls(run: RunData) -> dict[tuple[str, str], float]:
    walls: dict[tuple[str, str], float] = {}
    for sample in run.samples:
        key = (sample.target, sample.workload)
        walls[key] = walls.get(key, 0.0) + sample.wall_s
    return walls
