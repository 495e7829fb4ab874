"""Sweeps read as statistics (analysis/sweeps.py): peak, knee and whether the best point is clear."""

from mountbench.analysis.stats import summarize
from mountbench.analysis.sweeps import SweepOptimum, best_cell, best_is_clear, fixed_options, label, optimum


def test_optimum_finds_the_peak_the_knee_and_whether_the_peak_stands_out():
    points = [summarize([10.0, 11.0, 12.0]), summarize([95.0, 96.0, 97.0]), summarize([100.0, 101.0, 102.0])]
    assert optimum(points, higher_is_better=True) == SweepOptimum(peak=2, knee=1, clear=True)
    close = [summarize([10.0, 11.0, 12.0]), summarize([99.0, 101.0, 103.0]), summarize([100.0, 101.0, 102.0])]
    found = optimum(close, higher_is_better=True)
    assert found is not None and not found.clear  # the middle point's interval reaches the peak's


def test_optimum_of_a_latency_sweep_is_its_lowest_point_and_none_without_values():
    points = [summarize([5.0, 5.1, 5.2]), None, summarize([1.0, 1.1, 1.2])]
    found = optimum(points, higher_is_better=False)
    assert found is not None and found.peak == 2
    assert optimum([None, None], higher_is_better=True) is None


def test_best_cell_of_a_grid_and_whether_it_is_clear():
    cells = {
        (0, 0): summarize([1.0, 1.1, 1.2]),
        (0, 1): summarize([5.0, 5.1, 5.2]),
        (1, 0): summarize([2.0, 2.1, 2.2]),
        (1, 1): None,
    }
    assert best_cell(cells, higher_is_better=True) == (0, 1)
    assert best_is_clear(cells, (0, 1), higher_is_better=True)
    assert best_cell(cells, higher_is_better=False) == (0, 0)
    assert not best_is_clear(cells, None, higher_is_better=True)


def test_label_writes_sizes_in_binary_suffixes_and_counts_as_numbers():
    assert [label("bs", n) for n in (512, 1024, 1536, 1 << 20, 3 << 30)] == ["512", "1k", "1536", "1M", "3G"]
    assert label("iodepth", 1024) == "1024"


def test_fixed_options_leave_out_the_swept_options_and_file_placement():
    options = ["rw=write", "bs=4k", "blocksize=4k", "filename=a", "size=1G", "iodepth=8"]
    assert fixed_options(options, ["bs"]) == ("iodepth=8", "rw=write", "size=1G")
    assert fixed_options(options, ["iodepth"]) == ("blocksize=4k", "bs=4k", "rw=write", "size=1G")
