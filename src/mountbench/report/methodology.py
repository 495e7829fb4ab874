"""How the numbers were made and compared, in words every document prints: the run facts
(repetitions, seed, sizes, caches, file state) and the methodology paragraphs."""

from __future__ import annotations

from collections import Counter

from mountbench.analysis.drift import ALPHA, MIN_CHANGE
from mountbench.analysis.stats import CONFIDENCE, OUTLIER_Z
from mountbench.model import RunData
from mountbench.report.labels import all_workloads
from mountbench.report.model import (
    Report,
)
from mountbench.units import format_bytes, format_seconds


def cache_actions(run: RunData) -> list[tuple[str, int]]:
    """What was done about caches before the run's samples, with counts, most frequent first."""
    counts = Counter(s.cache_action or "not recorded" for s in run.samples)
    return counts.most_common()


def count_range(counts: list[int]) -> str:
    """'3', '1–2': the fewest to the most."""
    if not counts:
        return "0"
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}–{high}"


def repetitions(report: Report) -> str:
    """How many samples each cell of the report's tables holds, as they are ('3', '1–2'): never
    what the run planned or allowed (the rounds table has each cell's count and why)."""
    counts = [len(cell.values) for row in report.summary.rows for cell in row.cells.values() if cell.values]
    return count_range(counts)


def samples_per_cell(run: RunData) -> list[int]:
    """Each (target, workload) cell's measured samples that succeeded, as the run holds them."""
    counts = Counter((s.target, s.workload) for s in run.samples if s.ok)
    return list(counts.values())


def _rounds_fact(run: RunData) -> str:
    """'3 repetitions (seed 7)'; '3–4 rounds per cell (--until 5% allowed up to 12, budget 36.0 s; seed 7)';
    '1–2 rounds per cell (... the budget ran out before the planned 3)'."""
    config = run.config
    taken = count_range(samples_per_cell(run))
    if config.until is None:
        short = taken != str(config.repeat) and run.status == "complete"
        planned = f" (of {config.repeat} planned: samples failed)" if short else ""
        return f"{taken} repetitions{planned} (seed {config.seed})"
    budget = f", budget {format_seconds(config.budget)}" if config.budget else ""
    counts = samples_per_cell(run)
    short = bool(counts) and min(counts) < config.repeat
    why = f"; fewer than the planned {config.repeat}: the budget ran out or samples failed" if short else ""
    return (
        f"{taken} rounds per cell (--until {config.until:.0%} allowed up to {config.max_repeat}{budget}{why}; "
        f"seed {config.seed})"
    )


def warmup_phrase(report: Report) -> str:
    """', after 1 warm-up round thrown away' when any run warmed up, else ''."""
    counts = sorted({run.config.warmup for run in report.runs})
    if counts == [0]:
        return ""
    plural = "s" if counts != [1] else ""
    return f", after {', '.join(map(str, counts))} warm-up round{plural} thrown away"


def run_facts(run: RunData) -> list[str]:
    """How a run was made, as short phrases: repetitions and seed, size and runtime
    overrides, what was asked about caches, what the kinds' options chose. Shared by the
    Markdown and HTML reports."""
    config = run.config
    facts = [_rounds_fact(run)]
    if config.warmup:
        facts.append(f"{config.warmup} warm-up round{'s' if config.warmup != 1 else ''} first, not counted")
    if config.size:
        facts.append(f"working set {format_bytes(float(config.size))}")
    if config.runtime:
        facts.append(f"runtime {format_seconds(float(config.runtime))} per fio job")
    facts.append(f"drop caches: {config.drop_caches}")
    facts += [fact for value in config.kind_options if (fact := value.fact())]  # each kind's (fio: --file-state)
    if run.host.get("fio_clocksource"):
        facts.append(f"fio clocksource: {run.host['fio_clocksource']} (chosen once for every job)")
    contained = run.host.get("containment")
    if isinstance(contained, dict) and contained.get("mechanism"):
        facts.append(f"containment: {contained['mechanism']} ({contained.get('detail') or '?'})")
    if run.origin:
        facts.append(f"{run.origin}: a record, never resumed")
    return facts


