"""The statistics' promises, checked by simulation on the project's own functions (tests/support/simulate.py:
log-normal noise, a share of it common to a round, each target's run effect as its filesystem type's
default says, fio's 100 ms intervals in every sample; the analysis is analysis/decided.py's and the
rounds analysis/sequential.py's, as reports and the engine use them).

Issue 46's targets: at most 5 % of runs with any false "different" for the default run, --until 5 % and
--until 10 %, at CV 2–20 % with the run effect; at 1.2×, CV 10 %, three fixed rounds, at least half the
comparisons detected; the default run says "the same" when its data allow; six mounts decided as two;
projections met in at least 75 % of cases. Seeds are fixed: every figure is the same on every run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.simulate import QUICK, Scenario, adaptive_run, fixed_run, metric_of, verdicts

from mountbench.analysis.decided import decide_runs
from mountbench.analysis.reach import reach
from mountbench.analysis.stats import last_look_share

DEFAULT_LOOKS = (3, 4)  # what a two-target default run's budget fixes on this kind of machine (36 s: 3-4 rounds)


def _allowance(runs: int, rate: float = 0.05) -> float:
    """The rate plus one and a half standard errors of it over ``runs`` runs (a fixed seed: no flakiness)."""
    return rate + 1.5 * math.sqrt(rate * (1 - rate) / runs)


def _wrong(found, targets=("b",)) -> bool:
    return any(v in ("better", "worse") for (w, t), v in found.verdicts.items() if t in targets)


@pytest.mark.parametrize("cv", [0.02, 0.05, 0.1, 0.2])
def test_the_default_run_calls_an_a_a_pair_different_in_at_most_five_percent(cv):
    rng = np.random.default_rng(int(cv * 1000))
    runs = 300
    wrong = sum(
        _wrong(verdicts(adaptive_run(Scenario({"b": 1.0}, cv=cv, shared=0.3), rng, 0.05, looks=DEFAULT_LOOKS)))
        for _ in range(runs)
    )
    assert wrong / runs <= _allowance(runs), wrong / runs


@pytest.mark.parametrize("until", [0.05, 0.10])
@pytest.mark.parametrize("cv", [0.02, 0.05, 0.1, 0.2])
def test_until_calls_an_a_a_pair_different_in_at_most_five_percent(until, cv):
    rng = np.random.default_rng(int(cv * 1000) + int(until * 100))
    runs = 80
    wrong = sum(
        _wrong(verdicts(adaptive_run(Scenario({"b": 1.0}, cv=cv, shared=0.3), rng, until))) for _ in range(runs)
    )
    assert wrong / runs <= _allowance(runs), wrong / runs


def test_workloads_of_unlike_noise_in_one_run_keep_the_error_rate():
    """A run's workloads are not alike: a 1 MiB Q8 read wanders ±20 %, a 4 KiB Q1 read holds ±2 %. Borrowing
    strength across them would make the noisiest look surer than it is, but for the prior following what
    each sample's own 100 ms intervals predict (offline: 12 % of runs wrong without it, 4.75 % with)."""
    cvs = dict(zip([name for name, _, _ in QUICK], (0.2, 0.12, 0.05, 0.08, 0.02, 0.03), strict=True))
    rng = np.random.default_rng(3)
    runs = 400
    wrong = sum(
        _wrong(verdicts(fixed_run(Scenario({"b": 1.0}, cv=lambda t, w: cvs[w], shared=0.3), rng))) for _ in range(runs)
    )
    assert wrong / runs <= _allowance(runs), wrong / runs


def test_a_fifth_of_a_difference_at_ten_percent_noise_is_found_in_three_rounds():
    """1.2× in every workload, CV 10 % per sample, half of it common to a round (what hits both targets of a
    round alike), three fixed rounds: the last wave's rule found 2.9 %; moderated variances and the paired
    interval with the run level find over half (offline: 52-55 %)."""
    rng = np.random.default_rng(5)
    runs = 200
    found = sum(
        verdicts(fixed_run(Scenario({"b": 1.2}, cv=0.1, shared=0.5), rng)).count("better", "negligible")
        for _ in range(runs)
    )
    assert found / (6 * runs) >= 0.5, found / (6 * runs)


