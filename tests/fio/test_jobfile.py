import subprocess

import pytest

from mountbench.errors import UsageError
from mountbench.fio.jobfile import (
    FioJob,
    Section,
    duration_bound_s,
    evaluate_size,
    load_job_file,
    merged_jobs,
    parse_fio_time,
    parse_job_text,
    parse_sections,
    render_job,
    render_sections,
    sections_from_spec,
    sections_to_spec,
    wants_direct,
    working_set_bytes,
)
from mountbench.fio.jobgroups import group_sections

S0_JOB = """
[global]
size=2*1024*1024*$mb_memory
directory=/work
bs=4k
numjobs=$ncpus
thread=1
runtime=60s
direct=1
ioengine=libaio
group_reporting=1

[random-read]
rw=randread

[random-write]
rw=randwrite

[random-readwrite]
rw=randrw
rwmixread=70
rwmixwrite=30
"""

VARS = {"ncpus": 2, "mb_memory": 1024, "pagesize": 4096}


def test_s0_job_file_splits_into_three_jobs_with_globals_merged():
    jobs = parse_job_text(S0_JOB)
    assert [j.section for j in jobs] == ["random-read", "random-write", "random-readwrite"]
    assert jobs[2].get("rwmixread") == "70"
    assert jobs[0].get("thread") == "1"  # "thread=1"
    assert wants_direct(jobs[0])
    # twice the RAM per job clone, two clones
    assert working_set_bytes(jobs[0], VARS) == 2 * 2 * 1024 * 1024 * 1024
    assert duration_bound_s(jobs[0]) == 60


def test_global_section_applies_only_to_jobs_after_it():
    jobs = parse_job_text("[a]\nrw=read\n[global]\nbs=8k\n[b]\nrw=write\n")
    assert jobs[0].get("bs") is None
    assert jobs[1].get("bs") == "8k"


def test_later_assignment_wins_and_bare_flags_are_true():
    job = FioJob("x", (("bs", "4k"), ("bs", "1M"), ("time_based", None)))
    assert job.get("bs") == "1M"
    assert job.get("time_based") == "1"


def test_render_drops_user_directory_and_appends_overrides_last():
    job = parse_job_text(S0_JOB)[0]
    text = render_job(job, [("directory", "/scratch"), ("direct", "0")], comment="hello")
    lines = text.splitlines()
    assert lines[0] == "; hello"
    assert lines[1] == "[random-read]"
    assert "directory=/work" not in lines
    assert lines[-2:] == ["directory=/scratch", "direct=0"]
    assert "size=2*1024*1024*$mb_memory" in lines  # fio evaluates its own variables


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1000m", 1000 << 20),
        ("2*1024*1024*$mb_memory", 2 << 30),
        ("$ncpus*4k", 8192),
        ("(1+1)*1g", 2 << 30),
        ("10%", None),
        ("4k-8k", None),
    ],
)
def test_evaluate_size(value, expected):
    assert evaluate_size(value, VARS) == expected


@pytest.mark.parametrize(("value", "expected"), [("60s", 60), ("60", 60), ("500ms", 0.5), ("2m", 120), ("x", None)])
def test_parse_fio_time(value, expected):
    assert parse_fio_time(value) == expected