def methodology(report: Report) -> list[str]:
    """How the numbers were made and compared, one paragraph each; every document prints these."""
    seeds = ", ".join(str(run.config.seed) for run in report.runs)
    fio = ", ".join(sorted({str(run.host.get("fio_version") or "?") for run in report.runs}))
    adaptive = adaptive_methodology(report)
    return [
        f"Every (target, workload) pair ran {repetitions(report)} measured times in interleaved rounds"
        f"{warmup_phrase(report)}: each round runs every pair once, in an order shuffled by the seed "
        f"({seeds}), so drift hits every target alike; within a round the targets of one workload run back to "
        "back, so a burst of load tends to hit both sides of a comparison, and take turns going first (one "
        "seeded order, turned by one place each round), so going first or second favours none of them. Unless "
        "--file-state says otherwise, fio's working files are laid out anew before each round, so the "
        "interval covers what differs between two files of one filesystem, not only round-to-round noise.",
        *_methods(report, fio),
        "O_DIRECT is probed on every target with a real aligned write and read; a direct workload on a target "
        "that refuses it runs buffered and its cells say so.",
        "A buffered workload whose working set is under twice the RAM may be served by the page cache and is "
        "marked; before each buffered sample the files it reads are evicted from the page cache (posix_fadvise, "
        "no root needed), or where that cannot make it cold (tree walks, start-ups) the machine's caches are "
        "dropped as root, and what was done is recorded per sample.",
        "Median: its interval comes from order statistics (distribution-free) and states the confidence it "
        "really has (75% with 3 samples).",
        "Comparison with the baseline: the ratio of geometric means, said as a factor of at least 1 and the way "
        'it goes ("6.20× slower"), with its interval turned the same way. Where the targets of a workload ran '
        "back to back in each round (one run), two intervals are made, the paired one (the per-round ratios, "
        "Student's t on their logarithms: a burst of load that hits both sides of a round cancels) and the unpaired "
        "one (Welch's t on the logarithms of each side), and the wider is used: two directories of one tmpfs "
        "differed by up to 1.17× at sequential reads the same way in every round of a run (where each file lands "
        "in physical memory), an effect of the run that pairing within it cannot see. Each round's fio layout now "
        "starts at a place drawn at random (a spacer of random size, allocated and not written, goes before it), "
        "which cut that effect to 2.4% at sequential I/O and 0.8% at 4K between quiet A/A runs, not to nothing; "
        "merged or imported runs are unpaired. A spread below "
        "half a fio latency bin (0.8%) is taken as that much: identical samples are no certainty. All of a run's "
        f"comparisons are one family, decided once by Holm's step-down procedure at {1 - CONFIDENCE:.0%} "
        "family-wise: the chance that any comparison of the run is called different when it is not stays under "
        f"{1 - CONFIDENCE:.0%}, and each interval is shown at the level Holm's last step tested (1 − 5%/(m − r), "
        "m comparisons, r called different), so an interval excludes 1 exactly when its comparison is called "
        "different; every table, note and chart shows that one decision. Three verdicts: faster/slower when the "
        'interval excludes 1 (said by its near end, "at least N× slower", when its ends are more than 100× '
        "apart); "
        '"≈ same" only when two one-sided tests show the ratio within ±5% of 1 (--until\'s precision when given; '
        "sameness is a family of its own, Holm at 5% too, its intervals shown at the level those tests decided "
        'with, inside ±5%); "undecided" otherwise (an interval that contains 1 is no evidence of sameness), with '
        'what it did show (the interval folded to a bound: "b is within 0.75–1.33× of a") and how many rounds '
        '±precision would take at the spread it measured, and "too wide to rank" when its ends are more than 100× '
        "apart. For the last two the interval is the target's speed ÷ the baseline's. The headline counts each "
        "verdict apart. CSV and "
        "JSON carry the verdict (better, worse, same, undecided, unknown) and the raw ratio (target ÷ baseline "
        "of the metric itself) next to the factor.",
        "Where the variance is (bench/variance.py, quiet tmpfs on this kind of VM, 0.5 s samples): for 4K random "
        "I/O back-to-back samples of one round vary by about 3 %, all of it the noise within a sample (fio's "
        "100 ms intervals predict it), so a longer sample averages it; for 1M "
        "sequential reads rounds with a new layout carry most of it (85 %), which only more rounds average. So "
        "the round is the unit of replication, and the machine's own noise (other processes' CPU, the "
        "hypervisor's steal) is recorded with every sample and named beside an answer when it ran busy.",
        "Drift: the samples of each cell, in the order they were taken, are tested for a trend (Mann–Kendall, "
        f"p < {ALPHA:g}, and a change of at least {MIN_CHANGE:.0%} from the first rounds to the last); a trend on the "
        "baseline is drift of the machine. Interleaved rounds keep ratios fair under slow drift, which the "
        "per-round ratios show; a trend in them means the drift was too large for that. A first sample far from "
        f"the rest (a cold start) is flagged, and outliers are samples with a modified z-score above {OUTLIER_Z}; "
        "'mountbench show RUN --samples' lists every sample in the order it was taken.",
        *adaptive,
    ]


def _methods(report: Report, fio: str) -> list[str]:
    """How each kind of workload in the report measures, as its kind says (one sentence each)."""
    said = dict.fromkeys(w.description.method for w in all_workloads(report) if w.description.method)
    return [" ".join([*said, f"fio version: {fio}."])]


def adaptive_methodology(report: Report) -> list[str]:
    """How --until/--budget chose the rounds and kept the intervals honest (empty for fixed runs)."""
    adaptive = [run.config for run in report.runs if run.config.until is not None]
    if not adaptive:
        return []
    precision = ", ".join(sorted({f"{c.until:.0%}" for c in adaptive}))
    most = ", ".join(sorted({str(c.max_repeat) for c in adaptive}))
    budget = ", ".join(sorted({format_seconds(c.budget) for c in adaptive if c.budget}))
    return [
        f"Adaptive rounds (--until {precision}, at most {most} rounds"
        + (f", budget {budget}" if budget else "")
        + "): after the first rounds, more interleaved, seeded rounds only for the comparisons not yet "
        "decided, that is whose ratio interval neither excludes 1 (ranked), nor lies within the precision of 1 "
        "(the same), nor is narrower than the precision. Looking after every round would make a 95% interval "
        "cover far less than 95%, so a comparison is looked at only at a few planned rounds (--repeat, then "
        "half as many again each time: 3, 5, 8, 12 by default) and the error is spent over those looks "
        "(alpha spending with a Bonferroni bound): the interval at look j of J has level 1 − 0.05·(1/j)/H_J "
        "(H_J = 1 + 1/2 + … + 1/J), shares that add up to 5%; a comparison's interval is the one at its last "
        "look, and states its level. The rounds table says how many rounds each cell got and why it stopped.",
    ]