def test_the_default_run_says_the_same_when_its_data_allow():
    """A quiet A/A pair (1 % per sample): its small-block comparisons are shown within ±5 % by the default run
    itself (its large-block ones carry the run level of sequential I/O, ±1.8 % a target, which three rounds
    cannot shrink below what ±5 % needs at this level)."""
    rng = np.random.default_rng(9)
    runs, same = 60, 0
    for _ in range(runs):
        found = verdicts(adaptive_run(Scenario({"b": 1.0}, cv=0.01, shared=0.3), rng, 0.05, looks=DEFAULT_LOOKS))
        same += sum(1 for (w, _), v in found.verdicts.items() if v == "same" and w.startswith("q"))
    assert same / (4 * runs) >= 0.8, same / (4 * runs)


def test_six_mounts_are_decided_as_two():
    """Three directories of a tmpfs and three of a disk (7× slower, noisier), the first tmpfs the baseline: the
    tmpfs-against-disk comparisons are decided, and tmpfs against tmpfs is never called different in more than
    5 % of runs (the run's 30 comparisons are one family)."""
    scenario = Scenario(
        {"b": 1.0, "c": 1.0, "d": 1 / 7, "e": 1 / 7, "f": 1 / 7},
        cv=lambda t, w: 0.1 if t in "def" else 0.04,
        shared=0.3,
        fstypes={"d": "ext4", "e": "ext4", "f": "ext4"},
    )
    rng = np.random.default_rng(11)
    runs, decided, wrong = 300, 0, 0
    for _ in range(runs):
        found = verdicts(fixed_run(scenario, rng))
        decided += sum(1 for (_, t), v in found.verdicts.items() if t in "def" and v == "worse")
        wrong += _wrong(found, targets=("b", "c"))
    assert decided / (18 * runs) >= 0.9
    assert wrong / runs <= _allowance(runs), wrong / runs


def test_projections_are_met_in_at_least_three_runs_of_four():
    """An undecided comparison's note says how many rounds ±5 % would take (its upper figure: the spread's upper
    80 % bound) and the command that gets there (--until 5% --max-repeat N). Running that command on the same
    pair gets an interval no wider than ±5 % (or a decision) by then in at least 75 % of cases."""
    scenario = Scenario({"b": 1.0}, cv=0.025, shared=0.3)
    rng = np.random.default_rng(13)
    met = asked = 0
    for _ in range(60):
        first = fixed_run(scenario, rng)
        family = decide_runs([first], "a").family
        for workload in first.workloads:
            comparison = family.comparisons.get((workload.name, metric_of(workload), "b"))
            if comparison is None or comparison.verdict != "undecided":
                continue
            step = family.step_alphas.get(1, 0.045)
            found = reach(comparison, 0.05, 12, lambda n, step=step: 1 - step * last_look_share(3, n))
            if found is None or found.sure_rounds is None or found.sure_rounds > 30:
                continue
            again = adaptive_run(scenario, rng, 0.05, max_repeat=max(3, found.sure_rounds))
            later = decide_runs([again], "a").family.comparisons[(workload.name, metric_of(workload), "b")]
            asked += 1
            met += later.verdict != "undecided" or later.precise
    assert asked >= 30
    assert met / asked >= 0.75, (met, asked)


def test_a_stationary_run_rarely_carries_a_flag_of_change():
    """No drift, no cold start, no outlier (CV 10 %, three to twelve rounds, two targets, six workloads): flags
    of change over the run (drift, a step, a cold start) are judged at one false-discovery threshold over the
    run's cells, and outliers only from six samples on. Before, 28 % of such runs' cells carried a false
    "drift" and 29 % a "cold start" (issue 46)."""
    from mountbench import model
    from mountbench.analysis.summary import summarize_runs

    change = {model.DRIFT, model.MACHINE_DRIFT, model.FIRST_SAMPLE, model.RATIO_DRIFT}
    rng = np.random.default_rng(17)
    for rounds, runs in ((3, 40), (8, 40), (12, 30)):
        flagged = outliers = 0
        for _ in range(runs):
            summary = summarize_runs([fixed_run(Scenario({"b": 1.0}, cv=0.1, shared=0.3), rng, rounds)])
            codes = {c.code for row in summary.rows for cell in row.cells.values() for c in cell.caveats}
            flagged += bool(codes & change)
            outliers += model.OUTLIERS in codes
        assert flagged / runs <= 0.1, (rounds, flagged / runs)  # runs with any such flag (FDR 5 %: about 5 %)
        assert rounds >= 6 or outliers == 0