def test_buffered_zero_means_direct_and_the_last_of_the_two_wins():
    assert wants_direct(FioJob("x", (("buffered", "0"),)))
    assert not wants_direct(FioJob("x", (("buffered", "1"),)))
    assert not wants_direct(FioJob("x", ()))
    assert not wants_direct(FioJob("x", (("direct", "1"), ("buffered", "1"))))
    assert wants_direct(FioJob("x", (("buffered", "1"), ("direct", "1"))))
    assert wants_direct(FioJob("x", (("direct", None),)))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rw=read\n", "option before any"),
        ("[global]\nbs=4k\n", "no job sections"),
        ("[a]\ninclude other.fio\n", "include"),
        ("[a]\nopendir=/etc\n", "opendir= is not allowed"),
        ("[a]\nexec_prerun=rm -rf /\n", "exec_prerun= is not allowed"),
        ("[a]\nioengine=exec\n", "ioengine=exec is not allowed"),
        ("[a]\nioengine=external:/tmp/x.so\n", "is not allowed"),
        ("[../../evil]\nrw=write\nsize=1m\n", "section name would place fio's files outside"),
        ("[global]\nbs=4k\n[sub/dir]\nrw=read\n", "rename the section without '/'"),
        ("[a]\ncgroup=mine\n", "creates a control group"),
        ("[a]\nioscheduler=none\n", "I/O scheduler"),
        ("[s3]\nioengine=http\nhttp_mode=s3\nfilename=/bucket/key\n", "object store"),
        ("[a]\nioengine=rbd\n", "object store"),
        ("[server]\nioengine=net\nfilename=localhost/8888\n", "over the network"),
        ("[a]\nioengine=sg\nfilename=/dev/sg0\n", "drives a device"),
        ("[a]\nfilename=/dev/sda\n", "names a device"),
        ("[a]\nfilename=data.bin:/dev/nvme0n1\n", "names a device"),
        ("[a]\nfilename=/tmp/\n", "names a directory"),
        ("[a]\nfilename=/tmp/a/data\n[b]\nfilename=/tmp/b/data\n", "would be one file"),
        ("[a]\nfilename=data\n[b]\nfilename=/tmp/data\n", "would be one file"),
    ],
)
def test_bad_job_files_get_a_one_line_reason(text, message):
    with pytest.raises(UsageError, match=message):
        parse_job_text(text)


