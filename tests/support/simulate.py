"""Simulated runs for the statistics' error rates and power (tests/analysis/test_simulation.py).

A run is made of samples as the engine stores them, from a model of what varies where:

    log x[t, w, r] = log(true[t, w]) + u[t, w] + g[w, r] + e[t, w, r]

- e: each sample's own noise, log-normal with sd ``cv`` (per target and workload when given so);
- g: what hits every target of a round alike (load, drift), a share ``shared`` of cv² (pairing cancels it);
- u: the run's own effect per target and workload, sd per access class as the targets' default run
  level (analysis/runlevel.py): what one run cannot replicate.

The analysis is the project's own: analysis/decided.py decides a run as reports do, and an adaptive run
is driven by analysis/sequential.py's rules as engine/session.py drives a real one (its looks, which
comparisons get another round, the budget's last look).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from mountbench.analysis import sequential
from mountbench.analysis.decided import decide_runs
from mountbench.analysis.runlevel import access_class, default_for
from mountbench.analysis.summary import summarize_runs
from mountbench.model import RunConfig, RunData, Sample, Target, TargetInfo, TargetRecord, Workload
from support.factories import DEFAULTS, fio_workload

QUICK = (  # the quick preset's shape: two large-block workloads, four small-block ones
    ("seq-read", "read", "1M"),
    ("seq-write", "write", "1M"),
    ("q32-read", "randread", "4k"),
    ("q32-write", "randwrite", "4k"),
    ("q1-read", "randread", "4k"),
    ("q1-write", "randwrite", "4k"),
)
INTERVALS = 5  # a 0.5 s sample in fio's 100 ms intervals
# fio's JSON has both directions; the one a job did not move is 0 (a write job's read.bw)
OTHER_DIRECTION = {"write.bw": {"read.bw": 0.0}, "write.iops": {"read.iops": 0.0}}
METRIC = {"read": "read.bw", "write": "write.bw", "randread": "read.iops", "randwrite": "write.iops"}


def quick_workloads(count: int = 6) -> list[Workload]:
    return [fio_workload(name, rw, bs) for name, rw, bs in QUICK[:count]]


def info(fstype: str) -> TargetInfo:
    return TargetInfo(fstype, "/m", fstype, "rw", 10**10, 2 * 10**10, True, "accepted")


@dataclass
class Scenario:
    """What is true of the simulated targets. ``ratios``: target → true ratio to the baseline (1: A/A);
    ``cv``: the samples' log sd, or a function (target, workload) → sd; ``run_effect``: a factor on the
    default run level's sd (1: as the analysis assumes; 0: none)."""

    ratios: Mapping[str, float | Callable[[str], float]]
    cv: float | Callable[[str, str], float] = 0.05
    shared: float = 0.5
    run_effect: float = 1.0
    fstypes: Mapping[str, str] = field(default_factory=dict)
    workloads: list[Workload] = field(default_factory=quick_workloads)
    baseline: str = "a"

    def targets(self) -> list[str]:
        return [self.baseline, *self.ratios]

    def ratio(self, target: str, workload: str) -> float:
        if target == self.baseline:
            return 1.0
        value = self.ratios[target]
        return value(workload) if callable(value) else value

    def sd(self, target: str, workload: str) -> float:
        return self.cv(target, workload) if callable(self.cv) else self.cv


