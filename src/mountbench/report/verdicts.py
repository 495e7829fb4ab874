"""Verdict sentences, stated as the studies did:
"virtiofs is 5.80× faster than 9p at extracting the tree (wall time), 95% CI 5.10–6.40×".

The factor is always ≥ 1 and says which way it goes (phrasing.standing). Three verdicts:
a difference (the interval excludes 1), the same (the interval lies within ±precision),
undecided (neither: the sentence gives the interval and what would decide it). A difference
whose interval's ends are more than 100× apart is said by its near end ("at least 5.59× slower").
"""

from __future__ import annotations

from dataclasses import dataclass

from mountbench.analysis.quality import level_text
from mountbench.analysis.stats import CONFIDENCE, Comparison
from mountbench.analysis.summary import Row, RunSummary
from mountbench.report.phrasing import SAME, UNDECIDED, UNKNOWN, factor_text, standing, words


@dataclass(frozen=True)
class Verdict:
    target: str
    baseline: str
    workload: str
    metric: str
    text: str
    significant: bool
    better: bool | None  # None when the same or undecided
    kind: str = ""  # phrasing's: better | worse | same | undecided | unknown


def verdicts(summary: RunSummary) -> list[Verdict]:
    """One verdict per (row, non-baseline target) that has a ratio."""
    found = []
    for row in summary.rows:
        for label in summary.targets:
            comparison = row.cells[label].comparison
            if label == summary.baseline or comparison is None:
                continue
            found.append(verdict(row, label, summary.baseline, comparison))
    return found


def verdict(row: Row, target: str, baseline: str, comparison: Comparison) -> Verdict:
    said = standing(comparison, row.metric)
    what = f"at {row.title} ({row.metric.label})"
    # the family's level, the one every format states (analysis/family.py): the run's intervals hold together
    level = f"{level_text(CONFIDENCE)} CI"
    if said.kind == SAME:
        text = f"{target} ≈ {baseline} {what}: the same within ±{said.precision * 100:g}% ({level} {said.interval})"
        return Verdict(target, baseline, row.workload, row.metric.name, text, False, None, SAME)
    if said.kind == UNDECIDED:
        shown = f"{level} {said.interval}" if said.interval else f"its {level} spans more than 100×"
        text = (
            f"{target} vs {baseline} {what}: undecided ({shown}: neither a difference nor the same within "
            f"±{said.precision * 100:g}%); {said.decider}"
        )
        return Verdict(target, baseline, row.workload, row.metric.name, text, False, None, UNDECIDED)
    interval = "no confidence interval (too few samples)" if said.kind == UNKNOWN else f"{level} {said.interval}"
    factor = factor_text(said.factor)
    if said.bounded:  # the direction is decided; its ends are too far apart for the estimate to mean much
        factor = f"at least {factor_text(said.low)}"
        interval = f"the near end of its {level}, whose ends are more than 100× apart"
    better = said.word == words(row.metric)[0]
    verb = "uses" if said.word.startswith(("less ", "more ")) else "is"  # uses 3.10× more CPU
    within = f", within ±{said.precision * 100:g}% (a real difference too small to matter)" if said.within else ""
    text = f"{target} {verb} {factor} {said.word} than {baseline} {what}, {interval}{within}"
    return Verdict(target, baseline, row.workload, row.metric.name, text, said.kind != UNKNOWN, better, said.kind)
