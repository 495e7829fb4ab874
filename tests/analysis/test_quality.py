"""The flags that change a reader's conclusion: drift (the cell's, the machine's), a cold
first sample, outliers with the command that lists them, a ratio too wide to rank, and
whether interleaving kept a ratio fair while the machine drifted."""

from __future__ import annotations

import dataclasses

import pytest
from support.factories import make_run

from mountbench import model
from mountbench.analysis.summary import summarize_runs

STEADY = [100, 103, 98, 101, 99, 102, 100, 97]
RISING = [100, 104, 115, 130, 160, 190, 240, 300]


def _timed(run: model.RunData) -> model.RunData:
    """make_run stores round i as sample i: give them times in round order."""
    samples = tuple(dataclasses.replace(s, started_at=1000.0 + s.round) for s in run.samples)
    return dataclasses.replace(run, samples=samples)


def _codes(cell) -> set[str]:
    return {c.code for c in cell.caveats}


def test_no_unstable_flag_for_a_merely_noisy_cell():
    run = _timed(make_run({("a", "w"): [100, 140, 80, 120, 95], ("b", "w"): [50, 70, 40, 60, 48]}))
    row = summarize_runs([run]).rows[0]
    assert not any(code in model.QUALITY_CODES - {model.OUTLIERS} for c in row.cells.values() for code in _codes(c))


def test_a_drifting_target_is_flagged_with_its_size_and_a_steady_one_is_not():
    run = _timed(make_run({("ram", "w"): STEADY, ("disk", "w"): [v / 10 for v in RISING], ("ssd", "w"): STEADY}))
    cells = summarize_runs([run]).rows[0].cells
    drift = next(c for c in cells["disk"].caveats if c.code == model.DRIFT)
    # IOPS: higher is better; 270 vs 102
    assert "rose 2.65× over the run (better later; trend p " in drift.text and "p = p" not in drift.text
    assert model.DRIFT not in _codes(cells["ssd"]) and model.MACHINE_DRIFT not in _codes(cells["ram"])
    # the baseline did not drift, so the per-round ratio of disk trends: interleaving could not help
    assert model.RATIO_DRIFT in _codes(cells["disk"])


def test_machine_drift_on_the_baseline_and_a_ratio_interleaving_kept_fair():
    rising_too = [v * 2 for v in RISING]  # the same drift hits both targets: rounds are interleaved
    run = _timed(make_run({("ram", "w"): rising_too, ("disk", "w"): RISING}))
    cells = summarize_runs([run]).rows[0].cells
    machine = next(c for c in cells["ram"].caveats if c.code == model.MACHINE_DRIFT)
    assert machine.text.startswith("the machine drifted: the baseline's samples rose")
    assert model.RATIO_STEADY in _codes(cells["disk"]) and model.RATIO_DRIFT not in _codes(cells["disk"])
    assert cells["disk"].comparison.ratio == pytest.approx(0.5)


def test_wall_time_that_rises_is_worse_later():
    run = _timed(make_run({("a", "extract"): RISING}, metric="wall"))
    (cell,) = summarize_runs([run], metrics=["wall"]).rows[0].cells.values()
    text = next(c.text for c in cell.caveats if c.code == model.MACHINE_DRIFT)
    assert "worse later" in text


def test_a_cold_first_sample_says_what_to_do():
    run = _timed(make_run({("a", "w"): [60, 100, 101, 99, 100]}))
    (cell,) = summarize_runs([run]).rows[0].cells.values()
    first = next(c for c in cell.caveats if c.code == model.FIRST_SAMPLE)
    assert "40% lower (worse)" in first.text and "--warmup 1" in first.text


def test_outliers_name_the_command_that_lists_the_samples():
    run = _timed(make_run({("a", "w"): [100, 101, 99, 100, 102, 500]}, run_id="20260101-000000-abcd"))
    (cell,) = summarize_runs([run]).rows[0].cells.values()
    outliers = next(c for c in cell.caveats if c.code == model.OUTLIERS)
    assert "'mountbench show 20260101-000000-abcd --samples'" in outliers.text


def test_a_ratio_too_wide_to_rank_says_so_and_a_tight_same_does_not():
    wide = _timed(make_run({("a", "w"): [100, 50, 150], ("b", "w"): [60, 140, 100]}))
    assert model.WIDE_RATIO in _codes(summarize_runs([wide]).rows[0].cells["b"])
    same = _timed(make_run({("a", "w"): [100, 101, 99], ("b", "w"): [100, 100.5, 99.5]}))
    cell = summarize_runs([same]).rows[0].cells["b"]
    assert not cell.comparison.significant and model.WIDE_RATIO not in _codes(cell)


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        (2, "a cold start, or a step from sample 2 on"),
        (5, "drift: samples fell 5.9"),
        (12, "drift: samples fell 6.00×"),
    ],
)
def test_the_three_drift_placements_are_each_named(sample, expected):
    """Issue 23: slowed 6× from sample 2 was 'a cold start?', from 8 only 'outliers'. The flags are judged at
    one false-discovery threshold over the run's cells (issue 46): a step needs the samples to show it (from
    sample 8 of 10, three samples after it: 1 permutation in 70 puts them there by chance, not enough among
    eight tests; from 12 of 16, 1 in 800)."""
    values = [600.0 if i + 1 < sample else 100.0 for i in range(16)]
    values = [v * (1 + 0.01 * ((i * 7) % 5 - 2)) for i, v in enumerate(values)]  # a little noise
    run = _timed(make_run({("a", "w"): values, ("b", "w"): [100.0 + i % 3 for i in range(16)]}))
    cell = summarize_runs([run], baseline="b").rows[0].cells["a"]
    texts = " | ".join(c.text for c in cell.caveats)
    assert expected in texts, texts
    if sample > 2:
        assert "cold start" not in texts, texts
        assert "drift too large for interleaving to cancel" in texts, texts
        assert f"at a step from sample {sample} of 16, round {sample}" in texts, texts
        assert "--samples' shows the timeline" in texts
