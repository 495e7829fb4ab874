"""How a comparison is said, once for every format: "6.20× slower", never "×0.161".

A Comparison holds target ÷ baseline of the metric itself; whether a ratio above 1 is
good depends on the metric (IOPS: yes; latency: no). A Standing turns it around so that
the factor is always ≥ 1, with its interval in the same orientation, and a word that
says which way it goes (faster/slower, less/more CPU, better/worse). Three verdicts
(stats.Comparison.verdict): a difference when the interval excludes 1; "≈ same" only
when the interval lies within ±precision of 1 (5 %, or --until's); "undecided" otherwise,
with its interval and what would decide it, or "too wide to rank" when its ends are more
than 100× apart. Width never hides a decided difference: an interval that excludes 1 but whose
ends are more than 100× apart (three rounds of a 50× gap against a noisy baseline) is said by its
near end, "at least 5.59× slower": the direction is known, and so is that bound, while the
estimate's digits and the far end would claim more than the samples know. "Too wide to rank" is
kept for an interval that contains 1 and is that wide. Without an interval (one sample a side)
the factor is given with "no CI".

Numbers for people have three significant digits and never scientific notation (units.sig3).

Pure: no rich, no HTML; renderers pick the colour from ``Standing.kind``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.analysis import stats
from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.quality import level_text
from mountbench.analysis.reach import Reach
from mountbench.analysis.stats import Comparison
from mountbench.analysis.summary import Row, RunSummary
from mountbench.units import sig3

BETTER, WORSE, SAME, UNKNOWN = "better", "worse", "same", "unknown"
UNDECIDED = "undecided"  # the interval contains 1 but reaches beyond ±precision: neither shown
TOO_WIDE_TEXT = "too wide to rank"
BASELINE = "baseline"  # the baseline's own cells: nothing to compare
NOISE = "noise"  # the headline under the others: the machine was busy (subordinate in every format)
SPEED_UNITS = frozenset({"IOPS", "B/s", "s", "1/s"})


# How every format explains the words next to a ratio (terminal legend, Markdown and HTML intros,
# the methodology, the ratio chart)
SAME_LEGEND = "≈ same: the whole interval lies within ±5% of 1 (--until's precision when given)"


def same_legend(report_summary: RunSummary, adaptive: bool) -> str:
    """SAME_LEGEND, and when the run called any comparison the same, how: sameness is a family of its own
    (analysis/family.py), decided by two one-sided tests whose interval is the one shown; its claims hold
    together at the family's level, the one level every format states. A difference too small to matter
    (called different and the same) is said as such."""
    family = report_summary.family
    if not family.same:
        return SAME_LEGEND
    more = "; under --until each at its look's share" if adaptive else ""
    within = (
        "; N× faster/slower, within ±5%: a real difference inside that precision" if family.within_precision else ""
    )
    return (
        f"{SAME_LEGEND} (two one-sided tests; all the run's sameness claims together at "
        f"{level_text(family.level)}{more}){within}"
    )


UNDECIDED_LEGEND = (
    "undecided: the interval contains 1 but reaches beyond that, so neither a difference nor sameness is shown "
    "(more rounds decide it; too wide to rank: its ends are over 100× apart); a difference whose interval is that "
    "wide is said by its near end: at least N× slower"
)


def interval_legend(report_summary: RunSummary, adaptive: bool) -> str:
    """How the ratios' intervals are said, once per document: 'N× faster/slower than the baseline,
    95% CI (the run's comparisons together)'. One level for the family (analysis/family.py); under
    --until a look spends a share of the error, so its intervals are wider and their notes say so."""
    level = level_text(report_summary.family.level)
    more = "; under --until each interval is wider, at its look's share" if adaptive else ""
    return f"{level} CI (all the run's comparisons together{more})"


def factor_text(value: float) -> str:
    """``6.20×``."""
    return f"{sig3(value)}×"


@dataclass(frozen=True)
class Standing:
    """Where a target stands against the baseline on one metric."""

    kind: str  # better | worse | same | undecided | unknown (no interval)
    factor: float  # ≥ 1 (better/worse/unknown); the speed ratio itself for "same" and "undecided"
    low: float  # the factor's interval, same orientation; nan without one
    high: float
    word: str  # "faster", "slower", "less CPU", ... (same/undecided: the word a factor > 1 would have)
    too_wide: bool = False  # undecided with an interval spanning more than 100×
    precision: float = stats.DEFAULT_PRECISION  # "the same" is within ±precision
    within: bool = False  # a difference shown within ±precision too: real, and too small to matter
    precise: bool = False  # undecided, yet no wider than ±precision (stats.Comparison.precise): "known to ±5%"

    @property
    def bounded(self) -> bool:
        """A difference (better or worse) whose interval's ends are more than TOO_WIDE_SPAN apart:
        its direction and its near end (``low``, ≥ 1) are what it shows (the module doc)."""
        if self.kind not in (BETTER, WORSE) or math.isnan(self.low) or math.isnan(self.high):
            return False
        return self.low <= 0 or self.high / self.low > stats.TOO_WIDE_SPAN

    @property
    def shown_factor(self) -> float:
        """The factor the words give: the near end for a bounded difference, else the estimate."""
        return self.low if self.bounded else self.factor

    @property
    def short(self) -> str:
        """``6.20× slower``; ``≈ same``; ``undecided``; ``too wide to rank``; ``at least 5.59×
        slower`` (a bounded difference); ``6.20× slower?`` without an interval."""
        if self.kind == SAME:
            return "≈ same"
        if self.kind == UNDECIDED:
            return TOO_WIDE_TEXT if self.too_wide else "undecided"
        if self.bounded:
            return f"at least {factor_text(self.low)} {self.word}"
        if self.within:
            return f"{factor_text(self.factor)} {self.word}, within ±{self.precision * 100:g}%"
        return f"{factor_text(self.factor)} {self.word}" + ("?" if self.kind == UNKNOWN else "")

    @property
    def interval(self) -> str:
        """``5.10–7.40×`` in the factor's orientation; empty without one, and for an interval
        over 100× wide (too wide to rank, or a bounded difference: its digits would claim more
        than it knows)."""
        if math.isnan(self.low) or math.isnan(self.high) or self.too_wide or self.bounded:
            return ""
        return f"{sig3(self.low)}–{sig3(self.high)}×"

    @property
    def text(self) -> str:
        """``6.20× slower (5.10–7.40×)``; ``≈ same (0.960–1.03×)``; ``undecided (0.910–1.30×)``;
        ``too wide to rank``; ``at least 5.59× slower``; ``6.20× slower (no CI)``."""
        if self.kind == UNKNOWN:
            return f"{factor_text(self.factor)} {self.word} (no CI)"
        return f"{self.short} ({self.interval})" if self.interval else self.short

    @property
    def decider(self) -> str:
        """What would decide an undecided comparison ('' for the others)."""
        if self.kind == UNKNOWN:
            return (
                "one sample a side gives no interval: a second round (a larger --budget, or --repeat 2 or more) "
                "gives one"
            )
        if self.kind != UNDECIDED:
            return ""
        if self.too_wide or not self.low > 0:
            return "its note says what more rounds would take"
        bound = factor_text(max(self.high, 1 / self.low))
        wanted = f"±{self.precision * 100:g}%"
        return f"it shows no difference beyond {bound} either way; its note says what {wanted} would take"


# What measured processes spent (watch.py, study S1): "uses 3.10× more CPU than"
COST_NOUNS = {"cpu_s": "CPU", "cpu_user_s": "CPU", "cpu_sys_s": "CPU", "cpu_s_per_gib": "CPU per GiB",
              "uss_peak": "memory"}  # fmt: skip


def words(metric: MetricInfo) -> tuple[str, str]:
    """(word when the target is better, word when it is worse) for a factor ≥ 1."""
    cost = COST_NOUNS.get(metric.name.partition(".")[2])
    if cost:  # host.cpu_s, nginx.uss_peak, ...: what a sample cost, not how fast it went
        return f"less {cost}", f"more {cost}"
    if metric.unit == "%" or "cpu" in metric.name:
        return "less CPU", "more CPU"
    if metric.unit in SPEED_UNITS:
        return "faster", "slower"
    if not metric.higher_is_better:
        return "less", "more"
    return "better", "worse"


def standing(comparison: Comparison, metric: MetricInfo) -> Standing:
    """The comparison as people read it (see the module doc)."""
    ratio, low, high = comparison.ratio, comparison.low, comparison.high
    good, bad = words(metric)
    # the speed ratio: above 1 means the target is better, whatever the metric's direction
    if metric.higher_is_better:
        speed, speed_low, speed_high = ratio, low, high
    else:
        speed, speed_low, speed_high = _inverse(ratio), _inverse(high), _inverse(low)
    verdict = comparison.verdict
    if verdict in (stats.SAME, stats.UNDECIDED):
        kind = SAME if verdict == stats.SAME else UNDECIDED
        return Standing(
            kind, speed, speed_low, speed_high, good, comparison.too_wide, comparison.precision,
            precise=comparison.precise,
        )  # fmt: skip
    kind = (BETTER if speed >= 1 else WORSE) if verdict == stats.DIFFERS else UNKNOWN
    within = verdict == stats.DIFFERS and comparison.same is True
    if speed >= 1:
        return Standing(kind, speed, speed_low, speed_high, good, precision=comparison.precision, within=within)
    return Standing(
        kind, _inverse(speed), _inverse(speed_high), _inverse(speed_low), bad, precision=comparison.precision,
        within=within,
    )  # fmt: skip


def cell_standing(row: Row, target: str) -> Standing | None:
    comparison = row.cells[target].comparison
    return standing(comparison, row.metric) if comparison is not None else None


def verdict_kind(row: Row, target: str, baseline: str) -> str:
    """better | worse | same | undecided | unknown | baseline | none (no ratio: a side has no samples)."""
    if target == baseline:
        return BASELINE
    found = cell_standing(row, target)
    return found.kind if found else "none"


def _inverse(value: float) -> float:
    return math.nan if math.isnan(value) or value == 0 else 1 / value


def readable(row: Row, target: str, baseline: str) -> dict[str, object]:
    """The comparison as exports carry it next to the raw ratio: ``comparison`` (the words
    people read), ``verdict`` (better | worse | same | undecided | unknown | baseline | none),
    and the factor (≥ 1, the way ``verdict`` goes; for "same" and "undecided" the target's
    speed ÷ the baseline's) with its interval; None where there is none."""
    said = cell_standing(row, target) if target != baseline else None
    if said is None:
        return {"comparison": "", "verdict": verdict_kind(row, target, baseline), "factor": None,
                "factor_low": None, "factor_high": None}  # fmt: skip
    return {
        "comparison": said.text,
        "verdict": said.kind,
        "factor": said.factor,
        "factor_low": None if math.isnan(said.low) else said.low,
        "factor_high": None if math.isnan(said.high) else said.high,
    }


# --- the headline ------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """One sentence per compared target: how it does against the baseline over the summary."""

    target: str
    text: str
    kind: str  # the outcome most comparisons had: better | worse | same | undecided | unknown | none


def headlines(rows: Sequence[Row], targets: Sequence[str], baseline: str) -> list[Headline]:
    """ "disk is slower than ram in 11 of 13 workloads (from 2.10× to 25.6×, median 6.20×); faster in 1
    (1.30×); the same (within ±5 %) in 1; undecided in 1 (more rounds would decide)".
    ``rows`` are the comparisons counted: one per workload and direction of the summary grid
    (or of the metric asked for)."""
    found = []
    # a metric the baseline cannot have (the host cost of a cloud-lab mount's own processes: the local
    # disk has none) is no comparison at all, so it counts neither way ("no result in 6 of 8")
    rows = [r for r in rows if _baseline_has(r, baseline)] or list(rows)
    things = _things(rows)
    for target in targets:
        if target == baseline:
            continue
        found.append(_headline(rows, target, baseline, things))
    return found


def _baseline_has(row: Row, baseline: str) -> bool:
    cell = row.cells.get(baseline)
    return cell is not None and cell.summary is not None


def _things(rows: Sequence[Row]) -> str:
    """'workloads' when every row is a different workload, else 'comparisons'."""
    return "workloads" if len({r.workload for r in rows}) == len(rows) else "comparisons"


def _headline(rows: Sequence[Row], target: str, baseline: str, things: str) -> Headline:
    by_kind: dict[str, list[Standing]] = {WORSE: [], BETTER: [], SAME: [], UNDECIDED: [], UNKNOWN: []}
    reaches: list[Reach | None] = []  # each undecided comparison's reach, as its note says it
    missing = 0
    for row in rows:
        found = cell_standing(row, target)
        if found is None:
            missing += 1
        else:
            by_kind[found.kind].append(found)
            if found.kind == UNDECIDED:
                reaches.append(row.cells[target].reach)
    speed_only = all(r.metric.unit in SPEED_UNITS and "cpu" not in r.metric.name for r in rows)
    good, bad = ("faster", "slower") if speed_only else ("better", "worse")
    # (count, kind, what, detail): "slower" "(from 2.10× to 25.6×, median 6.20×)"
    clauses: list[tuple[int, str, str, str]] = []
    for kind, word in ((WORSE, bad), (BETTER, good)):
        if by_kind[kind]:
            clauses.append((len(by_kind[kind]), kind, word, _spread(by_kind[kind])))
    if by_kind[SAME]:
        precision = by_kind[SAME][0].precision * 100
        clauses.append((len(by_kind[SAME]), SAME, f"the same (within ±{precision:g}%)", ""))
    if by_kind[UNDECIDED]:
        clauses.append((len(by_kind[UNDECIDED]), UNDECIDED, "undecided", _bounded(by_kind[UNDECIDED], reaches)))
    if by_kind[UNKNOWN]:
        clauses.append((len(by_kind[UNKNOWN]), UNKNOWN, "too few samples to tell", ""))
    if missing:
        clauses.append((missing, "none", "no result", "(see the notes)"))
    if not clauses:
        return Headline(target, f"{target}: nothing to compare with {baseline}", "none")
    clauses.sort(key=lambda c: -c[0])  # the majority first; ties keep the order above
    count, kind, what, detail = clauses[0]
    where = _all_or_some(count, len(rows), things)
    if kind in (WORSE, BETTER):
        lead = f"{target} is {what} than {baseline} {where}"
    else:
        lead = f"{target} vs {baseline}: {what} {where}"
    parts = [f"{lead} {detail}".strip()]
    parts += [f"{what} in {n} {detail}".strip() for n, _, what, detail in clauses[1:]]
    return Headline(target, "; ".join(parts), kind)


def _bounded(items: Sequence[Standing], reaches: Sequence[Reach | None] = ()) -> str:
    """What undecided comparisons did show and what would decide them, exactly as their notes say it
    (analysis/quality.py): '(each within 1.50× either way; more rounds would decide them)', the widest of
    their intervals folded to a symmetric bound (analysis/reach.py); those whose interval spans more than
    100× bound nothing and are counted as such ('2 within 1.50× either way, 1 too wide to rank'). Then what
    the notes say would decide them: more rounds (within --max-repeat, or no spread measured yet), ±5% out of
    reach in this run (beyond --max-repeat), or out of reach in any number of rounds (the run level, or the
    spread measured, alone is wider); 'known to ±5%' for one no wider than that. Never a promise the notes
    do not make."""
    bounds = [max(s.high, 1 / s.low) for s in items if not s.too_wide and s.low > 0 and math.isfinite(s.high * s.low)]
    wide = sum(1 for s in items if s.too_wide)
    if not bounds:
        shown = "too wide to rank" if wide else "no interval yet"
    else:
        widest = factor_text(max(bounds))
        if wide:
            shown = f"{len(bounds)} within {widest} either way, {wide} too wide to rank"
        else:
            shown = f"each within {widest} either way" if len(items) > 1 else f"within {widest} either way"
    decides = _what_decides(items, reaches)
    return f"({shown}; {decides})" if decides else f"({shown})"


def _what_decides(items: Sequence[Standing], reaches: Sequence[Reach | None]) -> str:
    """What the undecided comparisons' notes say would decide them, counted (quality._what_it_would_take)."""
    if len(reaches) != len(items):
        return ""
    precision = f"±{items[0].precision * 100:g}%" if items else "±5%"
    more = never = beyond = known = 0
    for said, found in zip(items, reaches, strict=True):
        if said.precise:
            known += 1
        elif found is None or found.within_max_repeat:
            more += 1
        elif found.rounds is None or found.run_level_bound:
            never += 1
        else:
            beyond += 1
    total = len(items)
    parts = []
    if more:
        them = "it" if total == 1 else "them" if more == total else str(more)
        parts.append(f"more rounds would decide {them}")
    if never or beyond:
        where = "in any number of rounds" if not beyond else "in this run"
        count = "" if never + beyond == total else f" for {never + beyond}"
        parts.append(f"{precision} out of reach {where}{count}")
    if known:
        parts.append(f"{'known' if known == total else f'{known} known'} to {precision}")
    return "; ".join(parts)


def _all_or_some(n: int, total: int, things: str) -> str:
    if n < total:
        return f"in {n} of {total} {things}"
    if total == 1:
        return f"in the one {things[:-1]}"
    return f"in both {things}" if total == 2 else f"in all {total} {things}"


def _spread(items: Sequence[Standing]) -> str:
    """'(6.20×)' or '(from 2.10× to 25.6×, median 6.20×)': the spread across workloads, worded so
    that it does not read as a confidence interval; the median of factors is taken on a log scale.
    A bounded difference counts with its near end ('(at least 5.59×)' alone)."""
    factors = sorted(s.shown_factor for s in items)
    if len(factors) == 1:
        return f"({'at least ' if items[0].bounded else ''}{factor_text(factors[0])})"
    half = len(factors) // 2
    middle = factors[half] if len(factors) % 2 else math.sqrt(factors[half - 1] * factors[half])
    if sig3(factors[0]) == sig3(factors[-1]):
        return f"({factor_text(middle)} each)"
    return f"(from {factor_text(factors[0])} to {factor_text(factors[-1])}, median {factor_text(middle)})"
