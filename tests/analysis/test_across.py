"""A run against a baseline run (analysis/across.py): each verdict where it belongs, the run level that
no number of rounds shrinks, the family's error rate over A/A pairs of runs (simulated with the run
effect the model assumes), and comparisons that have no data. Synthetic runs, fixed seeds."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from support.factories import INFO, fio_workload, make_run

from mountbench.analysis.across import (
    IMPROVED,
    NO_DATA,
    REGRESSED,
    UNDECIDED,
    WITHIN,
    Pair,
    decide_against,
)
from mountbench.model import RunLevel, TargetRecord

TIGHT = RunLevel((0.005,) * 3, (0.005,) * 3, 50.0, "calibrated", "test: a storage whose level holds to ±0.5 %")
WORKLOADS = [fio_workload("w1"), fio_workload("w2")]


def _run(values: dict[str, list[float]], run_id: str, label: str = "t", level: RunLevel | None = TIGHT,
         metric: str = "read.iops"):  # fmt: skip
    run = make_run({(label, name): v for name, v in values.items()}, metric, run_id=run_id, workloads=WORKLOADS)
    info = dataclasses.replace(INFO, run_level=level)
    return dataclasses.replace(run, targets=tuple(TargetRecord(r.target, info) for r in run.targets))


def _noisy(level: float, seed: int, n: int = 8, sd: float = 0.01) -> list[float]:
    return list(level * np.exp(np.random.default_rng(seed).normal(0, sd, n)))


def _decide(now, then, threshold=0.10, metric="read.iops"):
    found = decide_against(now, then, [Pair(now.target_labels()[0], then.target_labels()[0])], threshold)
    return {o.workload: o for o in found.outcomes}, found


def test_each_verdict_where_it_belongs():
    then = _run({"w1": _noisy(1000, 1), "w2": _noisy(1000, 2)}, "b")
    cases = {
        0.50: REGRESSED,  # half the IOPS
        1.60: IMPROVED,
        1.00: WITHIN,  # shown within ±10 % by two one-sided tests
        1.04: WITHIN,  # a real change, smaller than the threshold
    }
    for factor, verdict in cases.items():
        now = _run({"w1": _noisy(1000 * factor, 3), "w2": _noisy(1000 * factor, 4)}, "n")
        outcomes, against = _decide(now, then)
        assert {o.verdict for o in outcomes.values()} == {verdict}, (factor, outcomes)
        assert against.size == 2
    now = _run({"w1": _noisy(1040, 5, sd=0.002), "w2": _noisy(1040, 6, sd=0.002)}, "n")
    tight_then = _run({"w1": _noisy(1000, 7, sd=0.002), "w2": _noisy(1000, 8, sd=0.002)}, "b")
    outcomes, _ = _decide(now, tight_then)
    assert outcomes["w1"].verdict == WITHIN and outcomes["w1"].how == "a real change, within the threshold"


def test_a_lower_is_better_metric_regresses_upwards():
    then = _run({"w1": _noisy(1e-4, 1), "w2": _noisy(1e-4, 2)}, "b", metric="read.lat_mean")
    now = _run({"w1": _noisy(2e-4, 3), "w2": _noisy(1e-4, 4)}, "n", metric="read.lat_mean")
    workloads = [dataclasses.replace(w, description=dataclasses.replace(w.description, headline=("read.lat_mean",)))
                 for w in WORKLOADS]  # fmt: skip
    then, now = (dataclasses.replace(r, workloads=tuple(workloads)) for r in (then, now))
    outcomes, _ = _decide(now, then)
    assert outcomes["w1"].verdict == REGRESSED and outcomes["w2"].verdict == WITHIN


def test_the_run_level_keeps_a_default_tmpfs_undecided_whatever_the_rounds():
    """Two runs of a tmpfs (its default level: ±8 % at small blocks, a run) with identical samples: no
    difference shown, no sameness within ±10 % either, and no number of rounds would show it."""
    default = RunLevel((0.018, 0.006, 0.02), (0.12, 0.08, 0.15), 20, "default", "tmpfs")
    then = _run({"w1": [1000.0] * 12, "w2": [1000.0] * 12}, "b", level=default)
    now = _run({"w1": [1000.0] * 12, "w2": [1000.0] * 12}, "n", level=default)
    outcomes, _ = _decide(now, then)
    for outcome in outcomes.values():
        assert outcome.verdict == UNDECIDED
        assert outcome.reach is not None and outcome.reach.run_level_bound
        assert 1.1 < outcome.reach.bound < 1.6  # what it did show: no difference beyond that either way
        assert math.isclose(outcome.comparison.run_var, 2 * 0.08**2)


def test_at_most_5_percent_of_a_a_pairs_of_runs_call_anything_regressed_or_improved():
    """Pairs of runs of one storage, each run's level moved by the run level it declares (shared by its
    workloads, as a run's state is), its samples around that: the family's promise, at 4 workloads."""
    level = RunLevel((0.03,) * 3, (0.05,) * 3, 1e6, "calibrated", "as simulated")
    names = [f"w{i}" for i in range(4)]
    workloads = [fio_workload(name) for name in names]
    rng = np.random.default_rng(46)
    wrong = 0
    trials = 400
    for _ in range(trials):
        runs = []
        for run_id in ("b", "n"):
            shift = rng.normal(0, 0.05)
            values = {("t", n): list(1000 * np.exp(shift + rng.normal(0, 0.04, 3))) for n in names}
            run = make_run(values, run_id=run_id, workloads=workloads)
            info = dataclasses.replace(INFO, run_level=level)
            runs.append(dataclasses.replace(run, targets=tuple(TargetRecord(r.target, info) for r in run.targets)))
        found = decide_against(runs[1], runs[0], [Pair("t", "t")], 0.10)
        wrong += any(o.verdict in (REGRESSED, IMPROVED) for o in found.outcomes)
    assert wrong / trials <= 0.05 + 0.02, wrong  # 5 % family-wise, plus two standard errors of 400 trials


def test_comparisons_without_data_say_why():
    then = _run({"w1": _noisy(1000, 1), "w2": _noisy(1000, 2)}, "b")
    now = make_run({("t", "w1"): _noisy(1000, 3)}, run_id="n", workloads=WORKLOADS,
                   errors={("t", "w2"): "fio: EIO"})  # fmt: skip
    outcomes, against = _decide(now, then)
    assert outcomes["w2"].verdict == NO_DATA and "every one failed" in outcomes["w2"].how
    assert outcomes["w1"].verdict in (WITHIN, UNDECIDED) and against.size == 1
    one = _run({"w1": [1000.0], "w2": [1000.0]}, "n")
    outcomes, _ = _decide(one, _run({"w1": [1000.0], "w2": [1000.0]}, "b"))
    assert {o.verdict for o in outcomes.values()} == {UNDECIDED}
    assert all(not o.comparison.has_interval and o.reach is None for o in outcomes.values())


def test_a_renamed_target_is_compared_with_its_baseline_label():
    then = _run({"w1": _noisy(1000, 1), "w2": _noisy(1000, 2)}, "b", label="old")
    now = _run({"w1": _noisy(500, 3), "w2": _noisy(500, 4)}, "n", label="new")
    found = decide_against(now, then, [Pair("new", "old")], 0.10)
    assert {(o.target, o.baseline_target, o.verdict) for o in found.outcomes} == {("new", "old", REGRESSED)}
    assert found.cases().keys() == {("new", "w1"), ("new", "w2")}


def test_earlier_runs_of_the_storage_show_how_far_its_level_moves():
    """A 1.5× change between two tight runs is called with the record's tight run level; where five earlier
    runs of the storage moved as far as that from run to run, it is not: they show the run level to use."""
    levels = [1.0, 1.45, 0.7, 1.3, 0.8]
    earlier = [_run({"w1": _noisy(1000 * f, 10 + i), "w2": _noisy(1000 * f, 20 + i)}, f"e{i}")
               for i, f in enumerate(levels)]  # fmt: skip
    then, now = earlier[-1], _run({"w1": _noisy(1200, 31), "w2": _noisy(1200, 32)}, "n")
    alone, _ = _decide(now, then)
    assert {o.verdict for o in alone.values()} == {IMPROVED} and all(o.shown_runs == 0 for o in alone.values())
    found = decide_against(now, then, [Pair("t", "t")], 0.10, {"t": [(run, "t") for run in earlier]})
    assert {o.verdict for o in found.outcomes} == {UNDECIDED}
    assert all(o.shown_runs == 5 and o.comparison.run_var > 2 * 0.2**2 for o in found.outcomes)
    other = [dataclasses.replace(r, workloads=(fio_workload("w1", bs="8k"), fio_workload("w2", bs="8k")))
             for r in earlier[:-1]]  # fmt: skip
    unlike = decide_against(now, then, [Pair("t", "t")], 0.10, {"t": [(r, "t") for r in [*other, then]]})
    assert all(o.shown_runs == 0 for o in unlike.outcomes)  # runs of other options say nothing of these
