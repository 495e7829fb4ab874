"""Which sections fio runs together (fio/jobgroups.py): one workload for those, one each for the
independent rest; and the time fio's schedule takes."""

from __future__ import annotations

import pytest

from mountbench.errors import UsageError
from mountbench.fio.jobfile import merged_jobs, parse_sections
from mountbench.fio.jobgroups import group_sections, timeline_bound_s


def groups(text: str) -> list[tuple[str, list[str]]]:
    return [(g.name, [s.name for s in g.sections]) for g in group_sections(parse_sections(text), "/x/mine.fio")]


def test_sections_without_stonewall_run_together_as_the_whole_file():
    assert groups("[global]\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n") == [("mine", ["global", "a", "b"])]


def test_stonewalled_sections_without_shared_files_are_split_and_keep_their_globals():
    found = group_sections(parse_sections("[global]\nstonewall\nbs=8k\n[a]\nrw=read\n[b]\nrw=write\n"), "/x/m.fio")
    assert [(g.name, [s.name for s in g.sections]) for g in found] == [("a", ["global", "a"]), ("b", ["global", "b"])]
    assert "measured alone" in found[0].reason and "stonewall" in found[0].reason


def test_a_verify_phase_stays_with_the_phase_that_wrote_its_file():
    text = "[w]\nrw=write\nfilename=f\n[v]\nstonewall\nrw=read\nfilename=f\nverify=md5\n[x]\nstonewall\nrw=read\n"
    found = group_sections(parse_sections(text), "/x/m.fio")
    assert [(g.name, [s.name for s in g.sections]) for g in found] == [("w+v", ["w", "v"]), ("x", ["x"])]
    assert "[v] works on the files of [w]" in found[0].reason


def test_wait_for_joins_the_waitee_and_an_unknown_waitee_is_refused():
    text = "[a]\nrw=read\n[b]\nstonewall\n[c]\nstonewall\nwait_for=a\n"
    assert groups(text) == [("a+c", ["a", "c"]), ("b", ["b"])]  # [b] waits on neither: measured alone
    with pytest.raises(UsageError, match="wait_for=ghost names no section before it"):
        groups("[a]\nrw=read\nwait_for=ghost\n")


def test_sections_of_one_name_share_their_files_and_run_as_one():
    assert groups("[twin]\nrw=read\n[twin]\nstonewall\nrw=write\n") == [("mine", ["twin", "twin"])]


def test_a_global_after_a_group_is_not_part_of_it():
    assert groups("[a]\nrw=read\n[global]\nstonewall\n[b]\nrw=write\n") == [("a", ["a"]), ("b", ["global", "b"])]


def test_the_timeline_counts_phases_wait_for_and_startdelay():
    jobs = merged_jobs(
        parse_sections(
            "[a]\nruntime=2\n[b]\nruntime=3\nstartdelay=1-4\n[c]\nstonewall\nruntime=1\n[d]\nwait_for=c\nruntime=5\n"
        )
    )
    assert timeline_bound_s(jobs) == 13  # max(2, 4+3) + 1 + 5
    assert timeline_bound_s(merged_jobs(parse_sections("[a]\nrw=read\n"))) is None


def test_sections_that_share_a_donor_file_stay_together_in_order():
    """Issue 49, item 20: e4defrag2's sections share donorname=file.def across stonewalls; they were split
    and run in shuffled order. A donor file is a file the sections work on: they stay one workload, in order."""
    text = (
        "[global]\nioengine=e4defrag\nsize=1m\nbs=32k\ndonorname=file.def\n"
        "[parallel]\nrw=write\nnumjobs=4\n"
        "[e1]\nstonewall\nrw=write\ndonorname=e2\n[e2]\nrw=write\ndonorname=e1\n"
        "[fuzzer]\nstonewall\nrw=randwrite\nfilename=file\n"
    )
    found = group_sections(parse_sections(text), "/x/e4.fio")
    assert [(g.name, [s.name for s in g.sections]) for g in found] == [
        ("parallel+fuzzer", ["global", "parallel", "fuzzer"]),
        ("e1+e2", ["global", "e1", "e2"]),
    ]
    assert "[fuzzer] works on the files of [parallel]" in found[0].reason


def test_a_donor_that_is_another_sections_file_joins_them():
    text = (
        "[global]\nioengine=e4defrag\nsize=1m\n[a]\nrw=write\nfilename=one\n[b]\nstonewall\nrw=write\ndonorname=one\n"
    )
    assert groups(text) == [("mine", ["global", "a", "b"])]


def test_a_file_named_as_another_section_names_its_files_by_default_is_shared():
    """[b] names [a]'s own file (a.0.0, fio's default name): one file, one workload."""
    text = "[global]\nsize=1m\n[a]\nrw=write\n[b]\nstonewall\nrw=read\nfilename=./a.0.0\n[c]\nstonewall\nrw=read\n"
    assert groups(text) == [("a+b", ["global", "a", "b"]), ("c", ["global", "c"])]


def test_a_donor_name_left_from_the_globals_binds_only_e4defrag_jobs():
    """donorname= is e4defrag's option: a libaio job below the same [global] moves no donor file."""
    text = (
        "[global]\nioengine=e4defrag\ndonorname=d\nsize=1m\n[a]\nrw=write\n[b]\nstonewall\nioengine=libaio\nrw=read\n"
    )
    assert groups(text) == [("a", ["global", "a"]), ("b", ["global", "b"])]