def test_missing_job_file(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        load_job_file(tmp_path / "nope.fio")


def test_s4_seed_job_parses_as_written(tmp_path):
    path = tmp_path / "random-read.fio"
    path.write_text("[random-read]\nrw=randread\nsize=1000m\ndirectory=/path/to/readfile\n")
    (job,) = load_job_file(path)
    assert job.get("rw") == "randread"
    assert working_set_bytes(job, VARS) == 1000 << 20
    assert duration_bound_s(job) is None


def test_comments_are_stripped_as_fio_strips_them():
    """fio cuts a line at its first ';' or '#', in a value and after a section name alike."""
    (job,) = parse_job_text("[global]\nbs=4k ; small\n[job one] # first\nfilename=sda ; or use /dev/sda\nsize=1m#x\n")
    assert job.section == "job one"
    assert job.get("filename") == "sda" and job.get("size") == "1m" and job.get("bs") == "4k"


def test_sections_of_one_name_are_what_fio_accepts():
    """fio runs both sections of one name (fio's e4defrag2 example has two): so does the parse."""
    jobs = parse_job_text("[a]\nrw=read\n[a]\nrw=write\n")
    assert [(j.section, j.get("rw")) for j in jobs] == [("a", "read"), ("a", "write")]


def test_sections_keep_their_globals_where_they_are_written():
    sections = parse_sections("[global]\nbs=4k\n[a]\nrw=read\n[global]\nbs=8k\n[b]\nrw=write\n")
    assert [(s.name, s.is_global) for s in sections] == [("global", True), ("a", False), ("global", True), ("b", False)]
    assert [j.get("bs") for j in merged_jobs(sections)] == ["4k", "8k"]


def test_the_file_renders_as_written_with_overrides_after_each_jobs_own_options():
    sections = parse_sections("[global]\ndirectory=/work\nbs=4k\n[a]\nrw=read\nruntime=5\n[b]\nrw=write\n")
    lines = render_sections(sections, [("directory", "/scratch"), ("runtime", "1")], "hi").splitlines()
    assert lines == ["; hi", "[global]", "; set by mountbench: directory=/work replaced (mountbench says where)",
                     "bs=4k", "; set by mountbench", "directory=/scratch",
                     "[a]", "rw=read", "runtime=5", "; set by mountbench",
                     "directory=/scratch", "runtime=1", "[b]", "rw=write", "; set by mountbench",
                     "directory=/scratch", "runtime=1"]  # fmt: skip


def test_a_filename_given_in_global_is_placed_in_the_target_by_real_fio(tmp_path):
    """fio resolves a [global] filename= against the globals' directory: a job's own directory=
    left the file in fio's working directory (issue 32's verify case read a file on /tmp's disk
    at half tmpfs's speed)."""
    target, elsewhere = tmp_path / "target", tmp_path / "cwd"
    target.mkdir()
    elsewhere.mkdir()
    sections = parse_sections("[global]\nfilename=kept.dat\nsize=64k\nbs=4k\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n")
    job = elsewhere / "job.fio"
    job.write_text(render_sections(sections, [("directory", str(target))]))
    done = subprocess.run(["fio", "--output-format=json", str(job)], cwd=elsewhere, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (target / "kept.dat").stat().st_size == 64 * 1024
    assert not (elsewhere / "kept.dat").exists()


def test_startdelay_counts_in_the_bound_at_the_top_of_its_range():
    assert duration_bound_s(FioJob("x", (("runtime", "2"), ("startdelay", "1-5")))) == 7
    assert duration_bound_s(FioJob("x", (("runtime", "2"), ("ramp_time", "1"), ("startdelay", "3s")))) == 6


PLACED = [
    ("filename=/tmp/data", "filename", "data"),
    ("filename=../x", "filename", "x"),
    ("filename=~/x:/var/tmp/y:z", "filename", "x:y:z"),
    ("filename_format=/scratch/$jobname.$jobnum", "filename_format", "$jobname.$jobnum"),
    ("donorname=../donor", "donorname", "donor"),
    ("write_bw_log=/tmp/bw", "write_bw_log", "bw"),
    ("filename=sub/data", "filename", "sub/data"),  # inside the scratch directory already: as written
]


@pytest.mark.parametrize(("line", "key", "placed"), PLACED)
def test_every_file_a_job_names_goes_where_mountbench_puts_it(line: str, key: str, placed: str):
    """Issue 49, item 20, one rule for directory= and a path: where a job's files go is mountbench's (each
    target's scratch directory; fio's logs: the run's work folder); of a path, only its name is kept."""
    (section,) = parse_sections(f"[a]\nioengine=e4defrag\n{line}\n")
    assert dict(section.options)[key] == placed
    written = line.partition("=")[2]
    rendered = render_sections([section], [("directory", "/scratch")]).splitlines()
    if placed != written:
        note = rendered.index(f"{key}={placed}") - 1
        assert rendered[note] == f"; set by mountbench: {key}={written} placed by its name (mountbench says where)"
    else:
        assert f"{key}={placed}" in rendered and not any("placed by its name" in line for line in rendered)


def test_directory_is_mountbenchs_and_a_shared_absolute_name_stays_one_file():
    sections = parse_sections("[global]\ndirectory=/data1\n[w]\nrw=write\nfilename=/tmp/data\n[v]\nstonewall\n"
                              "rw=read\nfilename=/tmp/data\n")  # fmt: skip
    rendered = render_sections(sections, [("directory", "/scratch")])
    read_by_fio = [line for line in rendered.splitlines() if not line.startswith(";")]
    assert "directory=/data1" not in read_by_fio and read_by_fio.count("filename=data") == 2
    assert "; set by mountbench: directory=/data1 replaced (mountbench says where)" in rendered
    assert group_sections(sections, "/x/m.fio")[0].name == "m"  # one file still: the two phases stay together


def test_placement_survives_the_stored_spec():
    (section,) = parse_sections("[a]\nfilename=/tmp/data\n")
    (back,) = sections_from_spec(sections_to_spec([section]))
    assert back == section
    assert sections_from_spec([["a", [["rw", "read"]]]]) == [Section("a", (("rw", "read"),))]  # stored before
