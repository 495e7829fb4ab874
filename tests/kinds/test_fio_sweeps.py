"""The fio kind's sweeps: generated workloads, detected job-file sweeps, the s3 preset,
and how workloads.assemble applies --sweep (pure: no fio runs here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mountbench.engine.workloads import assemble, from_options, select
from mountbench.errors import UsageError
from mountbench.fio.jobfile import FioJob
from mountbench.fio.sweeps import parse_sweep
from mountbench.kinds.fio import KIND as FIO
from mountbench.kinds.tree import TreeChoice
from mountbench.model import PAGE_CACHE, KindOptions, RunOptions
from mountbench.presets import load_preset


def _options(workload) -> FioJob:
    return FioJob.from_spec(workload.spec)


def test_each_point_is_a_workload_named_and_described_by_its_value():
    (base,) = [w for w in load_preset("quick").workloads if w.name == "rnd4k-q32-write"]
    points = FIO.sweep(base, [parse_sweep("bs=4k,64k,1M")])
    assert [w.name for w in points] == ["rnd4k-q32-write@bs=4k", "rnd4k-q32-write@bs=64k", "rnd4k-q32-write@bs=1M"]
    assert points[1].title == "RND 4K Q32 write (bs=64k)" and points[1].source == "preset:quick"
    assert _options(points[1]).get("bs") == "64k" and _options(points[1]).section == "rnd4k-q32-write-bs-64k"
    sweep = points[2].description.sweep
    assert sweep.generated and (sweep.option, sweep.value, sweep.number) == ("bs", "1M", 1 << 20)
    assert sweep.group == "preset:quick rnd4k-q32-write over bs"
    assert "bs=1M" in points[2].description.summary
    # one unit along the curve: bandwidth at 4k as at 1M (the 4k point used to be quoted in IOPS)
    assert {w.description.headline[1] for w in points} == {"write.bw"}


def test_a_grid_carries_every_swept_value_and_keeps_the_headline_when_bs_is_fixed():
    (base,) = [w for w in load_preset("quick").workloads if w.name == "rnd4k-q1-read"]
    points = FIO.sweep(base, [parse_sweep("iodepth=1,8"), parse_sweep("numjobs=1,2")])
    assert [w.name for w in points][-1] == "rnd4k-q1-read@iodepth=8,numjobs=2"
    last = points[-1].description.sweep
    assert [(c.option, c.value) for c in last.coordinates] == [("iodepth", "8"), ("numjobs", "2")]
    assert points[-1].description.headline[0] == "read.iops"  # a 4k job: IOPS, as without the sweep


def test_kb_base_1000_jobs_get_bytes_and_split_block_sizes_refuse_a_bs_sweep(tmp_path: Path):
    job = tmp_path / "j.fio"
    # stonewall: fio runs the sections one after another, so each is a workload of its own
    job.write_text(
        "[global]\nstonewall\n[si]\nrw=read\nkb_base=1000\nsize=1m\n[split]\nrw=read\nbssplit=4k/50:64k/50\nsize=1m\n"
    )
    si, split = FIO.load_job_file(job)
    assert _options(FIO.sweep(si, [parse_sweep("bs=4k")])[0]).get("bs") == "4096"
    with pytest.raises(UsageError, match="sets bssplit"):
        FIO.sweep(split, [parse_sweep("bs=4k")])


def test_job_file_sections_differing_in_bs_alone_carry_a_detected_point(tmp_path: Path):
    job = tmp_path / "mine.fio"
    sections = "".join(f"[seqw-{bs}]\nbs={bs}\n" for bs in ("4k", "64k", "1m"))
    head = "[global]\nrw=write\nioengine=libaio\niodepth=8\ndirect=1\nsize=256M\nstonewall\n"
    job.write_text(head + sections + "[other]\nrw=read\n")
    workloads = {w.name: w for w in FIO.load_job_file(job)}
    points = {name: w.description.sweep for name, w in workloads.items()}
    assert points["other"] is None
    assert {p.generated for name, p in points.items() if p} == {False}
    assert points["seqw-1m"].group == f"job:{job} sections differing in bs"
    assert workloads["seqw-4k"].description.headline[1] == "write.bw"


def test_a_declared_caveat_is_carried_by_every_point():
    (buffered,) = [w for w in load_preset("s3").workloads if w.name == "seqw-buffered"]
    (point, *_) = FIO.sweep(buffered, [parse_sweep("bs=4k,8k")])
    (caveat,) = point.spec["caveats"]
    assert caveat["code"] == PAGE_CACHE and "what S3's dd loop measured" in caveat["text"]


def test_the_s3_preset_sweeps_1k_to_16m_buffered_fsynced_and_read_plus_rsync():
    workloads = assemble(["s3"], [])
    names = [w.name for w in workloads]
    assert len(names) == 3 * 15 + 2 and names[-2:] == ["rsync", "rsync-update"]
    assert "seqw-buffered@bs=1k" in names and "seqw-fsync@bs=16M" in names and "seqr@bs=256k" in names
    fsync = next(w for w in workloads if w.name == "seqw-fsync@bs=1k")
    job = _options(fsync)
    assert job.get("end_fsync") == "1" and job.get("size") == "512M" and job.get("unlink") == "1"
    assert fsync.description.duration_bound_s == 5.0  # a cap: 512 MiB or 5 s, whichever comes first
    # --sweep bs replaces the preset's own range; another option makes a grid
    narrowed = assemble(["s3"], [], sweeps=[parse_sweep("bs=4k,1M")])
    assert [w.name for w in narrowed if w.kind == "fio"][:2] == ["seqw-buffered@bs=4k", "seqw-buffered@bs=1M"]
    grid = assemble(["s3"], [], sweeps=[parse_sweep("iodepth=1,4")])
    assert sum(w.kind == "fio" for w in grid) == 3 * 15 * 2 and "seqr@bs=2k,iodepth=4" in [w.name for w in grid]


def test_assemble_sweeps_presets_and_job_files_and_only_selects_points(tmp_path: Path):
    job = tmp_path / "w.fio"
    job.write_text("[w]\nrw=write\nsize=4m\n")
    workloads = assemble(["quick"], [job], sweeps=[parse_sweep("iodepth=1,16")])
    assert len(workloads) == (6 + 1) * 2 and "w@iodepth=16" in [w.name for w in workloads]
    kept = select(workloads, ["*@iodepth=16"])
    assert len(kept) == 7 and all(w.description.sweep.value == "16" for w in kept)
    by_base = select(workloads, ["seq1m-q8-read"])  # the name a point was swept from picks all its points
    assert [w.name for w in by_base] == ["seq1m-q8-read@iodepth=1", "seq1m-q8-read@iodepth=16"]


def test_assemble_refuses_what_cannot_be_swept():
    tree = KindOptions.of({"tree": TreeChoice(profile="tiny")})
    only_tree = RunOptions(kind_options=tree, only=("extract",), sweeps=(parse_sweep("bs=4k"),))
    with pytest.raises(UsageError, match="none of the chosen workloads is a fio job"):
        from_options(only_tree)  # the tree preset's churn jobs were swept, but --only left none of them
    with pytest.raises(UsageError, match="--size and a sweep of size"):
        assemble(["quick"], [], size=1 << 30, sweeps=[parse_sweep("size=64M,128M")])
    with pytest.raises(UsageError, match="given twice"):
        assemble(["quick"], [], sweeps=[parse_sweep("bs=4k"), parse_sweep("bs=8k")])


def test_the_points_of_a_job_without_file_names_share_the_jobs_files(tmp_path: Path):
    job = tmp_path / "w.fio"
    job.write_text("[w]\nrw=write\nsize=64m\n")
    (base,) = FIO.load_job_file(job)
    points = FIO.sweep(base, [parse_sweep("bs=4k..1M")])
    assert {_options(p).get("filename_format") for p in points} == {"w.$jobnum.$filenum"}
    assert {p.description.space_group for p in points} == {"w.$jobnum.$filenum"}  # one file set, not five
    (quick,) = [w for w in load_preset("quick").workloads if w.name == "seq1m-q8-read"]
    assert _options(FIO.sweep(quick, [parse_sweep("bs=4k")])[0]).get("filename_format") == "mountbench.$jobnum.$filenum"
