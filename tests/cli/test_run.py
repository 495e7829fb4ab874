"""mountbench run against real directories and real mounts, with real fio."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import (
    FAST,
    load_export,
    mountbench,
    plant_neighbours,
    ramfs,
    snapshot,
    start_mountbench,
    wait_for_samples,
)
from support.tools import needs_fio

from mountbench.fio.parse import load_fio_json

pytestmark = pytest.mark.slow

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def scratch_dirs(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.startswith(".mountbench-") and p.name != ".mountbench-not-ours"]


def test_two_real_targets_compared_stored_and_exported(tmp_path, mb_env):
    disk = tmp_path / "disk"
    disk.mkdir()
    before = plant_neighbours(disk)
    out = tmp_path / "run.json"
    with realmounts.tmpfs("64m") as ram:
        proc = mountbench("run", f"ram={ram}", f"disk={disk}", "--repeat", "2", *FAST, "--json", str(out), env=mb_env)
        assert proc.returncode == 0, proc.stderr
        assert scratch_dirs(ram) == []
    assert snapshot(disk) == before  # neighbours untouched, scratch removed
    doc = load_export(out)
    (run,) = doc["runs"]
    assert run["status"] == "complete"
    assert len(run["samples"]) == 2 * 6 * 2
    assert all(s["ok"] for s in run["samples"])
    for sample in run["samples"]:
        direction = "read" if "read" in sample["workload"] else "write"
        assert sample["metrics"][f"{direction}.iops"] > 0
        assert sample["metrics"][f"{direction}.lat_p99"] > 0
    infos = {t["label"]: t["info"] for t in run["targets"]}
    assert infos["ram"]["fstype"] == "tmpfs"
    assert run["host"]["fio_version"].startswith("fio-")
    # issue 47: how its children were contained is stored with the run and shown in its facts
    assert run["host"]["containment"]["mechanism"] == "landlock", run["host"]["containment"]
    assert "containment: landlock (Landlock ABI" in " ".join(proc.stdout.split())
    assert "warning: containment" not in proc.stderr
    disk_rows = [r for r in doc["summary"] if r["target"] == "disk"]
    assert all(r["ratio"] is not None and r["baseline"] == "ram" for r in disk_rows)
    # three verdicts; 0.3 s samples say they are short, with the remedy
    assert {r["verdict"] for r in disk_rows} <= {"better", "worse", "same", "undecided"}
    assert all(any(c.startswith("short sample") for c in r["caveats"]) for r in disk_rows), disk_rows[0]["caveats"]
    # the terminal: the answer first (a headline, the summary grid), then the detail and the environment
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"mountbench run {run['id']}") and lines[1].startswith("▶ disk ")
    assert "(baseline)" in proc.stdout and re.search(r"\d× (faster|slower)|≈ same", proc.stdout)
    assert "fio-" in proc.stdout and "×0." not in proc.stdout
    # piped progress: one line per sample with n/N, the measured value, elapsed time and ETA
    progress = [line.strip() for line in proc.stderr.splitlines() if re.match(r"\s*\d+/24 round ", line)]
    assert len(progress) == 24, proc.stderr
    value = r"[\d.]+([kM]? IOPS| [kMG]B/s)"  # the headline metric: bandwidth or IOPS (1.01M IOPS on a fast tmpfs)
    assert re.search(rf"^1/24 round 1 · \w+ · [\w-]+: {value} · \d+ s elapsed, ETA \S+", progress[0]), progress[0]
    shown = mountbench("show", run["id"], "--metric", "lat-p99", env=mb_env)
    assert shown.returncode == 0 and "latency p99" in shown.stdout and "e+" not in shown.stdout
    # --metric drives the summary and the headline: no IOPS section is left at the top
    summary = shown.stdout.split("Detail:")[0]
    assert "IOPS (higher is better)" not in summary and "latency" in summary
    by_unit = mountbench("show", run["id"], "--unit", "MB/s", env=mb_env)
    assert by_unit.returncode == 0 and "bandwidth, MB/s (higher is better)" in by_unit.stdout
    wrong = mountbench("show", run["id"], "--unit", "furlongs", env=mb_env)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "--unit" in wrong.stderr
    listed = mountbench("list", env=mb_env)
    assert run["id"] in listed.stdout and "complete" in listed.stdout


def test_loop_mounted_ext4_records_its_mount(tmp_path, mb_env):
    out = tmp_path / "run.json"
    with realmounts.ext4_loop(64) as ext4:
        proc = mountbench(
            "run", str(ext4), "--preset", "latency", "--repeat", "1", *FAST, "--json", str(out), env=mb_env
        )
        assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    info = run["targets"][0]["info"]
    assert info["fstype"] == "ext4"
    assert info["mount_source"].startswith("/dev/loop")


def test_fsync_writes_runs_each_write_again_ending_with_fsync_beside_it(tmp_path, mb_env):
    """Issue 23: the durable rate beside the one a volatile cache may absorb, on a real ext4."""
    out = tmp_path / "run.json"
    with realmounts.ext4_loop(64) as ext4:
        proc = mountbench("run", str(ext4), "--fsync-writes", "--only", "seq1m-q8-*", "--repeat", "2", *FAST,
                          "--json", str(out), env=mb_env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    document = load_export(out)
    (run,) = document["runs"]
    names = [w["name"] for w in run["workloads"]]
    assert names == ["seq1m-q8-read", "seq1m-q8-write", "seq1m-q8-write-fsync"]
    variant = next(w for w in run["workloads"] if w["name"] == "seq1m-q8-write-fsync")
    assert "end_fsync=1" in variant["description"]["options"] and variant["title"] == "SEQ 1M Q8 write, fsync at end"
    taken = [s for s in run["samples"] if s["workload"] == "seq1m-q8-write-fsync"]
    assert len(taken) == 2 and all(s["ok"] for s in taken)
    assert {r["workload"] for r in document["summary"]} == set(names)  # both rows in every report
    assert "SEQ 1M Q8 write, fsync at end" in proc.stdout
    bad = mountbench("run", str(tmp_path), "--fsync-writes", "--only", "seq1m-q8-read", "--dry-run", env=mb_env)
    assert bad.returncode == 2 and "no workload here writes" in bad.stderr


def test_keep_leaves_the_scratch_data(tmp_path, mb_env):
    proc = mountbench("run", str(tmp_path), "--repeat", "1", *FAST, "--keep", "--preset", "latency", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (scratch,) = scratch_dirs(tmp_path)
    assert any(p.name.startswith("mountbench") or p.name.startswith("random-read") for p in scratch.iterdir())


def test_seed_job_files_run_unmodified(tmp_path, mb_env):
    """Study S0's test.fio (directory=/work, $ncpus, $mb_memory) and S4's job file, as published."""
    s0 = tmp_path / "test.fio"
    s0.write_text(
        "[global]\nsize=2*1024*1024*$mb_memory\ndirectory=/work\nbs=4k\nnumjobs=$ncpus\nthread=1\nruntime=60s\n"
        "direct=1\nioengine=libaio\ngroup_reporting=1\n\n[random-read]\nrw=randread\n\n[random-write]\n"
        "rw=randwrite\n\n[random-readwrite]\nrw=randrw\nrwmixread=70\nrwmixwrite=30\n"
    )
    s4 = tmp_path / "random-read.fio"
    s4.write_text("[random-read]\nrw=randread\nsize=1000m\ndirectory=/path/to/readfile\n")
    target = tmp_path / "t"
    target.mkdir()
    out = tmp_path / "run.json"
    proc = mountbench(
        "run", str(target), "--job", str(s0), "--job", str(s4), "--repeat", "1", *FAST, "--json", str(out), env=mb_env
    )
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    # fio runs S0's three sections at once (no stonewall), as one reporting group: one workload,
    # named after its file, and it says why
    assert {w["name"] for w in run["workloads"]} == {"test", "random-read"}
    assert all(s["ok"] for s in run["samples"]), [s["error"] for s in run["samples"]]
    s0_sample = [s for s in run["samples"] if s["workload"] == "test"]
    s4_sample = [s for s in run["samples"] if s["workload"] == "random-read"]
    assert s0_sample[0]["metrics"]["read.iops"] > s0_sample[0]["metrics"]["write.iops"] > 0  # 2 of 3 jobs read
    assert any(c["code"] == "job-grouping" and "3 jobs" in c["text"] for c in s0_sample[0]["caveats"])
    assert not any(c["code"] == "page-cache" for c in s0_sample[0]["caveats"])  # direct=1
    # S4 is buffered: the page-cache caveat travels with its numbers, in JSON and on the terminal
    assert any(c["code"] == "page-cache" for c in s4_sample[0]["caveats"])
    assert "page cache may serve these" in proc.stdout
    assert not (Path("/work") / "random-read.0.0").exists()


def test_s0_job_without_size_is_refused_before_any_write(tmp_path, mb_env):
    s0 = tmp_path / "test.fio"
    s0.write_text("[global]\nsize=2*1024*1024*$mb_memory\nnumjobs=$ncpus\n[random-read]\nrw=randread\n")
    with realmounts.tmpfs("16m") as small:
        before = snapshot(small)
        proc = mountbench("run", str(small), "--job", str(s0), env=mb_env)
        assert proc.returncode == 2
        assert "not enough space" in proc.stderr and "--size" in proc.stderr
        assert snapshot(small) == before


def test_odirect_refused_runs_buffered_and_says_so(tmp_path, mb_env):
    out = tmp_path / "run.json"
    with ramfs() as ram:
        try:
            fd = os.open(ram / "probe", os.O_CREAT | os.O_RDWR | os.O_DIRECT)
            os.close(fd)
            refused = False
        except OSError:
            refused = True
        finally:
            (ram / "probe").unlink(missing_ok=True)
        proc = mountbench("run", str(ram), "--repeat", "1", *FAST, "--json", str(out), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    assert run["targets"][0]["info"]["odirect"] is (not refused)
    codes = {c["code"] for s in run["samples"] for c in s["caveats"]}
    if refused:
        assert "odirect-refused" in codes and "page-cache" in codes
        assert "buffered: O_DIRECT refused" in proc.stdout
        assert all(s["ok"] for s in run["samples"])
    else:
        assert "odirect-refused" not in codes


def test_enospc_mid_run_is_that_cells_error_and_the_run_goes_on(tmp_path, mb_env):
    job = tmp_path / "grow.fio"
    # each sample appends 6 MiB to the same file: the second one fills the 10 MiB tmpfs
    job.write_text("[grow]\nrw=write\nbs=1M\nsize=6M\nfile_append=1\nfilename=grow.dat\n")
    out = tmp_path / "run.json"
    other = tmp_path / "other"
    other.mkdir()
    with realmounts.tmpfs("10m") as small:
        proc = mountbench(
            "run",
            f"small={small}",
            f"other={other}",
            "--job",
            str(job),
            "--repeat",
            "3",
            "--json",
            str(out),
            env=mb_env,
        )
        assert scratch_dirs(small) == []
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    small_samples = [s for s in run["samples"] if s["target"] == "small"]
    other_samples = [s for s in run["samples"] if s["target"] == "other"]
    assert any(not s["ok"] and "No space left on device" in s["error"] for s in small_samples)
    assert all(s["ok"] for s in other_samples) and len(other_samples) == 3
    assert "No space left on device" in proc.stdout


def test_ctrl_c_keeps_finished_samples_and_resume_completes(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    before = plant_neighbours(target)
    db = Path(mb_env["MOUNTBENCH_DB"])
    proc = start_mountbench("run", str(target), "--repeat", "3", "--runtime", "0.5", "--size", "4M", env=mb_env)
    wait_for_samples(db, 2)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    assert snapshot(target) == before
    with sqlite3.connect(db) as conn:
        run_id, status = conn.execute("SELECT id, status FROM runs").fetchone()
        kept = conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
    # no fio of this run is left behind (its job files live in /tmp/mountbench-<run id>-*)
    assert subprocess.run(["pgrep", "-f", f"fio .*mountbench-{run_id}"], capture_output=True).stdout == b""
    assert status == "interrupted" and 2 <= kept < 18
    resumed = mountbench("run", "--resume", run_id, env=mb_env)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "complete"
        assert conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 18
        host = json.loads(conn.execute("SELECT host FROM runs").fetchone()[0])
        raws = [load_fio_json(raw) for (raw,) in conn.execute("SELECT raw FROM samples")]
    assert snapshot(target) == before
    # every sample, before and after the resume, timed with the one clock the run chose
    assert host["fio_clocksource"] in ("cpu", "clock_gettime")
    assert {doc["jobs"][0]["job options"]["clocksource"] for doc in raws} == {host["fio_clocksource"]}


def test_killed_run_is_resumed_and_its_scratch_reused_then_removed(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    db = Path(mb_env["MOUNTBENCH_DB"])
    proc = start_mountbench(
        "run",
        str(target),
        "--repeat",
        "2",
        "--runtime",
        "0.5",
        "--size",
        "4M",
        "--preset",
        "latency",
        "--preset",
        "quick",
        "--warmup",
        "1",
        env=mb_env,
    )
    wait_for_samples(db, 3)
    proc.kill()
    proc.communicate(timeout=30)
    with sqlite3.connect(db) as conn:
        run_id, status = conn.execute("SELECT id, status FROM runs").fetchone()
    assert status == "running"  # SIGKILL: nobody could mark it
    listed = mountbench("list", env=mb_env)
    assert "interrupted" in listed.stdout and "running" not in listed.stdout  # its process is gone
    assert len(scratch_dirs(target)) == 1
    resumed = mountbench("run", "--resume", run_id[:12], env=mb_env)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 2 * 7  # warm-ups are never stored
        assert {r for (r,) in conn.execute("SELECT round FROM samples")} == {0, 1}
    # the resumed session warms up again, but only the cells that still had samples to take
    said = " ".join(resumed.stderr.split())
    warmed = re.search(r"samples to take after (\d+) warm-ups? \((\d+) already stored\)", said)
    assert warmed and 1 <= int(warmed[1]) <= 7 and int(warmed[2]) >= 3, resumed.stderr
    assert scratch_dirs(target) == []
    again = mountbench("run", "--resume", run_id, env=mb_env)
    assert again.returncode == 2 and "nothing to resume" in again.stderr


def test_resume_of_a_live_run_is_refused_and_touches_nothing(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    db = Path(mb_env["MOUNTBENCH_DB"])
    proc = start_mountbench("run", str(target), "--repeat", "2", "--runtime", "0.5", "--size", "4M", env=mb_env)
    wait_for_samples(db, 1)
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
    second = mountbench("run", "--resume", run_id, env=mb_env)
    assert second.returncode == 2 and "still running" in second.stderr, second.stderr
    assert len(scratch_dirs(target)) == 1  # the live run's directory is still there
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert scratch_dirs(target) == []


def test_json_path_that_is_a_directory_is_refused(tmp_path, mb_env):
    proc = mountbench("run", str(tmp_path), "--json", str(tmp_path), env=mb_env)
    assert proc.returncode == 2 and "is a directory" in proc.stderr
    assert scratch_dirs(tmp_path) == []


def test_a_failed_warmup_is_said_at_the_end_and_never_stored(tmp_path, mb_env):
    """fio accepts the job when parsing and fails it when run: the warm-up fails like every round."""
    target = tmp_path / "t"
    target.mkdir()
    job = tmp_path / "nofile.fio"
    job.write_text("[x]\nrw=read\nsize=1m\nallow_file_create=0\nruntime=1\n")
    out = tmp_path / "run.json"
    argv = ["run", str(target), "--job", str(job), "--repeat", "2", "--warmup", "1", "--json", str(out)]
    proc = mountbench(*argv, env=mb_env)
    # every sample failed: stored as cells, and the run exits 1 with status failed (issue 24 §7)
    assert proc.returncode == 1 and "every sample of run" in proc.stderr, proc.stderr
    (run,) = load_export(out)["runs"]
    assert run["status"] == "failed"
    assert sorted(s["round"] for s in run["samples"]) == [0, 1]
    assert not any(s["ok"] for s in run["samples"])
    said = " ".join(proc.stderr.split())  # the console wraps long lines
    expected = r"warning: warm-up 1 of x on \S+ \(\w+\) failed: fio failed \(exit 1\): fio: file creation disallowed"
    assert re.search(expected, said)


@pytest.mark.slow
@pytest.mark.timing
def test_a_plain_run_gives_its_ranked_answer_within_45_seconds(tmp_path, mb_env):
    """Issue 23: the default run (this directory against /dev/shm, quick) took 101 s; it now runs
    under quick's default budget, and --repeat N keeps fixed rounds."""
    import time

    needs_fio()
    out = tmp_path / "run.json"
    started = time.monotonic()
    proc = mountbench("run", "--json", str(out), env=mb_env, cwd=tmp_path)
    wall = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert wall < 45, wall
    (run,) = load_export(out)["runs"]
    assert run["config"]["budget"] == 36 and run["config"]["until"] == 0.05
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("▶ ")
    # issue 48: the answer arrives last too, after a hundred lines of detail, and says what was decided
    answer = proc.stdout[proc.stdout.rindex("Answer:") :]
    assert lines[1] in answer and f"mountbench show {run['id']}" in answer
    assert re.match(r"▶ .+? (is (faster|slower) than|vs .+?: (undecided|the same)) ", lines[1]), lines[1]
    assert proc.stderr.splitlines()[0].startswith(f"run {run['id']}: 36 samples to take")


