"""--sweep parsing, grid points and job-file sweep detection (pure)."""

from __future__ import annotations

import pytest

from mountbench.errors import UsageError
from mountbench.fio.sweeps import (
    check_axes,
    detect,
    generated_point,
    grid,
    label,
    merge_axes,
    parse_sweep,
    point_name,
    point_title,
)
from mountbench.model import SweepAxis, SweepPoint


def test_a_list_keeps_its_order_and_names_values_as_fio_reads_them():
    axis = parse_sweep("bs=4k,64k,1M")
    assert axis.option == "bs" and axis.values == ("4k", "64k", "1M")
    assert axis.numbers == (4096, 65536, 1 << 20) and axis.text == "bs=4k,64k,1M"
    assert parse_sweep("bs=4096,1536").values == ("4k", "1536")  # exact: 1536 is no whole number of k
    assert parse_sweep("iodepth=32,1,8").values == ("32", "1", "8")
    assert parse_sweep("BlockSize=1m").values == ("1M",)


def test_a_range_doubles_from_its_start_to_its_end():
    axis = parse_sweep("bs=1k..16M")
    assert axis.values[:3] == ("1k", "2k", "4k") and axis.values[-1] == "16M" and len(axis.values) == 15
    assert parse_sweep("iodepth=1..32").values == ("1", "2", "4", "8", "16", "32")
    assert parse_sweep("size=64M..64M").values == ("64M",)
    assert parse_sweep("numjobs=3..12").values == ("3", "6", "12")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("bs", "give OPTION=VALUES"),
        ("bs=", "give OPTION=VALUES"),
        ("=4k", "give OPTION=VALUES"),
        ("rw=read,write", "cannot sweep 'rw'; choose one of bs, iodepth, numjobs, size"),
        ("bs=4k,,8k", "an empty value"),
        ("bs=4k,lots", "'lots' is not a size"),
        ("bs=0", "not a positive size"),
        ("bs=1k..1T", "a block size of 1T cannot be measured; give block sizes from 512 to 256M"),  # issue 24 §9
        ("bs=1..4k", "a block size of 1 cannot be measured"),
        ("iodepth=1,two", "'two' is not a whole number"),
        ("iodepth=0..8", "between 1 and 65536"),
        ("numjobs=5000", "between 1 and 4096"),
        ("bs=4k,4096", "4k is given twice"),
        ("bs=16M..1k", "from the smaller value to the larger, e.g. bs=1k..16M"),
        ("bs=1k..10k", "10k is not 1k times a power of two"),
        ("bs=1k," + ",".join(f"{k}k" for k in range(2, 70)), "give at most 64"),
    ],
)
def test_bad_values_are_one_line_usage_errors(text, fragment):
    with pytest.raises(UsageError) as caught:
        parse_sweep(text)
    message = str(caught.value)
    assert fragment in message and "\n" not in message


def test_labels_use_binary_suffixes_only_when_exact():
    assert [label("bs", n) for n in (512, 1024, 1536, 1 << 20, 3 << 30)] == ["512", "1k", "1536", "1M", "3G"]
    assert label("iodepth", 1024) == "1024"


def test_several_axes_make_a_grid_and_a_given_option_replaces_a_presets():
    bs, depth = parse_sweep("bs=4k,1M"), parse_sweep("iodepth=1,8,32")
    points = grid([bs, depth])
    assert len(points) == 6 and [c.value for c in points[1]] == ["4k", "8"]  # the first axis varies slowest
    assert point_name("seqw", points[1]) == "seqw@bs=4k,iodepth=8"
    assert point_title("SEQ write", points[1]) == "SEQ write (bs=4k, iodepth=8)"
    point = generated_point("g", points[1])
    assert (point.option, point.value, point.generated) == ("bs", "4k", True)
    assert [c.option for c in point.coordinates] == ["bs", "iodepth"]
    assert SweepPoint.from_dict(point.to_dict()) == point
    declared = (parse_sweep("bs=1k..16M"),)
    assert merge_axes(declared, [parse_sweep("bs=4k")]) == (parse_sweep("bs=4k"),)
    assert merge_axes(declared, [depth]) == (declared[0], depth)


def test_a_grid_is_refused_when_an_option_repeats_or_it_grows_too_large():
    with pytest.raises(UsageError, match="given twice"):
        check_axes([parse_sweep("bs=4k"), parse_sweep("bs=8k")])
    with pytest.raises(UsageError, match="makes 1100 points per workload; narrow a range"):
        check_axes([parse_sweep("bs=512..256M"), parse_sweep("iodepth=1..1024"), parse_sweep("numjobs=1..16")])
    check_axes([parse_sweep("bs=1k..16M"), parse_sweep("iodepth=1..64")])  # 105 points: fine


def _job(section: str, **options: str) -> tuple[str, dict[str, str]]:
    base = {"rw": "write", "ioengine": "psync", "size": "64m", "runtime": "5"}
    return section, {**base, **options}


def test_job_file_sections_differing_in_one_option_alone_are_a_detected_sweep():
    jobs = [_job("w4k", bs="4k"), _job("w64k", bs="64k"), _job("w1m", bs="1m", filename="big")]
    points = detect(jobs, "job:/x.fio")
    assert set(points) == {"w4k", "w64k", "w1m"}  # a file name of its own does not break a sweep
    assert {p.generated for p in points.values()} == {False}
    assert {p.group for p in points.values()} == {"job:/x.fio sections differing in bs"}
    assert points["w1m"].value == "1m" and points["w1m"].number == 1 << 20


def test_detection_never_joins_sections_that_differ_in_anything_else():
    # the runtime differs for one: two sections left, too few for a curve
    assert detect([_job("a", bs="4k"), _job("b", bs="64k"), _job("c", bs="1m", runtime="9")], "job:/x") == {}
    # two options differ at once: no sweep
    assert detect([_job("a", bs="4k"), _job("b", bs="64k", iodepth="8"), _job("c", bs="1m")], "job:/x") == {}
    # the same value twice is not a sweep
    assert detect([_job("a", bs="4k"), _job("b", bs="4k"), _job("c", bs="1m")], "job:/x") == {}
    # ranges and variables are not plain values
    assert detect([_job("a", bs="4k-8k"), _job("b", bs="64k"), _job("c", bs="1m")], "job:/x") == {}


def test_detection_takes_fio_defaults_and_finds_several_sweeps_in_one_file():
    jobs = [_job("qd1"), _job("qd8", iodepth="8"), _job("qd32", iodepth="32")]  # qd1 leaves iodepth at 1
    jobs += [_job(f"r{n}", rw="read", bs=n) for n in ("4k", "8k", "16k")]
    jobs += [_job(f"w{n}", bs=n, direct="1") for n in ("4k", "8k", "16k")]
    points = detect(jobs, "job:/y")
    assert points["qd1"].option == "iodepth" and points["qd1"].value == "1"
    groups = {p.group for p in points.values()}
    assert len(groups) == 3 and "job:/y sections differing in bs #2" in groups
    assert points["qd1"].group != points["r4k"].group != points["w4k"].group


def test_an_axis_survives_its_dict_form():
    axis = parse_sweep("bs=1k..8k")
    assert SweepAxis.from_dict(axis.to_dict()) == axis
    with pytest.raises(ValueError):
        SweepAxis.from_dict({"option": "bs", "values": ["1k"], "numbers": []})
