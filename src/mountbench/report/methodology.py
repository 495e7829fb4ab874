"""How the numbers were made and compared, in words every document prints: the run facts
(repetitions, seed, sizes, caches, file state) and the methodology paragraphs."""

from __future__ import annotations

from collections import Counter

from mountbench.analysis.decided import run_levels
from mountbench.analysis.drift import ALPHA, MIN_CHANGE
from mountbench.analysis.stats import CONFIDENCE, OUTLIER_Z, SPENDING_RHO, planned_looks
from mountbench.model import RunData, RunLevel
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
    overrides, what was asked about caches, what the kinds' options chose, each target's run level.
    Shared by the Markdown and HTML reports."""
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
    facts += [f"run level of {label}: {run_level_text(level)}" for label, level in run_levels([run]).items()]
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
        *_comparison_method(report),
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
    looks = "; ".join(sorted({", ".join(map(str, planned_looks(c))) for c in adaptive}))
    return [
        f"Adaptive rounds (--until {precision}, at most {most} rounds"
        + (f", budget {budget}" if budget else "")
        + "): after the first rounds, more interleaved, seeded rounds only for the comparisons not yet "
        "decided (neither shown different, nor shown within the precision of 1, nor narrower than the "
        "precision), the nearest a decision first when a budget is short. Looking after every round would make a "
        "95% interval cover far less than 95%, so a comparison is looked at only at a few rounds fixed before the "
        f"first look (here {looks}: from the pace of the first rounds, the last one the budget fits), and the error "
        "is spent over those looks by a spending function (the share of the planned rounds in, to the power "
        f"{SPENDING_RHO:g}: little at the first look, most by the last, Kim and DeMets' family), for differences "
        "and sameness alike; the last look spends what is left, and a run that ends between two looks spends the "
        "share of the one it was heading for. The rounds table says how many rounds each cell got and why it "
        "stopped.",
    ]


def _comparison_method(report: Report) -> list[str]:
    """How a comparison with the baseline is made and decided (analysis/evidence.py, moderate.py, runlevel.py,
    family.py), with what this report's runs used."""
    decided = report.summary.decided
    levels = "; ".join(f"{label}: {run_level_text(level)}" for label, level in decided.run_levels)
    borrowed = [m for m in decided.moderations if m.group == "throughput"] or list(decided.moderations)
    prior = ""
    if borrowed:
        m = borrowed[0]
        prior = (
            f" In this report the headline figures' prior lent each of {m.cells} comparisons about "
            f"{m.lent:.0f} degrees of freedom ({m.outliers} kept their own spread)."
        )
    return [
        "Comparison with the baseline: the ratio of geometric means, said as a factor of at least 1 and the way "
        'it goes ("6.20× slower"), with its interval turned the same way. Where the targets of a workload ran '
        "back to back in each round (one run), the unit is the round: the per-round log ratios, over the rounds "
        "where both sides have a sample (a burst of load that hits both sides of a round cancels). Their spread "
        "is moderated across the run's comparisons of one kind of metric (an empirical-Bayes prior, Smyth 2004, "
        "as limma does with few replicates and many genes: its mean follows what the samples' own 100 ms "
        "intervals predict, and the target and block size where they explain more), so that three rounds give "
        "tens of degrees of freedom, not two." + prior + " What pairing cannot see, how far a second run of the "
        "same pair would land from this one (where its files land, the state it starts in), is added as a "
        "variance of its own, the run level, measured apart by A/A runs (mountbench calibrate, or each "
        f"filesystem type's default): {levels or 'none recorded'}. Merged or imported runs: each run pairs its "
        "own rounds and the runs are a level; sides that never ran together are compared across runs with each "
        "side's level spread. A spread below half a fio latency bin (0.8%) is taken as that much.",
        f"One family per run, over every metric any view shows, decided once at {1 - CONFIDENCE:.0%} family-wise: "
        "the headline metrics first (80% of the error), host cost and then every other metric (10% each), each by "
        "Holm's step-down, a stage that decides all of its comparisons passing its share on; so --unit and "
        "--metric change what is shown, never a verdict, and bandwidth and IOPS of one job (the same measurement) "
        "are one test. Each interval is shown at the level its stage stopped at, so it excludes 1 exactly when "
        f"its comparison is called different; all of them hold together at {CONFIDENCE:.0%}, the one level every "
        'format states. Verdicts: faster/slower when the interval excludes 1 (said by its near end, "at least N× '
        'slower", when its ends are more than 100× apart; "within ±5%" too when it is also shown inside the '
        'precision: real, and too small to matter); "≈ same" only when two one-sided tests show the ratio within '
        '±5% of 1 (--until\'s precision when given; a family of its own, the same stages); "undecided" '
        "otherwise, with what it did show (the interval folded to a bound) and how many rounds ±precision would "
        "take: a range, at the spread measured and at its upper 80% bound, counted at the level the advised "
        "command would test at, or that no number of rounds can get there when the run level alone is wider. For "
        "the last two the interval is the target's speed ÷ the baseline's. CSV and JSON carry the verdict "
        "(better, worse, same, undecided, unknown) and the raw ratio next to the factor.",
    ]


def run_level_text(level: RunLevel) -> str:
    """'calibrated (6 A/A runs … on /mnt/nfs (nfs)): ±2.1% large blocks, ±0.9% small' or 'default for tmpfs
    (…): ±1.8% …': what a target's comparisons took as its run level, and where that came from."""
    figures = ", ".join(
        f"±{value * 100:.2g}% {word}"
        for value, word in zip(level.paired, ("large blocks", "small", "other"), strict=True)
    )
    origin = "calibrated" if level.source == "calibrated" else "default"
    return f"{origin}, {level.basis}: {figures}"
