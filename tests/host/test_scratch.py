"""mountbench.host.scratch: markers, owners, removal of only what is ours, and the sweeps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.runhelpers import mountbench, start_mountbench, wait_for_samples
from support.tools import needs_fio

from mountbench.host import scratch
from mountbench.host.scratch import Marker, Owner


def dead_owner() -> Owner:
    """The owner record of a real process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    owner = Owner.of(proc.pid)
    proc.kill()
    proc.wait()
    return owner


def test_marker_round_trip_and_earlier_formats(tmp_path: Path) -> None:
    marker = Marker("probe", "abc", Owner.current(), 1.5)
    assert Marker.parse(marker.to_text()) == marker
    assert Marker.parse(marker.to_text() + "trailing junk from a longer marker") == marker
    assert Marker.parse("20260101-000000-abcd\n") == Marker(
        "run", "20260101-000000-abcd"
    )  # the bare run id of earlier versions
    assert Marker.parse('{"tool": "something else", "kind": "run", "id": "x"}') is None
    assert Marker.parse("") is None
    legacy = tmp_path / ".mountbench-probe-0123"
    legacy.mkdir()
    (legacy / scratch.LEGACY_PROBE_MARKER).write_text(json.dumps({"tool": "mountbench probe", "token": "t"}))
    assert scratch.read_marker(legacy) == Marker("probe", "t")


def test_owner_alive_dead_reused_and_elsewhere() -> None:
    me = Owner.current()
    assert me.alive() is True
    assert dead_owner().alive() is False
    reused = Owner(me.pid, me.started - 3600, me.host, me.boot_id, me.pid_ns)  # same pid, other process
    assert reused.alive() is False
    assert Owner(me.pid, me.started, "another-host", me.boot_id, me.pid_ns).alive() is None
    earlier_boot = Owner(me.pid, me.started, me.host, "0" * 36, me.pid_ns)
    assert earlier_boot.alive() is False


