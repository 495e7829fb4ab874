"""A storage's runs over time (analysis/overtime.py): the step a history has is found where it is and no
other, a stationary history shows none, incomparable runs are never joined, the run's own level
variance is counted, and runs are matched by path and filesystem, not by label. Synthetic runs
(support/factories.history_runs), fixed seeds."""

from __future__ import annotations

import dataclasses

from support.factories import INFO, history_runs

from mountbench.analysis import overtime
from mountbench.analysis.comparable import Storage
from mountbench.kinds import make_workload
from mountbench.model import RunLevel, TargetRecord

STEP = [1.0] * 5 + [0.6] * 5  # ten runs, the level 1.67× lower from the sixth on


def _history(runs):
    (storage, items), *others = overtime.storages(runs).items()
    assert not others, "one storage"
    return overtime.history(items, storage)


def test_ten_runs_with_one_step_in_the_middle_find_that_step_and_no_other():
    for seed in range(3):
        found = _history(history_runs(STEP, seed=seed))
        assert found.tests == 3
        for series in found.series:
            assert [step.index for step in series.steps] == [5], (seed, series.workload, series.steps)
            (step,) = series.steps
            assert 0.5 < step.factor < 0.72 and step.p_value <= step.alpha
            assert series.points[5].run_id == found.runs[5][0]


def test_a_history_without_a_step_shows_none():
    histories = [_history(history_runs([1.0] * 10, seed=100 + seed)) for seed in range(20)]
    assert sum(h.steps > 0 for h in histories) <= 1  # 5 % family-wise; 20 histories


def test_a_step_needs_two_comparable_runs_on_each_side():
    short = _history(history_runs([1.0, 1.0, 0.5], seed=1))
    assert short.tests == 0 and short.steps == 0


def test_runs_measured_otherwise_start_a_new_segment_and_no_step_is_looked_for_across_it():
    runs = history_runs(STEP, seed=4)
    runs = [r if i < 5 else dataclasses.replace(r, host={**r.host, "fio_version": "fio-3.36"})
            for i, r in enumerate(runs)]  # fmt: skip
    found = _history(runs)
    assert [(cut.index, [d.text for d in cut.differences]) for cut in found.cuts] == [(5, ["fio fio-3.33 → fio-3.36"])]
    for series in found.series:
        assert series.segments() == [(0, 5), (5, 10)]
        assert series.steps == ()  # the level changed with fio: not a step of this storage


def test_a_workload_whose_options_changed_is_a_new_segment_of_its_own():
    runs = history_runs([1.0] * 8, seed=5)
    changed = []
    for i, run in enumerate(runs):
        if i >= 4:
            first = run.workloads[0]
            spec = {**first.spec, "options": [*first.spec["options"], ["size", "1G"]]}
            again = make_workload(first.name, first.kind, first.title, first.source, spec)  # described anew
            run = dataclasses.replace(run, workloads=(again, *run.workloads[1:]))
        changed.append(run)
    found = _history(changed)
    assert found.cuts == ()
    segments = {s.workload: s.segments() for s in found.series}
    assert segments == {"w1": [(0, 4), (4, 8)], "w2": [(0, 8)], "w3": [(0, 8)]}


def test_a_kernel_update_is_noted_and_compared_across():
    runs = history_runs(STEP, seed=6)
    runs = [r if i < 5 else dataclasses.replace(r, host={**r.host, "kernel": "6.2"}) for i, r in enumerate(runs)]
    found = _history(runs)
    assert found.cuts == () and [(n.index, n.differences[0].text) for n in found.notes] == [(5, "kernel 6.1 → 6.2")]
    assert all([s.index for s in series.steps] == [5] for series in found.series)  # what the update did


def _with_level(runs, level: float):
    """Every run's target with a calibrated run level of ``level`` (the spread of its own level)."""
    calibrated = RunLevel((level,) * 3, (level,) * 3, 50.0, "calibrated", "test")
    return [
        dataclasses.replace(run, targets=tuple(
            TargetRecord(r.target, dataclasses.replace(INFO, run_level=calibrated)) for r in run.targets))
        for run in runs
    ]  # fmt: skip


def test_each_runs_level_variance_is_counted():
    """A 10 % step between runs whose samples are tight: shown for a storage whose level is known to move
    ±1 % a run, not for one whose runs are taken to move ±25 % (as a network mount's default does)."""
    runs = history_runs([1.0] * 5 + [0.9] * 5, seed=7, run_sd=0.005, sample_sd=0.005)
    assert all(s.steps for s in _history(_with_level(runs, 0.01)).series)
    assert not any(s.steps for s in _history(_with_level(runs, 0.25)).series)


def test_a_renamed_target_stays_in_its_series_and_another_filesystem_is_another():
    runs = history_runs([1.0] * 6, seed=8)
    renamed = [
        dataclasses.replace(run, targets=(dataclasses.replace(run.targets[0], target=dataclasses.replace(
            run.targets[0].target, label="fast")),), samples=tuple(
            dataclasses.replace(s, target="fast") for s in run.samples)) if i >= 3 else run
        for i, run in enumerate(runs)
    ]  # fmt: skip
    found = _history(renamed)
    assert [label for _, _, label in found.runs] == ["ram"] * 3 + ["fast"] * 3
    assert all(len(s.points) == 6 for s in found.series)
    other = dataclasses.replace(INFO, fstype="ext4", mount_source="/dev/vdb")
    moved = [*runs[:3], *(dataclasses.replace(r, targets=(TargetRecord(r.targets[0].target, other),))
                          for r in runs[3:])]  # fmt: skip
    storages = overtime.storages(moved)
    assert set(storages) == {Storage("/ram", "tmpfs", "tmpfs"), Storage("/ram", "ext4", "/dev/vdb")}
    assert [len(items) for items in storages.values()] == [3, 3]


def test_the_permutation_p_value_of_a_split_is_the_same_every_time():
    points = _history(history_runs(STEP, seed=9)).series[0].points
    assert overtime.max_step(points) == overtime.max_step(points)
    assert overtime.max_step(points)[1] == 5