def test_costs_handed_to_a_run_are_its_first_eta(tmp_path, mb_env):
    """The QEMU lab's guest starts with a new database every run; the host hands it what each
    (mount, workload) cost in its earlier lab runs (--learnt-json, labs/qemu/history.py), and the
    first line says that time, not the plan's bound. Bad JSON is one line and exit 2."""
    needs_fio()
    target = tmp_path / "t"
    target.mkdir()
    args = ["run", f"a={target}", "--preset", "quick", "--only", "rnd4k-q1-read", "--repeat", "2", "--runtime", "0.5"]
    handed = json.dumps([["a", "rnd4k-q1-read", 42.0]])
    proc = mountbench(*args, "--learnt-json", handed, "--db", str(tmp_path / "db.sqlite"), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    first = " ".join(proc.stderr.split("run ", 1)[1].split())
    assert "about 1m24s as this machine took before" in first, proc.stderr
    bad = mountbench(*args, "--learnt-json", "{", "--db", str(tmp_path / "none.sqlite"), env=mb_env)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "--learnt-json:" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "none.sqlite").exists()  # refused before anything was made


def test_a_run_without_containment_says_so_before_its_first_sample_and_records_it(tmp_path, mb_env):
    """Issue 47: where no fence can be put up, the run says so up front (one line), its facts say it in
    every format, and doctor and the dry run say it too (MOUNTBENCH_CONTAIN=off: tests only)."""
    target = tmp_path / "t"
    target.mkdir()
    out = tmp_path / "run.json"
    env = dict(mb_env, MOUNTBENCH_CONTAIN="off")
    proc = mountbench("run", str(target), "--repeat", "1", *FAST, "--only", "rnd4k-q1-read", "--json", str(out),
                      env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    warned = next(i for i, line in enumerate(lines) if line.startswith("warning: containment: none"))
    first_sample = next(i for i, line in enumerate(lines) if re.match(r"\s*1/1 round ", line))
    assert warned < first_sample, proc.stderr
    (run,) = load_export(out)["runs"]
    assert run["host"]["containment"]["mechanism"] == "none"
    assert "containment: none (turned off by MOUNTBENCH_CONTAIN=off" in " ".join(proc.stdout.split())
    report = tmp_path / "r.md"
    assert mountbench("report", run["id"], "--out", str(report), env=env).returncode == 0
    assert "containment: none" in report.read_text()
    doctor = mountbench("doctor", str(target), env=env)
    assert "containment" in doctor.stdout and "none" in doctor.stdout
    dry = mountbench("run", str(target), "--dry-run", env=env)
    assert "! containment: none" in " ".join(dry.stdout.split())
