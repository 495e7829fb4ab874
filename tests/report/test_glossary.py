"""Issue 48, item 11: a glossary entry for every word the output uses. Not in the glossary, or not plain,
were: CI, ±CV, "too wide to rank", "look's share", "family", Holm's step-down, two one-sided tests, alpha
spending, modified z-score, TSC, stonewalled, spacer; and this issue's own words since (what a headline says
of undecided comparisons, the compact grid's ≥, the progress under --until). Each term the recorded runs'
reports, a run's progress or its notices use is a bold entry of docs/glossary.md; the words the issue named
are there whatever a run shows."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from rich.console import Console

from mountbench.errors import UsageError
from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.grid import one_unit
from mountbench.report.markdown import render_markdown
from mountbench.report.terminal import render_run, render_short

DATA = Path(__file__).parent.parent / "data" / "exports"
GLOSSARY = Path(__file__).resolve().parents[2] / "docs" / "glossary.md"
NAMED_BY_THE_ISSUE = (
    *("CI", "±CV", "too wide to rank", "look's share", "family", "Holm's step-down", "two one-sided tests"),
    *("alpha spending", "modified z-score", "TSC", "stonewalled", "spacer"),
)
# the term as the glossary names it -> how the output says it
TERMS = {
    "undecided": r"\bundecided\b",
    "≈ same": r"≈ same",
    "within ±5 %": r"(faster|slower), within ±5",
    "too wide to rank": r"too wide to rank",
    "at least N× slower": r"at least [\d.]+× (slower|faster)",
    "≥N× slower": r"≥[\d.]+× (slower|faster)",
    "within N× either way": r"within [\d.]+× either way",
    "more rounds would decide": r"more rounds would decide",
    "±5 % out of reach in this run": r"out of reach in this run",
    "±5 % out of reach in any number of rounds": r"out of reach in any number of rounds",
    "known to ±5 %": r"known to ±",
    "CI": r"\bCI\b",
    "±CV": r"±CV",
    "run level": r"run level",
    "moderated": r"moderat",
    "family": r"\bfamily\b",
    "baseline": r"\bbaseline\b",
    "paired": r"\bpaired\b",
    "busy": r"\bbusy\b",
    "round 4 of at most 12": r"round \d+ of at most \d+",
    "ETA ≤ 1m40s": r"ETA ≤",
    "planned rounds taken": r"planned rounds taken",
    "last sample taken": r"last sample taken",
    "modified z-score": r"modified z-score",
    "TSC": r"\bTSC\b",
}


def _entries() -> set[str]:
    return set(re.findall(r"\*\*([^*]+)\*\*", GLOSSARY.read_text()))


def _printed(parts) -> str:
    console = Console(width=120, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    for part in parts:
        console.print(part)
    return console.export_text()


def _progress_under_until() -> str:
    """What a run under --until prints while it runs (cli/progress.py), for two rounds and an added one."""
    from mountbench.cli.progress import Pace, ProgressEvents
    from mountbench.model import PlanItem, Sample

    stream = io.StringIO()
    events = ProgressEvents(Console(file=stream, width=120), pace=Pace(adds_rounds=True))
    events.at_most = lambda: 12
    plan = [PlanItem(r, 0, t, "seq", 1.0) for r in range(2) for t in ("a", "b")]
    events.on_start("r", plan, plan)
    for item in [*plan, PlanItem(2, 0, "a", "seq", 1.0)]:
        events.on_sample_start(item, events.done, 5, 30.0)
        events.on_sample_done(item, Sample(item.target, item.workload, item.round, True, {}))
    fixed = io.StringIO()
    done = ProgressEvents(Console(file=fixed, width=120))
    done.on_start("r", plan[:1], plan[:1])
    done.on_sample_start(plan[0], 0, 1, 1.0)
    done.on_sample_done(plan[0], Sample("a", "seq", 0, True, {}))
    return stream.getvalue() + fixed.getvalue()


@pytest.fixture(scope="module")
def said() -> str:
    texts = [_progress_under_until()]
    for name in ("default-run", "three-targets", "cdm-run", "tree-run", "lab-run"):
        runs = read_document(DATA / f"{name}.json")
        for metrics in ((), ("lat-p99",)):
            try:
                report = build_report(runs, metrics=metrics, unit=one_unit(runs, "auto", metrics))
            except UsageError:  # a run without that metric (the lab's)
                continue
            texts += [_printed(render_run(report)), _printed([render_short(report)]), render_markdown(report)]
    return "\n".join(" ".join(text.split()) for text in texts)


def test_the_words_the_issue_named_are_in_the_glossary():
    assert set(NAMED_BY_THE_ISSUE) <= _entries(), sorted(set(NAMED_BY_THE_ISSUE) - _entries())


def test_every_term_the_output_uses_is_in_the_glossary(said):
    used = {term for term, pattern in TERMS.items() if re.search(pattern, said)}
    assert {"undecided", "round 4 of at most 12", "ETA ≤ 1m40s", "within N× either way"} <= used, sorted(used)
    missing = sorted(used - _entries())
    assert not missing, f"docs/glossary.md has no entry for {missing}"
