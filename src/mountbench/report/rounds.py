"""Rounds per cell: how many rounds each (workload, target) got and why no more (--until, --budget)."""

from __future__ import annotations

from collections.abc import Sequence

from mountbench.analysis import sequential
from mountbench.analysis.summary import RunSummary, summarize_runs
from mountbench.errors import UsageError
from mountbench.model import RunData
from mountbench.report.model import (
    Column,
    Report,
)


def stop_reasons(
    runs: Sequence[RunData], columns: Sequence[Column], known: RunSummary | None = None
) -> dict[tuple[str, str], sequential.Stop]:
    """Each run's cells by the rule that run used, keyed by the report's column labels. ``known``: the report's
    own summary, reused for a report of one run against that run's own baseline (summarised again, the run
    was decided again: the report relabels its runs, and decided.decide_runs knows runs by identity)."""
    stops: dict[tuple[str, str], sequential.Stop] = {}
    for run in runs:
        shown = {c.original: c.label for c in columns if run.id in c.run_ids}
        own = run.config.baseline or (run.targets[0].target.label if run.targets else "")
        if known is not None and len(runs) == 1 and known.baseline == shown.get(own, own):
            originals = {label: original for original, label in shown.items()}
            for (workload, target), stop in sequential.stop_reasons(known, run.config, run.status).items():
                stops[(workload, target if target in originals else shown.get(target, target))] = stop
            continue
        try:
            summary = summarize_runs([run])
        except UsageError:  # its baseline is another run's target: compare within the run itself
            summary = summarize_runs([run], baseline=run.targets[0].target.label)
        for (workload, target), stop in sequential.stop_reasons(summary, run.config, run.status).items():
            stops[(workload, shown.get(target, target))] = stop
    return stops


def rounds_rows(report: Report) -> list[tuple[str, list[str]]]:
    """(workload title, per target 'N · reason') for the rounds table of an adaptive report."""
    rows = []
    for workload in dict.fromkeys(row.workload for row in report.summary.rows):
        title = next(row.title for row in report.summary.rows if row.workload == workload)
        cells = []
        for target in report.summary.targets:
            stop = report.stops.get((workload, target))
            cells.append(f"{stop.rounds} · {stop.reason}" if stop else "–")
        rows.append((title, cells))
    return rows


def rounds_legend(report: Report) -> str:
    """What the reasons in the rounds table mean, for the ones it uses."""
    used = dict.fromkeys(stop.reason for stop in report.stops.values())
    return "; ".join(f"{reason}: {sequential.STOP_WORDS[reason]}" for reason in used)
