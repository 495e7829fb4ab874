"""--size on a user's job file (kinds/fio.py with_size): the largest workload's whole working set
(every job and clone) becomes the size asked, size, filesize and io_size scaled by one factor and
rounded to the job's block size, a filesize alone scaled too, fill_device replaced and said;
--runtime replacing the file's runtime said; --fsync-writes' variants answering --only by the names
shown. In-process: the workloads, not fio."""

from __future__ import annotations

from pathlib import Path

from mountbench.engine.workloads import assemble
from mountbench.fio.jobfile import FioJob
from mountbench.kinds.fio import jobs_of


def one(tmp_path: Path, text: str, **overrides) -> list[FioJob]:
    job = tmp_path / "mine.fio"
    job.write_text(text)
    (workload,) = assemble([], [job], **overrides)
    return jobs_of(workload)


def test_size_filesize_and_io_size_scale_together_to_whole_blocks(tmp_path: Path):
    (job,) = one(tmp_path, "[j]\nrw=read\nbs=4k\nsize=100m\nfilesize=10m\nnrfiles=10\nio_size=50m\n", size=8597504)
    size, filesize, io_size = (int(job.get(key) or 0) for key in ("size", "filesize", "io_size"))
    assert size % 4096 == 0 and filesize % 4096 == 0 and io_size % 4096 == 0
    assert size >= 10 * filesize and abs(io_size / size - 0.5) < 0.01


def test_a_filesize_alone_is_scaled_so_no_file_is_left_with_a_hole(tmp_path: Path):
    (job,) = one(tmp_path, "[j]\nrw=read\nbs=4k\nfilesize=128m\n", size=64 << 20)
    assert job.get("filesize") == str(64 << 20) and job.get("size") is None  # fio sizes it from its file


def test_a_size_below_a_mib_keeps_its_own_block(tmp_path: Path):
    (job,) = one(tmp_path, "[j]\nrw=read\nbs=4k\nsize=1g\n", size=8192)
    assert job.get("size") == "8192"


def test_sections_run_together_keep_their_proportions(tmp_path: Path):
    big, small = one(tmp_path, "[big]\nrw=read\nsize=64m\n[small]\nrw=read\nsize=16m\n", size=10 << 20)
    assert (int(big.get("size") or 0), int(small.get("size") or 0)) == (8 << 20, 2 << 20)


def test_size_is_the_whole_working_set_and_never_grows_a_file_of_many_jobs(tmp_path: Path):
    """Issue 49, item 19: fio's 1mbs_clients runs 32 jobs of 32 MiB at once (1 GiB); --size 256M set
    the largest job's size, so every job grew to 256 MiB and the run planned 8 GiB."""
    job = tmp_path / "clients.fio"
    job.write_text(
        "[global]\nsize=32m\nrw=read\nrate=1250\n" + "".join(f"[file{i}]\nstartdelay={4 * i}\n" for i in range(32))
    )
    (workload,) = assemble([], [job], size=256 << 20)
    assert workload.description.space_bytes == 256 << 20
    assert {int(j.get("size") or 0) for j in jobs_of(workload)} == {8 << 20}


def test_size_counts_every_clone_of_numjobs(tmp_path: Path):
    (job,) = one(tmp_path, "[clones]\nrw=read\nsize=32m\nnumjobs=32\n", size=256 << 20)
    assert int(job.get("size") or 0) == 8 << 20  # 32 clones of 8 MiB: 256 MiB, not 32 of 256 MiB


def test_a_file_shared_by_two_sections_is_counted_once(tmp_path: Path):
    text = "[w]\nrw=write\nfilename=f\nsize=64m\n[v]\nstonewall\nrw=read\nfilename=f\nsize=64m\n"
    write, verify = one(tmp_path, text, size=16 << 20)
    assert int(write.get("size") or 0) == int(verify.get("size") or 0) == 16 << 20


def test_workloads_of_one_file_keep_their_proportions_to_the_largest(tmp_path: Path):
    """tiobench's shape, one workload a section: the largest workload gets --size, the others their share."""
    job = tmp_path / "phases.fio"
    job.write_text("[global]\nstonewall\nrw=read\n[a]\nsize=512m\nnumjobs=4\n[b]\nsize=256m\nnumjobs=4\n")
    a, b = assemble([], [job], size=256 << 20)
    assert (a.description.space_bytes, b.description.space_bytes) == (256 << 20, 128 << 20)


def test_fsync_variants_answer_to_the_names_shown(tmp_path: Path):
    """Issue 49, item 19: --fsync-writes adds file1-fsync, and --only file1-fsync was refused ("matches no
    workload; the workloads are: file1"): --only chose before the variants existed."""
    from mountbench.engine.workloads import from_options
    from mountbench.errors import UsageError
    from mountbench.model import RunOptions

    job = tmp_path / "one.fio"
    job.write_text("[file1]\nrw=write\nsize=1m\n")

    def names(*only: str) -> list[str]:
        options = RunOptions(job_files=(str(job),), only=only, fsync_writes=True)
        return [w.name for w in from_options(options)]

    assert names("file1-fsync") == ["file1-fsync"]
    assert names("file1") == ["file1", "file1-fsync"]  # a variant answers to its workload's name too
    assert names("*fsync") == ["file1-fsync"]
    try:
        names("nothing")
    except UsageError as exc:
        assert "the workloads are: file1, file1-fsync" in str(exc)
    else:
        raise AssertionError("--only nothing was not refused")


def test_fill_device_becomes_the_size_asked_and_says_so(tmp_path: Path):
    job = tmp_path / "fill.fio"
    job.write_text("[fill]\nrw=write\nbs=64k\nfill_device=1\n")
    (workload,) = assemble([], [job], size=4 << 20)
    (fill,) = jobs_of(workload)
    assert fill.get("fill_device") == "0" and fill.get("size") == str(4 << 20)
    assert [c["code"] for c in workload.spec["caveats"]] == ["size-replaced"]


def test_runtime_replaced_by_the_command_line_is_said_and_a_cap_is_not(tmp_path: Path):
    job = tmp_path / "long.fio"
    job.write_text("[global]\nstonewall\n[long]\nrw=read\nsize=1m\nruntime=900\n[open]\nrw=read\nsize=1m\n")
    long, capped = assemble([], [job], runtime=1.0)
    assert "replaced the job file's runtime=900" in long.spec["caveats"][0]["text"]
    assert "caveats" not in capped.spec  # its runtime was mountbench's cap, not the file's
    assert jobs_of(long)[0].get("runtime") == "1000ms"
