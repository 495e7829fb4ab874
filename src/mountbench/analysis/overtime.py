"""One storage's runs over time (`mountbench history`): per workload, each run's median and interval,
which runs can be compared, and the steps between runs that the data support.

Series. A series is one storage (analysis/comparable.Storage: the path and the filesystem there; a
target renamed between runs is still in it, another filesystem under the same path is another
series) and, in it, one workload's first headline metric, one point per run.

Comparable segments. Runs in time order are cut into segments wherever something that refuses a
comparison changed (comparable.differences: the machine, fio, the workload's options, the state of
the working files): no line is drawn, and no step is looked for, across a cut. What is only worth
saying (a new kernel, a new mountbench) is noted at the run where it changed.

Steps between runs. The run is the unit (the level a run cannot replicate: analysis/runlevel.py).
Each run gives its mean log value m_i and the variance that mean has as a run of this storage,
v_i = s_i²/n_i + τ², with τ the target's level spread (calibrated, else its filesystem type's
default). For every split of a segment into before and after (MIN_RUNS runs each side at least), the
statistic is

    t_k = |mean(m_after) − mean(m_before)| / √(V_before/k + V_after/(n − k)),

each side's V the larger of its runs' spread (their sample variance) and the mean v_i they should
show: a side's runs cannot be more alike than their own samples and the run level allow. The largest
t_k over the splits (choosing the best split is paid for) is tested twice, and a step must pass both:
against its distribution over PERMUTATIONS seeded permutations of the runs (a max-statistic
permutation test: nothing assumes a normal law, and the runs' own spread is in the null), and against
its distribution when every run's mean moves only as v_i says (normal draws: a step must also be
larger than what the run level lets runs of this storage move, which a permutation alone cannot see
when every run's v_i is alike: as evidence.across_runs takes the larger of the prior's run level and
what the runs show). Multiplicity: the (workload, segment) tests of a storage are one family, Holm's step-down
at 5 %; a segment with a step found is split there and each part tested again at half its parent's
level (binary segmentation whose levels add up to the parent's, so each depth spends at most the
family's share). A permutation test of few runs cannot reach a small p-value: with 10 runs and a step
in the middle about 0.008, with 8 runs 0.03; so history finds steps from about 8 runs on, and says so.

Pure: runs in, a History out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mountbench.analysis import comparable
from mountbench.analysis.across import level_of
from mountbench.analysis.comparable import Difference, Facts, Storage
from mountbench.analysis.decided import usable_samples
from mountbench.analysis.runlevel import access_class
from mountbench.analysis.stats import MIN_LOG_SD, median_ci
from mountbench.model import RunData, Workload

ALPHA = 0.05  # the family-wise error of a storage's steps (every workload and segment together)
MIN_RUNS = 2  # runs on each side of a step, at least
PERMUTATIONS = 20_000


@dataclass(frozen=True)
class Point:
    """One run of a series: its median and the median's distribution-free interval (``level``: what
    it covers), and the run's mean log value with that mean's variance as a run (module doc)."""

    run_id: str
    created_at: float
    label: str  # the target's label in that run
    median: float
    low: float
    high: float
    level: float  # the interval's confidence (0.75 with three samples)
    n: int
    mean_log: float
    variance: float  # s²/n + τ²
    segment: int  # which comparable segment (0, 1, ...)


@dataclass(frozen=True)
class Step:
    """A change of level between two runs: points ``index`` on (in the series) differ from those before."""

    index: int
    factor: float  # geometric mean after / before, within the part of the segment it was found in
    p_value: float
    alpha: float  # the level it was tested at (Holm's share, halved at each split)


@dataclass(frozen=True)
class Series:
    workload: str
    title: str
    metric: str
    points: tuple[Point, ...]
    steps: tuple[Step, ...] = ()

    def segments(self) -> list[tuple[int, int]]:
        """[start, end) of each comparable segment, in order."""
        bounds = [0] + [i for i in range(1, len(self.points)) if self.points[i].segment != self.points[i - 1].segment]
        return list(zip(bounds, [*bounds[1:], len(self.points)], strict=True))


@dataclass(frozen=True)
class Cut:
    """Where the storage's runs stop being comparable: run ``index`` (in History.runs) differs from the
    one before by ``differences`` (refusals); or only notes (warnings) at that run."""

    index: int
    differences: tuple[Difference, ...]


@dataclass(frozen=True)
class History:
    storage: Storage
    runs: tuple[tuple[str, float, str], ...]  # (run id, created at, the target's label), oldest first
    series: tuple[Series, ...]
    cuts: tuple[Cut, ...] = ()  # refusing differences between consecutive runs
    notes: tuple[Cut, ...] = ()  # differences only worth saying, at the run they appear
    tests: int = 0  # the (workload, segment) hypotheses tested for a step

    @property
    def steps(self) -> int:
        return sum(len(s.steps) for s in self.series)


def storages(runs: Sequence[RunData]) -> dict[Storage, list[tuple[RunData, str]]]:
    """Every storage the runs measured, with (run, the target's label there), oldest run first."""
    found: dict[Storage, list[tuple[RunData, str]]] = {}
    for run in sorted(runs, key=lambda r: r.created_at):
        for record in run.targets:
            found.setdefault(Storage.of(record), []).append((run, record.target.label))
    return found


def history(runs: Sequence[tuple[RunData, str]], storage: Storage, alpha: float = ALPHA) -> History:
    """The history of ``storage`` over ``runs`` ((run, its target's label), oldest first)."""
    ordered = sorted(runs, key=lambda item: item[0].created_at)
    cuts, notes = [], []
    for index in range(1, len(ordered)):
        found = comparable.differences(Facts.of(ordered[index - 1][0]), Facts.of(ordered[index][0]))
        whole = tuple(d for d in found if d.refuses and not d.what.startswith("workload "))
        if whole:
            cuts.append(Cut(index, whole))
        said = comparable.warnings(found)
        if said:
            notes.append(Cut(index, said))
    series = [_series(ordered, workload, {c.index for c in cuts}) for workload in _workloads(ordered)]
    series = [s for s in series if s.points]
    stepped, tests = _steps(series, alpha)
    return History(
        storage,
        tuple((run.id, run.created_at, label) for run, label in ordered),
        tuple(stepped),
        tuple(cuts),
        tuple(notes),
        tests,
    )


def _workloads(runs: Sequence[tuple[RunData, str]]) -> list[Workload]:
    """Every workload any of the runs ran, by name, in the order first met."""
    found: dict[str, Workload] = {}
    for run, _ in runs:
        for workload in run.workloads:
            found.setdefault(workload.name, workload)
    return list(found.values())


def _series(runs: Sequence[tuple[RunData, str]], workload: Workload, cuts: set[int]) -> Series:
    """One workload's points, its first headline metric that the runs measured; a new segment at each cut
    and wherever the workload's own options changed."""
    metric = _metric(runs, workload)
    points: list[Point] = []
    segment, last_spec, last_index = 0, None, -1
    for index, (run, label) in enumerate(runs):
        own = next((w for w in run.workloads if w.name == workload.name), None)
        if own is None or metric is None:
            continue
        signature = comparable.signature(own)
        if points and (signature != last_spec or any(last_index < c <= index for c in cuts)):
            segment += 1
        samples = [s for s in run.samples if s.target == label and s.workload == workload.name]
        values = [float(s.metrics[metric]) for s in usable_samples(samples, metric)[0]]
        values = [v for v in values if v > 0]
        if not values:
            continue
        record = next(r for r in run.targets if r.target.label == label)
        tau = level_of(record).level_sd(access_class(own.description))
        points.append(_point(run, label, values, tau, segment))
        last_spec, last_index = signature, index
    return Series(workload.name, workload.title, metric or "", tuple(points))


def _metric(runs: Sequence[tuple[RunData, str]], workload: Workload) -> str | None:
    present = {m for run, label in runs for s in run.samples if s.ok and s.workload == workload.name
               and s.target == label for m in s.metrics}  # fmt: skip
    return next((m for m in workload.description.headline if m in present), None)


def _point(run: RunData, label: str, values: list[float], tau: float, segment: int) -> Point:
    logs = np.log(values)
    n = len(values)
    spread = max(float(np.var(logs, ddof=1)), MIN_LOG_SD**2) if n > 1 else MIN_LOG_SD**2
    low, high, level = median_ci(values)
    return Point(run.id, run.created_at, label, float(np.median(values)), low, high, level, n,
                 float(np.mean(logs)), spread / n + tau**2, segment)  # fmt: skip


# --- steps ---------------------------------------------------------------------------------------


def _steps(series: list[Series], alpha: float) -> tuple[list[Series], int]:
    """Each series with the steps its segments support (module doc), and how many segments were tested."""
    hypotheses = []  # (p, series index, start, end, split)
    for index, one in enumerate(series):
        for start, end in one.segments():
            if end - start >= 2 * MIN_RUNS:
                p, split = max_step(one.points[start:end])
                hypotheses.append((p, index, start, end, start + split))
    found: dict[int, list[Step]] = {i: [] for i in range(len(series))}
    for (p, index, start, end, split), level in _holm(hypotheses, alpha):
        points = series[index].points
        found[index].append(Step(split, _factor(points[start:split], points[split:end]), p, level))
        found[index] += _split(points, start, split, level / 2) + _split(points, split, end, level / 2)
    out = [
        Series(s.workload, s.title, s.metric, s.points, tuple(sorted(found[i], key=lambda step: step.index)))
        for i, s in enumerate(series)
    ]
    return out, len(hypotheses)


def _holm(hypotheses: list[tuple[float, int, int, int, int]], alpha: float) -> list[tuple[tuple, float]]:
    """Holm's step-down: the rejected hypotheses, each with the level it was rejected at."""
    rejected = []
    ordered = sorted(hypotheses, key=lambda h: h[0])
    for rank, hypothesis in enumerate(ordered):
        level = alpha / (len(ordered) - rank)
        if hypothesis[0] > level:
            break
        rejected.append((hypothesis, level))
    return rejected


def _split(points: Sequence[Point], start: int, end: int, level: float) -> list[Step]:
    """Binary segmentation: a step in points[start:end] at ``level``, and those of its two parts."""
    if end - start < 2 * MIN_RUNS:
        return []
    p, split = max_step(points[start:end])
    if p > level:
        return []
    at = start + split
    return [Step(at, _factor(points[start:at], points[at:end]), p, level),
            *_split(points, start, at, level / 2), *_split(points, at, end, level / 2)]  # fmt: skip


def _factor(before: Sequence[Point], after: Sequence[Point]) -> float:
    return math.exp(float(np.mean([p.mean_log for p in after])) - float(np.mean([p.mean_log for p in before])))


def max_step(points: Sequence[Point]) -> tuple[float, int]:
    """(permutation p-value of the largest split statistic, the split: the first point after it)."""
    means = np.array([p.mean_log for p in points])
    variances = np.array([p.variance for p in points])
    observed = _split_statistics(means[None, :], variances[None, :])[0]
    best = int(np.argmax(observed))
    n = len(points)
    rng = np.random.default_rng(7919 * n + 17)  # seeded: one history, one answer
    order = rng.permuted(np.tile(np.arange(n), (PERMUTATIONS, 1)), axis=1)
    shuffled = _split_statistics(means[order], variances[order]).max(axis=1)
    drawn = rng.standard_normal((PERMUTATIONS, n)) * np.sqrt(variances)  # no step, each run moving as its level may
    modelled = _split_statistics(drawn, np.broadcast_to(variances, drawn.shape)).max(axis=1)
    bar = observed[best] * (1 - 1e-9)
    p_value = max((1 + int(np.sum(maxima >= bar))) / (PERMUTATIONS + 1) for maxima in (shuffled, modelled))
    return p_value, best + MIN_RUNS


def _split_statistics(means: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """t_k (module doc) for every split k = MIN_RUNS … n − MIN_RUNS, per row."""
    n = means.shape[1]
    ks = np.arange(MIN_RUNS, n - MIN_RUNS + 1)
    before, after = ks.astype(float), (n - ks).astype(float)
    total, squares, model = (
        means.sum(axis=1, keepdims=True),
        (means**2).sum(axis=1, keepdims=True),
        variances.sum(axis=1, keepdims=True),
    )
    left = np.cumsum(means, axis=1)[:, ks - 1]
    left_sq = np.cumsum(means**2, axis=1)[:, ks - 1]
    left_model = np.cumsum(variances, axis=1)[:, ks - 1]
    mean_b, mean_a = left / before, (total - left) / after
    spread_b = np.maximum(left_sq - before * mean_b**2, 0) / (before - 1)
    spread_a = np.maximum((squares - left_sq) - after * mean_a**2, 0) / (after - 1)
    var_b = np.maximum(spread_b, left_model / before) / before
    var_a = np.maximum(spread_a, (model - left_model) / after) / after
    return np.abs(mean_a - mean_b) / np.sqrt(var_b + var_a)
