"""One family per run over every metric, decided once by a staged Holm procedure: the error rate it
promises (A/A families by simulation, fixed seeds), what the stages pass on, twins decided once, and
intervals that never disagree with the verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mountbench.analysis.family import COST, HEADLINE, OTHER, STAGE_SHARES, decide_family, holm, staged
from mountbench.analysis.stats import UNDECIDED, Comparison, compare, paired_compare, within

FAMILIES = 2000
TOLERANCE = 0.015  # three standard errors of a 5 % rate over 2,000 families is 1.5 %


def test_holm_steps_down_and_stops_at_the_first_failure():
    rejected, last = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005}, alpha=0.05)
    # 0.005 <= 0.05/4, 0.01 <= 0.05/3, then 0.03 > 0.05/2: stop (0.04 <= 0.05 does not count)
    assert rejected == {"a", "d"}
    assert last == pytest.approx(0.025)  # the share the last step tested at


def test_holm_leaves_out_what_has_no_test():
    rejected, last = holm({"a": 0.02, "none": math.nan})
    assert rejected == {"a"} and last == pytest.approx(0.05)


def test_stages_share_the_error_and_pass_it_on_when_exhausted():
    stages = {"h1": HEADLINE, "h2": HEADLINE, "c1": COST, "o1": OTHER, "o2": OTHER}
    # the headline stage has 80 % of 5 %, two comparisons: 0.02 each; both fall: its 0.04 goes on to stage 2
    steps: dict[int, float] = {}
    rejected, _ = staged(stages, {"h1": 0.001, "h2": 0.03, "c1": 0.04, "o1": 0.002, "o2": 0.5}, 0.05, steps=steps)
    assert rejected == {"h1", "h2", "c1", "o1"}
    # c1 (0.04) needs stage 1's share passed on (0.005 + 0.04); stage 2 exhausted passes 0.045 to stage 3
    assert steps[OTHER] == pytest.approx(0.05)  # o2 alone with all of it at the end
    # with h2 not rejected, nothing passes: c1 stays at its own 10 % share (0.005)
    rejected, _ = staged(stages, {"h1": 0.001, "h2": 0.5, "c1": 0.04, "o1": 0.002, "o2": 0.5}, 0.05)
    assert rejected == {"h1", "o1"}


def test_an_empty_stage_gives_its_share_to_the_headline():
    rejected, last = staged({"a": HEADLINE, "b": HEADLINE}, {"a": 0.024, "b": 0.5}, 0.05)
    # no other stage: all of 5 % for the headline, 0.025 each; then b alone at 0.05
    assert rejected == {"a"} and last == pytest.approx(0.05)
    rejected, last = staged({"a": HEADLINE, "b": HEADLINE, "o": OTHER}, {"a": 0.024, "b": 0.5, "o": 0.9}, 0.05)
    # no host cost: 90 % of 5 % for the headline, 0.0225 each
    assert rejected == set() and last == pytest.approx(0.0225)
    assert sum(STAGE_SHARES.values()) == pytest.approx(1.0)


def test_the_decisions_do_not_depend_on_the_order_of_the_keys():
    rng = np.random.default_rng(3)
    for _ in range(200):
        keys = [f"k{i}" for i in range(12)]
        p = {k: float(rng.uniform(0, 0.02)) for k in keys}
        stages = {k: (HEADLINE, COST, OTHER)[i % 3] for i, k in enumerate(keys)}
        forward, _ = staged(stages, p)
        backward, _ = staged(dict(reversed(stages.items())), dict(reversed(p.items())))
        assert forward == backward


def _aa_family(rng: np.random.Generator, rounds: int = 3, paired: bool = True, workloads: int = 6, stages=None):
    """Two equal targets. Paired: each round has its own level (a busy moment, a layout) that both
    of its samples share, and each sample its noise; unpaired: independent samples."""
    found = {}
    for w in range(workloads):
        level = np.exp(rng.normal(0, 0.3, rounds)) if paired else 1.0
        base = 100 * level * np.exp(rng.normal(0, 0.05, rounds))
        values = 100 * level * np.exp(rng.normal(0, 0.05, rounds))
        if paired:
            found[w] = paired_compare(list(zip(base, values, strict=True)))
        else:
            found[w] = compare(list(base), list(values))
    return decide_family(found, stage_of=stages)


@pytest.mark.parametrize("paired", [True, False])
@pytest.mark.parametrize("rounds", [3, 8])
def test_a_a_families_call_a_difference_in_at_most_five_percent(paired, rounds):
    """2,000 simulated A/A runs of six comparisons in the three stages: some difference called in at
    most 5 % of them, and not far below once the spread floor no longer binds (8 rounds): the control is
    not bought with blindness."""
    rng = np.random.default_rng(31)
    stages = {w: (HEADLINE, HEADLINE, HEADLINE, HEADLINE, COST, OTHER)[w] for w in range(6)}
    wrong = sum(bool(_aa_family(rng, rounds, paired, stages=stages).different) for _ in range(FAMILIES))
    assert wrong / FAMILIES <= 0.05 + TOLERANCE, wrong / FAMILIES
    if rounds == 8:
        assert wrong / FAMILIES >= 0.05 - 2 * TOLERANCE, wrong / FAMILIES


def test_each_comparison_at_95_percent_would_call_many_more():
    """The point of a family: the same A/A comparisons, each at 95 %, call some difference in
    about 1 − 0.95⁶ ≈ 26 % of families."""
    rng = np.random.default_rng(31)
    loose = 0
    for _ in range(400):
        family = _aa_family(rng)
        loose += any(c.p_value < 0.05 for c in family.comparisons.values())
    assert loose / 400 > 0.15


def _mixed_family(rng: np.random.Generator) -> tuple[dict[int, Comparison], set[int]]:
    """Three true differences of 1.25× and three equal pairs, five paired rounds each."""
    found = {}
    for w in range(6):
        ratio = 1.25 if w < 3 else 1.0
        base = 100 * np.exp(rng.normal(0, 0.1, 5))
        values = 100 * ratio * np.exp(rng.normal(0, 0.1, 5))
        found[w] = paired_compare(list(zip(base, values, strict=True)))
    return found, {3, 4, 5}


def test_holm_decides_more_than_bonferroni_and_keeps_the_error_rate():
    rng = np.random.default_rng(7)
    holm_found = bonferroni_found = wrong = 0
    for _ in range(FAMILIES):
        found, equal = _mixed_family(rng)
        family = decide_family(found)
        bonferroni = {key for key, c in found.items() if c.p_value <= 0.05 / 6}
        assert bonferroni <= family.different  # never fewer decisions
        holm_found += len(family.different)
        bonferroni_found += len(bonferroni)
        wrong += bool(family.different & equal)
    assert holm_found > 1.05 * bonferroni_found, (holm_found, bonferroni_found)
    assert wrong / FAMILIES <= 0.05 + TOLERANCE


def test_one_level_stated_once_and_every_interval_agrees_with_its_decision():
    rng = np.random.default_rng(5)
    for _ in range(300):
        found, _ = _mixed_family(rng)
        family = decide_family(found)
        assert family.size == 6 and family.level == pytest.approx(0.95)  # what every format states
        r = len(family.different)
        step = 0.05 / max(1, 6 - r) if r < 6 else family.step_alpha  # one stage: all of the 5 %
        for key, comparison in family.comparisons.items():
            if key not in family.same:
                assert comparison.level == pytest.approx(1 - step)  # a fixed-size run: one level per stage
            assert comparison.significant == (key in family.different)
            assert (comparison.verdict == "differs") == (key in family.different)
            assert comparison.ratio == found[key].ratio and comparison.p_value == found[key].p_value


def test_twins_are_one_hypothesis_with_one_decision():
    found = {
        w: paired_compare([(100.0, 130.0 + i), (110.0, 140.0), (90.0, 125.0)])
        for i, w in enumerate(("bw", "iops", "x"))
    }
    found["iops"] = found["bw"]
    family = decide_family(found, aliases={"iops": "bw"})
    assert family.size == 2  # the twin is not counted twice
    assert family.comparisons["iops"].verdict == family.comparisons["bw"].verdict
    assert (family.comparisons["iops"].low, family.comparisons["iops"].high) == (
        family.comparisons["bw"].low,
        family.comparisons["bw"].high,
    )
    assert ("iops" in family.different) == ("bw" in family.different)


def test_a_small_real_difference_is_different_within_the_precision():
    pairs = [(100.0, 102.0 + d) for d in (0.05, -0.05, 0.1, -0.1, 0.0, 0.02, -0.02, 0.03)]
    family = decide_family({"w": paired_compare(pairs)})
    assert family.within_precision == {"w"} and family.comparisons["w"].verdict == "differs"
    assert within(family.comparisons["w"].low, family.comparisons["w"].high, 0.05)


def test_comparisons_without_an_interval_are_not_in_the_family():
    found = {"one": paired_compare([(1.0, 2.0)]), "two": paired_compare([(1.0, 2.0), (1.1, 2.1), (0.9, 1.9)])}
    family = decide_family(found)
    assert family.size == 1 and family.comparisons["one"].verdict == "no-interval"


def test_an_adaptive_look_spends_its_share_of_the_family_error():
    found = {
        w: paired_compare([(100.0, 100.0 * (1 + 0.02 * w + d)) for d in (0.03, -0.02, 0.01, 0.0)]) for w in range(3)
    }
    shares = {0: 1.0, 1: 0.25, 2: 0.1}
    family = decide_family(found, shares, same_shares={0: 1.0, 1: 0.0, 2: 0.0})
    assert family.same == {0}  # ±5 % shown by the two one-sided tests; the others' looks spend no sameness error
    assert within(family.comparisons[0].low, family.comparisons[0].high, 0.05)
    for key in (1, 2):
        assert family.comparisons[key].level == pytest.approx(1 - shares[key] * family.step_alpha)
        assert family.comparisons[key].verdict == UNDECIDED


def test_the_empty_family():
    family = decide_family({})
    assert family.size == 0 and family.level == pytest.approx(0.95) and not family.different


def test_level_at_plans_with_the_stages_last_share_and_the_looks_share():
    from mountbench.analysis.stats import spent_by
    from mountbench.model import RunConfig

    found = {w: paired_compare([(100.0, 100.0 + d) for d in (1.0, -2.0, 3.0)]) for w in range(4)}
    family = decide_family(found)
    assert family.level_at()(10) == pytest.approx(1 - family.step_alpha)
    adaptive = family.level_at(RunConfig(repeat=3, seed=1, baseline="a", until=0.05))  # looks 3, 5, 8, 12
    assert adaptive(3) == pytest.approx(1 - family.step_alpha * spent_by(3 / 12))
    assert adaptive(5) == pytest.approx(1 - family.step_alpha * (spent_by(5 / 12) - spent_by(3 / 12)))
    assert adaptive(7) == pytest.approx(1 - family.step_alpha * (spent_by(8 / 12) - spent_by(5 / 12)))


@pytest.mark.parametrize("ratios", [(1.3, 1.3, 1.3, 1.3, 1.3, 1.0), (1.05, 1.1, 1.15, 1.2, 1.3, 1.5)])
def test_what_the_family_claims_holds_together_in_95_percent_of_runs(ratios):
    """The claims of family.py's doc, all at once: every comparison not called different has an
    interval that covers its true ratio, and every one called different has the right direction."""
    rng = np.random.default_rng(17)
    held = 0
    for _ in range(FAMILIES):
        found = {}
        for w, ratio in enumerate(ratios):
            base = 100 * np.exp(rng.normal(0, 0.1, 5))
            found[w] = paired_compare(list(zip(base, ratio * 100 * np.exp(rng.normal(0, 0.1, 5)), strict=True)))
        family = decide_family(found)
        held += all(
            (c.low > 1) == (ratios[k] > 1) if k in family.different else c.low <= ratios[k] <= c.high
            for k, c in family.comparisons.items()
            if k not in family.same
        )
    assert held / FAMILIES >= 0.95 - TOLERANCE, held / FAMILIES
