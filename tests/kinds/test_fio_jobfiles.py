"""Issue 32's acceptance list on real fio and tmpfs: a user's job file runs as fio would run it
(sections fio runs together as one workload, its time structure kept, its figures flagged for
what they are) or is refused before the first sample with a one-line reason, leaving the
target untouched. The cases are in tests/support/jobfile_cases.py; how close the figures come
to plain fio's on the same text is bench/jobfiles.py's (a speed comparison, not a test here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.jobfile_cases import CASES, Case
from support.runhelpers import load_export, mountbench, snapshot
from support.tools import needs_fio

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_job_file_runs_as_fio_would_or_is_refused_up_front(case: Case, tmp_path: Path, mb_env, tmpfs_dir: Path):
    job = tmp_path / f"{case.name}.fio"
    job.write_text(case.text)
    out = tmp_path / "run.json"
    before = snapshot(tmpfs_dir)
    proc = mountbench("run", str(tmpfs_dir), "--job", str(job), "--repeat", "1", "--json", str(out), *case.args,
                      env=mb_env)  # fmt: skip
    if case.refused:
        assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert case.refused in lines[0], lines[0]
        assert snapshot(tmpfs_dir) == before  # refused before anything was written
        return
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    assert tuple(w["name"] for w in run["workloads"]) == case.workloads
    samples = run["samples"]
    assert samples and all(s["ok"] for s in samples), [s["error"] for s in samples]
    codes = {c["code"] for s in samples for c in s["caveats"]}
    assert set(case.codes) <= codes, (case.codes, codes)
    for name in case.extra.get("metrics", ()):
        assert all(s["metrics"].get(name, 0) > 0 for s in samples), (name, samples[0]["metrics"].keys())
    assert snapshot(tmpfs_dir) == before  # the scratch directory went, and nothing else was left


def test_a_section_name_that_climbs_out_writes_nothing_outside(tmp_path: Path, mb_env, tmpfs_dir: Path):
    """The issue's case: [../../evil] made fio write evil.0.0 two levels above the scratch directory."""
    target = tmpfs_dir / "a" / "b"
    target.mkdir(parents=True)
    job = tmp_path / "evil.fio"
    job.write_text("[global]\nsize=1m\n[fine]\nrw=write\n[../../evil]\nrw=write\n")
    proc = mountbench("run", str(target), "--job", str(job), "--repeat", "1", env=mb_env)
    assert proc.returncode == 2 and "[../../evil]" in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmpfs_dir.rglob("*")) == ["a", "b"]