def test_create_never_makes_the_parent_and_remove_takes_only_ours(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        scratch.create(tmp_path / "vanished", ".mountbench-x", Marker("run", "x"))
    assert not (tmp_path / "vanished").exists()
    ours = scratch.create(tmp_path, ".mountbench-x", Marker("run", "x"))
    (ours / "data").mkdir()
    (ours / "data" / "f").write_bytes(b"1")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_bytes(b"keep")
    os.symlink(outside, ours / "link-out")
    with pytest.raises(scratch.NotOurs):
        scratch.remove(ours, lambda m: m.id == "y")
    assert (ours / "data" / "f").exists()
    assert scratch.remove(ours, lambda m: m.id == "x") == "removed"
    assert not ours.exists() and (outside / "keep").read_bytes() == b"keep"
    assert scratch.remove(ours, lambda m: True) == "absent"
    foreign = tmp_path / ".mountbench-foreign"
    foreign.mkdir()
    (foreign / "data").write_bytes(b"someone else's")
    with pytest.raises(OSError):  # no marker: only an empty directory would be removed
        scratch.remove(foreign, lambda m: True)
    assert (foreign / "data").exists()


def test_sweep_dead_removes_only_what_a_dead_owner_of_this_machine_left(tmp_path: Path) -> None:
    dead, alive = dead_owner(), Owner.current()
    gone = scratch.create(tmp_path, ".mountbench-probe-dead", Marker("probe", "t1", dead))
    (gone / "cap" / "work").mkdir(parents=True)
    live = scratch.create(tmp_path, ".mountbench-probe-live", Marker("probe", "t2", alive))
    elsewhere = scratch.create(tmp_path, ".mountbench-probe-far", Marker("probe", "t3", Owner(1, 0.0, "another-host")))
    killed_run = scratch.create(tmp_path, ".mountbench-20260101-000000-abcd", Marker("run", "r2", dead))
    no_marker = tmp_path / ".mountbench-probe-nomarker"
    no_marker.mkdir()
    swept = sorted(scratch.sweep_dead(tmp_path), key=lambda line: "its run" in line)
    assert len(swept) == 2 and all(f"pid {dead.pid}" in line for line in swept)
    assert str(gone) in swept[0] and "its probe" in swept[0] and "its run r2" in swept[1], swept
    assert not gone.exists() and not killed_run.exists()
    assert all(p.exists() for p in (live, elsewhere, no_marker))


def test_workdir_sweep_takes_only_folders_of_dead_runs(tmp_path: Path) -> None:
    mine = scratch.create_workdir("20260101-000000-live", tmp=tmp_path)
    dead = scratch.create_workdir("20260101-000000-dead", tmp=tmp_path)
    (dead / "job.fio").write_text("[x]\n")
    (dead / scratch.WORKDIR_OWNER).write_text(json.dumps({"run_id": "20260101-000000-dead",
                                                         "owner": dead_owner().to_dict()}))  # fmt: skip
    unowned = tmp_path / "mountbench-20260101-000000-old-xyz"
    unowned.mkdir()
    other_tool = tmp_path / "mountbench-test-tmpfs-abc"
    other_tool.mkdir()
    assert scratch.sweep_workdirs(tmp=tmp_path) == [dead]
    assert mine.exists() and unowned.exists() and other_tool.exists() and not dead.exists()


def test_live_users_sees_a_held_lock_and_a_live_probe(tmp_path: Path) -> None:
    run_dir = scratch.create(tmp_path, ".mountbench-run-a", Marker("run", "run-a", dead_owner()))
    assert scratch.live_users(tmp_path) == []  # a killed run's directory: nobody holds its lock
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
            str(run_dir / scratch.MARKER),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        (user,) = scratch.live_users(tmp_path)
        assert user.marker.id == "run-a" and "lock" in user.evidence
        assert scratch.live_users(tmp_path, exclude=run_dir.name) == []
    finally:
        holder.kill()
        holder.wait()
    assert scratch.live_users(tmp_path) == []
    scratch.create(tmp_path, ".mountbench-probe-p", Marker("probe", "p", Owner.current()))
    (probe_user,) = scratch.live_users(tmp_path)
    assert probe_user.marker.kind == "probe" and "is alive" in probe_user.evidence


@pytest.mark.slow
def test_a_killed_runs_job_folder_is_swept_by_the_next_run_and_its_scratch_resumed(tmp_path, mb_env):
    """SIGKILL leaves /tmp/mountbench-<run id>-*/ behind; the next run removes it (its
    owner is gone), while the killed run's scratch directory in the target is kept and
    reused by --resume."""
    needs_fio()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**mb_env, "TMPDIR": str(tmp)}
    target = tmp_path / "t"
    target.mkdir()
    db = Path(mb_env["MOUNTBENCH_DB"])
    small = ["--only", "rnd4k*", "--runtime", "0.3", "--size", "4M"]
    proc = start_mountbench("run", str(target), "--repeat", "3", *small, env=env)
    wait_for_samples(db, 1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    (kept,) = [p for p in target.iterdir() if p.name.startswith(".mountbench-")]
    run_id = kept.name.removeprefix(".mountbench-")

    def job_folders() -> list[Path]:
        return [p for p in tmp.iterdir() if p.name.startswith(f"mountbench-{run_id}-")]

    (left,) = job_folders()
    assert (left / scratch.WORKDIR_OWNER).exists()
    other = tmp_path / "other"
    other.mkdir()
    second = mountbench("run", str(other), "--repeat", "1", *small, env=env)
    assert second.returncode == 0, second.stderr
    assert not left.exists()
    assert "removed job-file folders left by killed runs" in second.stdout + second.stderr
    assert kept.exists()  # a killed run's scratch is what --resume reuses: never swept
    resumed = mountbench("run", "--resume", run_id, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert not kept.exists() and job_folders() == []


def test_a_kept_directory_is_never_swept(tmp_path: Path) -> None:
    """Issue 34 §1: run --keep marks its scratch directories; sweep_dead leaves them to the user."""
    owner = dead_owner()
    kept = scratch.create(tmp_path, ".mountbench-20260101-000000-aaaa", Marker("run", "20260101-000000-aaaa", owner))
    (kept / "data").write_bytes(b"x" * 100)
    gone = scratch.create(tmp_path, ".mountbench-20260101-000000-bbbb", Marker("run", "20260101-000000-bbbb", owner))
    assert scratch.mark_kept(kept)
    assert scratch.read_marker(kept) == Marker("run", "20260101-000000-aaaa", owner, kept=True)
    removed = scratch.sweep_dead(tmp_path)
    assert len(removed) == 1 and str(gone) in removed[0]
    assert (kept / "data").read_bytes() == b"x" * 100
    assert kept.is_dir()


# --- issue 47: deletions walk beneath the scratch directory; private by default --------------------


def test_a_scratch_directory_is_private(tmp_path: Path) -> None:
    ours = scratch.create(tmp_path, ".mountbench-x", Marker("run", "x"))
    assert ours.stat().st_mode & 0o777 == 0o700
    assert (ours / scratch.MARKER).stat().st_mode & 0o077 == 0


@pytest.fixture
def neighbourhood(tmp_path: Path) -> tuple[Path, Path]:
    """A scratch directory with a user's file beside it, in its parent, and a symlink out of it."""
    parent = tmp_path / "t"
    parent.mkdir()
    (parent / "keep.txt").write_text("the user's\n")
    (tmp_path / "t.canary").write_text("beside the target\n")
    ours = scratch.create(parent, ".mountbench-x", Marker("run", "x"))
    os.symlink(parent, ours / "way-out")
    return ours, parent


@pytest.mark.parametrize(
    "name",
    ["../keep.txt", "../../t.canary", "way-out/keep.txt", "/etc/hostname", "./../keep.txt", "a/../../keep.txt"],
)
def test_a_deletion_never_leaves_the_scratch_directory(neighbourhood, name: str) -> None:
    ours, parent = neighbourhood
    for remove in (scratch.unlink_beneath, scratch.rmtree_beneath):
        with pytest.raises(scratch.OutsideScratch):
            remove(ours, name)
    with pytest.raises(scratch.OutsideScratch):
        scratch.rename_beneath(ours, name, "stolen")
    with pytest.raises(scratch.OutsideScratch):
        scratch.rename_beneath(ours, "way-out", name)
    assert (parent / "keep.txt").read_text() == "the user's\n"
    assert (parent.parent / "t.canary").exists() and Path("/etc/hostname").exists()


def test_deletions_beneath_the_scratch_directory_work(neighbourhood) -> None:
    ours, parent = neighbourhood
    (ours / "a" / "b").mkdir(parents=True)
    (ours / "a" / "b" / "f").write_text("x")
    (ours / "f").write_text("y")
    os.symlink(parent, ours / "a" / "link-out")
    assert scratch.rename_beneath(ours, "f", "g") is True
    assert scratch.unlink_beneath(ours, "g") is True and not (ours / "g").exists()
    assert scratch.unlink_beneath(ours, "g") is False  # absent already
    assert scratch.unlink_beneath(ours, "way-out") is True  # the link itself, never what it leads to
    assert scratch.rmtree_beneath(ours, "a") is True and not (ours / "a").exists()
    assert (parent / "keep.txt").exists()


def test_working_files_that_name_a_path_out_are_never_deleted(neighbourhood) -> None:
    """Issue 47 case 1: [..] with filename_format=$jobname/notes.txt had mountbench itself unlink
    <scratch>/../notes.txt. The working files' removal, set-aside and spacer stay beneath."""
    from mountbench.kinds import fiofiles

    ours, parent = neighbourhood
    escaping = [
        fiofiles.WorkingFile(ours / ".." / "keep.txt", 11),
        fiofiles.WorkingFile(ours / "way-out" / "keep.txt", 11),
    ]
    fiofiles.remove(escaping, ours)
    assert fiofiles.set_aside(escaping, ours) == []
    fiofiles.drop_aside([ours / ".." / "keep.txt"], ours)
    assert (parent / "keep.txt").read_text() == "the user's\n"


def test_removal_of_a_scratch_directory_never_follows_a_link(neighbourhood) -> None:
    ours, parent = neighbourhood
    (ours / "sub").mkdir()
    os.symlink(parent, ours / "sub" / "deeper-way-out")
    assert scratch.remove(ours, lambda m: m.id == "x") == "removed"
    assert (parent / "keep.txt").exists() and not ours.exists()


def test_the_workdir_sweep_takes_only_what_it_proves_is_a_dead_run_of_its_own(tmp_path: Path) -> None:
    """Issue 47 case 5: a run removed a job-file folder another run had made. A folder is swept only
    when its owner file names the folder's own run, this boot and a process that is gone."""
    me = Owner.current()
    dead = dead_owner()

    def folder(run_id: str, owner: Owner | None, suffix: str, **extra) -> Path:
        path = tmp_path / f"mountbench-{run_id}-{suffix}"
        path.mkdir(mode=0o700)
        record = {"run_id": run_id, "owner": owner.to_dict() if owner else None, **extra}
        (path / scratch.WORKDIR_OWNER).write_text(json.dumps(record) + "\n")
        return path

    live = folder("20260101-000000-aaaa", me, "livelive")
    killed = folder("20260101-000000-bbbb", dead, "deaddead")
    other_run = folder("20260101-000000-cccc", dead, "someones")
    (other_run / scratch.WORKDIR_OWNER).write_text(json.dumps({"run_id": "20260101-000000-dddd",
                                                              "owner": dead.to_dict()}))  # fmt: skip
    no_boot = folder("20260101-000000-eeee", Owner(dead.pid, dead.started, dead.host, None, dead.pid_ns), "noboot00")
    earlier_boot = folder("20260101-000000-ffff", Owner(me.pid, me.started, me.host, "0" * 36, me.pid_ns), "oldboot0")
    assert sorted(scratch.sweep_workdirs(tmp=tmp_path)) == sorted([killed, earlier_boot])
    assert all(p.exists() for p in (live, other_run, no_boot))


def test_a_workdir_is_private_and_names_its_run(tmp_path: Path) -> None:
    made = scratch.create_workdir("20260101-000000-abcd", tmp=tmp_path)
    assert made.stat().st_mode & 0o777 == 0o700
    record = json.loads((made / scratch.WORKDIR_OWNER).read_text())
    assert record["run_id"] == "20260101-000000-abcd" and record["owner"]["boot_id"]