class Simulated:
    """One simulated run: its run effects drawn once, its samples drawn round by round."""

    def __init__(self, scenario: Scenario, rng: np.random.Generator, config: RunConfig) -> None:
        self.scenario = scenario
        self.rng = rng
        self.config = config
        self.samples: list[Sample] = []
        self.effects = {}
        for target in scenario.targets():
            level = default_for(scenario.fstypes.get(target, "tmpfs"))
            for workload in scenario.workloads:
                sd = level.paired_sd(access_class(workload.description)) * scenario.run_effect
                self.effects[(target, workload.name)] = rng.normal(0, sd)
        self.clock = 0.0

    def round(self, index: int, pairs: list[tuple[str, str]] | None = None) -> None:
        """Round ``index`` for the (target, workload) pairs given (all of them when None)."""
        s = self.scenario
        wanted = pairs if pairs is not None else [(t, w.name) for w in s.workloads for t in s.targets()]
        metric = {w.name: metric_of(w) for w in s.workloads}
        shared = {}
        for target, workload in wanted:
            sd = s.sd(target, workload)
            if workload not in shared:
                shared[workload] = self.rng.normal(0, sd * math.sqrt(s.shared))
            # the sample's own noise is the mean of its INTERVALS intervals' (fio's 100 ms log): the series
            intervals = self.rng.normal(0, sd * math.sqrt(1 - s.shared) * math.sqrt(INTERVALS), INTERVALS)
            level = math.log(1000 * s.ratio(target, workload)) + self.effects[(target, workload)] + shared[workload]
            value = math.exp(level + float(np.mean(intervals)))
            series = {metric[workload]: [math.exp(level + v) for v in intervals], "interval_s": [0.1]}
            self.clock += 1
            metrics = {metric[workload]: value, **OTHER_DIRECTION.get(metric[workload], {})}
            self.samples.append(Sample(target, workload, index, True, metrics, started_at=self.clock, series=series))

    def data(self, status: str = "complete") -> RunData:
        s = self.scenario
        return RunData(
            id="sim",
            created_at=0.0,
            finished_at=1.0,
            status=status,
            command="mountbench run",
            config=self.config,
            host={},
            targets=tuple(TargetRecord(Target(t, f"/{t}"), info(s.fstypes.get(t, "tmpfs"))) for t in s.targets()),
            workloads=tuple(s.workloads),
            samples=tuple(self.samples),
        )


def metric_of(workload: Workload) -> str:
    """The headline metric of the direction the workload moves (a write job's is write.bw, not read.bw)."""
    moved = [m for m in workload.description.headline if m.split(".")[0] in workload.description.directions]
    return (moved or list(workload.description.headline) or ["read.iops"])[0]


def config(rounds: int = 3, until: float | None = None, max_repeat: int = 12, looks: tuple[int, ...] = ()) -> RunConfig:
    return RunConfig(
        repeat=rounds, seed=1, baseline="a", until=until, max_repeat=max(max_repeat, rounds), kind_options=DEFAULTS,
        looks=looks,
    )  # fmt: skip


def fixed_run(scenario: Scenario, rng: np.random.Generator, rounds: int = 3) -> RunData:
    run = Simulated(scenario, rng, config(rounds))
    for index in range(rounds):
        run.round(index)
    return run.data()


def adaptive_run(
    scenario: Scenario, rng: np.random.Generator, until: float, *, repeat: int = 3, max_repeat: int = 12,
    looks: tuple[int, ...] = (),
) -> RunData:  # fmt: skip
    """An --until run: the planned rounds, then a round for whatever analysis/sequential.py says needs one,
    until nothing does or the last look is reached (``looks``: a budget's plan; else --max-repeat's)."""
    run = Simulated(scenario, rng, config(repeat, until, max_repeat, looks))
    for index in range(repeat):
        run.round(index)
    last = looks[-1] if looks else max_repeat
    index = repeat
    while index < last:
        data = run.data("running")
        decisions = sequential.decide(data, until)
        pairs = sequential.pairs_to_sample(decisions, scenario.baseline)
        if not pairs:
            break
        run.round(index, pairs)
        index += 1
    return run.data()


@dataclass(frozen=True)
class Verdicts:
    """One simulated run's headline verdicts, per (workload, target)."""

    verdicts: dict[tuple[str, str], str]  # differs-better / differs-worse / same / undecided / negligible
    rounds: dict[tuple[str, str], int]

    def count(self, *words: str) -> int:
        return sum(1 for v in self.verdicts.values() if v in words)


def verdicts(run: RunData) -> Verdicts:
    """The headline comparisons' verdicts as every view shows them (the run's one family)."""
    decided = decide_runs([run], run.config.baseline)
    found, rounds = {}, {}
    for workload in run.workloads:
        metric = metric_of(workload)
        for record in run.targets:
            label = record.target.label
            key = (workload.name, metric, label)
            comparison = decided.family.comparisons.get(key)
            if comparison is None:
                continue
            if key in decided.family.within_precision:
                word = "negligible"
            elif comparison.verdict == "differs":
                word = "better" if comparison.ratio > 1 else "worse"
            else:
                word = comparison.verdict
            found[(workload.name, label)] = word
            rounds[(workload.name, label)] = comparison.n
    return Verdicts(found, rounds)


def summary_of(run: RunData):
    return summarize_runs([run])


def replace_config(run: RunData, **changes: object) -> RunData:
    return dataclasses.replace(run, config=dataclasses.replace(run.config, **changes))