def test_the_plan_counts_startdelay_and_the_dry_run_says_why_sections_run_together(tmp_path: Path, mb_env):
    job = tmp_path / "late.fio"
    job.write_text("[global]\nruntime=2\ntime_based=1\nsize=1m\n[now]\nrw=read\n[later]\nrw=read\nstartdelay=5\n")
    target = tmp_path / "t"
    target.mkdir()
    proc = mountbench("run", str(target), "--job", str(job), "--dry-run", "--repeat", "1", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    words = " ".join(proc.stdout.split())
    # startdelay 5 s + runtime 2 s + fio's own start 0.3 s, + laying out 2 MiB at the target's pace (engine/plan.py
    # layout_pace: 0.04 s on a local disk, under 0.01 s in RAM)
    assert re.search(r"late \(≤ 7\.3[0-4] s\)", words), words
    assert "caveat: one workload, as fio runs it: the whole file (2 jobs) kept together" in words
    assert "startdelay=5" in words and "[global]" in words  # the file as written, globals where they stand


def test_a_hang_plain_fio_shows_too_is_named_as_fios():
    from mountbench.fio.jobfile import FioJob
    from mountbench.kinds.fio import hang_message

    offload = FioJob("x", (("io_submit_mode", "offload"),))
    assert "plain fio hangs with io_submit_mode=offload too" in hang_message([offload], 100)
    assert "is the target hung?" in hang_message([FioJob("x", ())], 100)


def test_jobs_that_end_apart_give_fios_group_reporting_figure(tmp_path: Path, mb_env, tmpfs_dir: Path):
    """Issue 49, item 18: two jobs of one group, of different sizes and not time-based, each held to
    500 IOPS: the short one ends at 0.4 s, the long one at 1 s. fio's group_reporting gives 700 I/Os
    over 1 s; adding the two jobs' own rates gives 1,000. mountbench's figure is fio's, checked against
    `fio --group_reporting` on the same job file; each job's own figure is stored beside it."""
    import json
    import subprocess

    job = tmp_path / "apart.fio"
    job.write_text(
        "[global]\nioengine=psync\nrw=randread\nbs=4k\nrate_iops=500\n[short]\nsize=800k\n[long]\nsize=2000k\n"
    )
    plain = tmpfs_dir / "plain"
    plain.mkdir()
    done = subprocess.run(["fio", "--group_reporting", "--output-format=json", f"--directory={plain}", str(job)],
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    (group,) = json.loads(done.stdout[done.stdout.index("{") :])["jobs"]
    out = tmp_path / "run.json"
    proc = mountbench("run", str(tmpfs_dir), "--job", str(job), "--repeat", "1", "--json", str(out), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (sample,) = [s for s in load_export(out)["runs"][0]["samples"] if not s.get("warmup")]
    metrics = sample["metrics"]
    assert metrics["read.iops"] == pytest.approx(group["read"]["iops"], rel=0.05), (metrics, group["read"]["iops"])
    assert metrics["read.bw"] == pytest.approx(group["read"]["bw_bytes"], rel=0.05)
    assert metrics["short/read.iops"] == pytest.approx(500, rel=0.05)  # each job's own rate, as fio gives it
    assert metrics["long/read.iops"] == pytest.approx(500, rel=0.05)


TIOBENCH_SHAPED = (
    "[global]\nioengine=psync\nbs=64k\nsize=6m\nnumjobs=2\nruntime=200ms\ntime_based=1\n"
    "[f1]\nrw=write\n[f2]\nstonewall\nrw=randwrite\n[f3]\nstonewall\nrw=read\n[f4]\nstonewall\nrw=randread\n"
)


def test_sections_one_after_another_lay_out_their_files_one_at_a_time(tmp_path: Path, mb_env):
    """Issue 49, item 19: tiobench's shape (four stonewalled sections, each two jobs with files of their
    own) was refused on a filesystem that holds one section's files, since all four sections' files were
    counted at once; mountbench measures them as four workloads and lays out one's files at a time
    (another's are deleted first), so the run needs the largest one's room, and says so in the dry run."""
    from support import realmounts

    job = tmp_path / "tio.fio"
    job.write_text(TIOBENCH_SHAPED)
    out = tmp_path / "run.json"
    with realmounts.tmpfs("32m") as small:  # one section: 2 x 6 MiB; all four: 48 MiB
        dry = mountbench("run", str(small), "--job", str(job), "--dry-run", "--repeat", "2", env=mb_env)
        assert dry.returncode == 0, dry.stderr
        assert "at most 12.0 MiB at once" in " ".join(dry.stdout.split()), dry.stdout
        proc = mountbench("run", str(small), "--job", str(job), "--repeat", "2", "--json", str(out), env=mb_env)
        assert proc.returncode == 0, proc.stderr
        assert [p.name for p in small.iterdir()] == []
    (run,) = load_export(out)["runs"]
    assert [w["name"] for w in run["workloads"]] == ["f1", "f2", "f3", "f4"]
    assert len(run["samples"]) == 8 and all(s["ok"] for s in run["samples"]), [s["error"] for s in run["samples"]]


def test_every_engine_this_fio_lists_is_sorted():
    """fio --enghelp's engines are each in fio/engines.py's table, so the reason a job is refused with
    (or not) is the engine's own, never a guess."""
    import subprocess

    from mountbench.fio import engines

    listed = subprocess.run(["fio", "--enghelp"], capture_output=True, text=True, timeout=30).stdout
    names = {line.strip() for line in listed.splitlines()[1:] if line.strip()}
    assert names and names <= engines.KNOWN, names - engines.KNOWN


def test_a_path_a_job_names_is_placed_by_its_name_where_mountbench_measures(tmp_path: Path, mb_env, tmpfs_dir: Path):
    """Issue 49, item 20, one rule for directory= and a path: filename=/tmp/... was refused ("use a relative
    name") while directory= was replaced. Now both say what mountbench does: a job's files go in each
    target's scratch directory, fio's logs in the run's work folder, and of a path only the name is kept.
    Nothing is written where the file says; the file and the log land where mountbench measures."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    job = tmp_path / "paths.fio"
    job.write_text(f"[global]\ndirectory={elsewhere}\n[w]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\n"
                   f"filename={elsewhere}/data\nwrite_bw_log={elsewhere}/bw\n"
                   f"[r]\nstonewall\nioengine=psync\nrw=read\nbs=4k\nsize=1m\nfilename={elsewhere}/data\n")  # fmt: skip
    out = tmp_path / "run.json"
    dry = mountbench("run", str(tmpfs_dir), "--job", str(job), "--dry-run", "--repeat", "1", env=mb_env)
    assert dry.returncode == 0, dry.stderr
    assert f"; set by mountbench: filename={elsewhere}/data placed by its name (mountbench says where)" in dry.stdout
    assert f"; set by mountbench: directory={elsewhere} replaced (mountbench says where)" in dry.stdout
    proc = mountbench("run", str(tmpfs_dir), "--job", str(job), "--repeat", "1", "--json", str(out), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    assert [w["name"] for w in run["workloads"]] == ["paths"]  # one file still: write and read stay together
    assert all(s["ok"] for s in run["samples"]), [s["error"] for s in run["samples"]]
    assert list(elsewhere.iterdir()) == []


SHARED_BY_DEFAULT_NAME = (
    "[global]\nioengine=psync\nbs=4k\nsize=256k\n"
    "[a]\nrw=write\nverify=crc32c\ndo_verify=0\n"  # writes a.0.0 (fio's default name) with verify headers
    "[b]\nstonewall\nrw=read\nfilename=./a.0.0\nverify=crc32c\n"  # reads [a]'s file back and checks it
    "[c]\nstonewall\nrw=randread\n"  # a file of its own: independent
)


def test_stonewalled_sections_sharing_a_file_stay_together_in_order(tmp_path: Path, mb_env, tmpfs_dir: Path):
    """Issue 49, item 20: [b] names [a]'s file as fio names it (a.0.0, `--debug=file` says both add it),
    so they are one workload run as written, [a] first; split apart, [b] ran alone on files mountbench
    laid out, in shuffled order, and its verify found no headers. [c] shares nothing: a workload of its own."""
    import subprocess

    job = tmp_path / "shared.fio"
    job.write_text(SHARED_BY_DEFAULT_NAME)
    plain = tmp_path / "plain"
    plain.mkdir()
    fio_view = subprocess.run(["fio", "--debug=file", f"--directory={plain}", str(job)], cwd=plain,
                              capture_output=True, text=True, timeout=60, check=True).stdout  # fmt: skip
    added = re.findall(r"add file (\S+)", fio_view)
    assert [Path(name).name for name in added] == ["a.0.0", "a.0.0", "c.0.0"], added  # fio's own view: one file
    out = tmp_path / "run.json"
    proc = mountbench("run", str(tmpfs_dir), "--job", str(job), "--repeat", "2", "--json", str(out), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    assert sorted(w["name"] for w in run["workloads"]) == ["a+b", "c"]
    samples = run["samples"]
    assert len(samples) == 4 and all(s["ok"] for s in samples), [s["error"] for s in samples]
    grouped = [s for s in samples if s["workload"] == "a+b"]
    assert all(s["metrics"]["a/write.iops"] > 0 and s["metrics"]["b/read.iops"] > 0 for s in grouped)


def test_an_engine_of_another_system_is_named_as_missing_not_as_a_device(tmp_path: Path, mb_env, tmpfs_dir: Path):
    """Issue 49, item 20: windowsaio is Windows' file engine; it was refused as "drives a device". On this
    fio it is refused for what is true: this fio was built without it (and nothing is written)."""
    from support.runhelpers import assert_one_line_error

    job = tmp_path / "win.fio"
    job.write_text("[a]\nioengine=windowsaio\nrw=read\nsize=1m\n")
    before = snapshot(tmpfs_dir)
    proc = mountbench("run", str(tmpfs_dir), "--job", str(job), "--dry-run", env=mb_env)
    line = assert_one_line_error(proc, "windowsaio", "not in this fio")
    assert "device" not in line
    assert snapshot(tmpfs_dir) == before


def test_size_shrinks_a_file_of_many_jobs_in_the_dry_runs_plan(tmp_path: Path, mb_env):
    """Issue 49, item 19, as a user sees it: fio's 1mbs_clients (32 jobs of 32 MiB, 1 GiB run together) at
    --size 256M planned 8 GiB (every job made 256 MiB); the dry run now plans 256 MiB, 8 MiB a job."""
    job = tmp_path / "clients.fio"
    job.write_text("[global]\nsize=32m\nrw=read\nrate=1250\n" + "".join(f"[file{i}]\n" for i in range(32)))
    target = tmp_path / "target"
    target.mkdir()
    dry = mountbench("run", str(target), "--job", str(job), "--size", "256M", "--dry-run", "--repeat", "1",
                     env=mb_env)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    flat = " ".join(dry.stdout.split())
    assert "at most 256 MiB at once" in flat, dry.stdout
    set_sizes = re.findall(r"^size=(\S+)$", dry.stdout, re.MULTILINE)
    assert set_sizes.count("8388608") >= 32 and set(set_sizes) == {"32m", "8388608"}, set_sizes  # as written; set
    assert list(target.iterdir()) == []
