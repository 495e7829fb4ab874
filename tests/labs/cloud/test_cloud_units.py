"""Pure parts of the cloud lab: specs, records, the pick-two verdicts, and cleaning a dead
run's leftovers by its state record (with a real process)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mountbench.errors import UsageError
from mountbench.host import process as procs
from mountbench.labs.cloud import state as state_mod
from mountbench.labs.cloud import treelag
from mountbench.labs.cloud.caveats import mode_caveats
from mountbench.labs.cloud.cloudrun import with_defaults
from mountbench.labs.cloud.delay import DelayProxy, MemoryGuard, toxics, toxiproxy_binary
from mountbench.labs.cloud.matrix import DEFAULT_BANDWIDTH_KBPS, cloud_specs, parse_rtts
from mountbench.labs.cloud.mounts import CACHE_MODES
from mountbench.labs.cloud.phases import with_phases
from mountbench.labs.cloud.treelag import TREE_DIR, measure_all
from mountbench.labs.cloud.uploaded import not_on_remote
from mountbench.model import RunOptions
from mountbench.presets import load_preset
from mountbench.probefacts import CloudMountProbe, CloudProbe, CloudTarget, SyncResult, TreeLag
from mountbench.report.picktwo import JUDGES, clouddrives


def test_modes_registry_has_the_four_cache_modes_in_order() -> None:
    assert list(CACHE_MODES) == ["off", "minimal", "writes", "full"]
    assert (
        CACHE_MODES["full"].caches_reads
        and CACHE_MODES["writes"].caches_writes
        and not CACHE_MODES["off"].caches_writes
    )
    assert clouddrives.pick_two in JUDGES


def test_specs_are_every_mode_at_every_rtt_labelled_with_both() -> None:
    specs = cloud_specs(["off,full"], ["0", "20ms"])
    assert [s.label for s in specs] == ["off-0ms", "full-0ms", "off-20ms", "full-20ms"]
    assert [s.label for s in cloud_specs([], [])][:4] == ["off-0ms", "minimal-0ms", "writes-0ms", "full-0ms"]


@pytest.mark.parametrize("bad", ["fast", "-5", "1.5", "20000"])
def test_bad_rtt_is_a_one_line_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="--rtt"):
        parse_rtts([bad])


def test_unknown_mode_names_the_choices() -> None:
    with pytest.raises(UsageError, match="off, minimal, writes, full"):
        cloud_specs(["sometimes"], [])


def test_defaults_are_the_clouddrive_preset_scaled_and_local_as_baseline() -> None:
    chosen = with_defaults(RunOptions())
    assert chosen.presets == ("clouddrive",) and chosen.size == 64 * 1024**2 and chosen.baseline == "local"
    mine = with_defaults(RunOptions(presets=("latency",), size=1024**2))
    assert mine.presets == ("latency",) and mine.size == 1024**2
    with pytest.raises(UsageError, match="--baseline"):
        with_defaults(RunOptions(baseline="off-0ms"))
    with pytest.raises(UsageError, match="--watch"):
        with_defaults(RunOptions(watch=("rclone",)))


def _sync(**values: object) -> SyncResult:
    base = dict(repeat=1, timeout_s=6.0, round_trip_ms=(45.0,), first_read_ms=(30.0,), reread_ms=(0.002,),
                at_close=(True,), close_delay_ms=(0.0,), at_fsync=(False,), fsync_ms=(0.1,),
                fsync_delay_ms=(None,), remote_create_ms=(None,), remote_change=("stale",),
                remote_change_fresh_ms=(None,))  # fmt: skip
    return SyncResult(**{**base, **values})  # type: ignore[arg-type]


def test_records_round_trip_through_json() -> None:
    probe = CloudProbe(
        (CloudTarget("local", None, None), CloudTarget("off-0ms", "off", 0, None, ("--vfs-cache-mode", "off"))),
        (CloudMountProbe("off-0ms", "/m", "/r", None, _sync(), ("x",)),),
        1, 6.0, {"rclone": "rclone v1"}, ("e",),
    )  # fmt: skip
    again = CloudProbe.from_dict(json.loads(json.dumps(probe.to_dict())))
    assert again == probe


def _said(prop) -> tuple[str, ...]:
    """A property's verdict and what each of its measures says after its name."""
    return (prop.verdict, *(m.text.split(": ", 1)[1] for m in prop.measures))


def test_consistency_and_durability_verdicts() -> None:
    verdict, at_close, to_remote, from_remote, change = _said(clouddrives._consistency(_sync(), 6.0))
    assert (verdict, at_close, to_remote) == ("poor", "yes", "at close")
    assert from_remote == "not within 6 s" and change == "stale for over 6 s"
    torn = clouddrives._consistency(_sync(remote_change=("torn",)), 6.0)
    assert torn.verdict == "data loss"
    prompt = _sync(remote_create_ms=(20.0,), remote_change=("fresh",), remote_change_fresh_ms=(0.0,))
    assert clouddrives._consistency(prompt, 6.0).verdict == "good"
    late = _sync(at_close=(False,), close_delay_ms=(5020.0,), remote_create_ms=(20.0,), remote_change=("fresh",))
    assert _said(clouddrives._consistency(late, 6.0))[:3] == ("fair", "no", "after 5.02 s")
    assert clouddrives._durability(_sync()).verdict == "poor"
    assert clouddrives._durability(_sync(at_fsync=(True,))).verdict == "good"
    assert clouddrives._durability(None).verdict == "not measured"


def test_a_dead_runs_leftovers_are_cleaned_by_its_record_only(tmp_path: Path) -> None:
    root = tmp_path / "cloudlab"
    dead, alive_run, stranger = root / "dead", root / "alive", tmp_path / "not-ours"
    for d in (dead, alive_run, stranger):
        d.mkdir(parents=True)
    owner = subprocess.Popen([sys.executable, "-c", "pass"])
    owner.wait()  # a dead owner
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record = state_mod.LabState(dead, owner_pid=owner.pid, owner_started=time.time() - 100)
        record.add_process(child.pid, "stand-in for an rclone mount")
        record.add_process(other.pid + 10**6, "a pid that no longer exists")
        record.add_mount(dead / "mnt" / "not-mounted")
        state_mod.LabState(alive_run).save()  # this process owns it: left alone
        cleaned = state_mod.sweep_dead_runs(root)
        assert cleaned == [str(dead)]
        assert child.wait(timeout=10) is not None
        assert not dead.exists() and alive_run.exists() and stranger.exists()
        assert other.poll() is None  # never touched: not in any record
    finally:
        for p in (child, other):
            p.kill()
            p.wait()


def test_a_reused_pid_is_not_killed(tmp_path: Path) -> None:
    workdir = tmp_path / "cloudlab" / "dead"
    workdir.mkdir(parents=True)
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        record = state_mod.LabState(workdir, owner_pid=victim.pid + 10**6, owner_started=1.0)
        record.processes.append({"pid": victim.pid, "started": 12345.0, "what": "same pid, another process"})
        record.save()
        state_mod.sweep_dead_runs(tmp_path / "cloudlab")
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


def test_serving_watch_measures_the_named_processes_and_carries_the_modes_caveats() -> None:
    from mountbench.labs.cloud.mounts import CACHE_MODES
    from mountbench.labs.cloud.watch import ServingWatch

    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        watch = ServingWatch(lambda label: [busy.pid] if label == "full-0ms" else [],
                             {"full-0ms": mode_caveats(CACHE_MODES["full"])})  # fmt: skip
        assert watch.start("local") is None
        window = watch.start("full-0ms")
        assert window is not None
        time.sleep(0.5)
        measured = window.stop()
    finally:
        busy.kill()
        busy.wait()
    assert measured.cost is not None and measured.cost.cpu_user_s + measured.cost.cpu_sys_s > 0
    assert {c.code for c in measured.caveats} == {"cloud-cache"} and len(measured.caveats) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rtt", "fast"], "--rtt 'fast': give whole milliseconds"),
        (["--mode", "sometimes"], "--mode 'sometimes' is not an rclone cache mode"),
        (["--baseline", "off-0ms"], "--baseline: the cloud lab compares with the local disk"),
        (["--mode", ""], "Invalid value for '--mode': is empty"),
        (["--rtt", ""], "Invalid value for '--rtt': is empty"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_starts(tmp_path: Path, args: list[str], message: str) -> None:
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path), "MOUNTBENCH_DB": str(tmp_path / "db")}
    done = subprocess.run([sys.executable, "-m", "mountbench", "cloudlab", *args], env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert not (tmp_path / "mountbench" / "cloudlab").exists() or not any(
        (tmp_path / "mountbench" / "cloudlab").iterdir()
    )


def test_the_delay_puts_bandwidth_first_and_the_whole_rtt_on_the_requests() -> None:
    """toxiproxy's latency toxic queues 1,024 chunks per connection and leaks them when a client
    leaves mid-answer: on the answers' direction it must not be (delay.py)."""
    chain = toxics(20, 12_500)
    assert [(t["type"], t["stream"]) for t in chain] == [
        ("bandwidth", "upstream"), ("bandwidth", "downstream"), ("latency", "upstream")]  # fmt: skip
    assert chain[-1]["attributes"]["latency"] == 20
    assert toxics(0, None) == []
    assert [t["type"] for t in toxics(7, None)] == ["latency"]


def test_the_default_wire_is_a_home_link_and_zero_means_no_cap() -> None:
    assert {s.bandwidth_kbps for s in cloud_specs([], [], DEFAULT_BANDWIDTH_KBPS)} == {12_500}
    assert {s.bandwidth_kbps for s in cloud_specs([], [], 0)} == {None}


def test_read_workloads_get_a_cold_title_and_a_warm_twin() -> None:
    workloads = load_preset("clouddrive").workloads
    phased, phases = with_phases(workloads, warm=True)
    names = [w.name for w in phased]
    assert names == ["random-read", "random-read-warm", "extract", "rsync"]
    assert phases == {"random-read": "cold", "random-read-warm": "warm:random-read"}
    assert phased[0].title.endswith(", cold") and phased[1].title.endswith(", warm")
    assert [w.name for w in with_phases(workloads, warm=False)[0]] == ["random-read", "extract", "rsync"]


def test_a_trees_upload_lag_on_a_directory_that_is_its_own_remote(tmp_path: Path) -> None:
    """On a plain directory (the mount and the remote are one) the tree is there at its last close."""
    (lag,), errors = measure_all([("plain", tmp_path, tmp_path)], timeout=5, files=40)
    assert errors == []
    assert (lag.files, lag.at_close, lag.on_remote, lag.lag_s) == (40, 40, 40, 0.0)
    assert not (tmp_path / TREE_DIR).exists()  # removed afterwards


def test_a_trees_upload_lag_is_measured_one_mount_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 49: written through all 8 mounts at once (one proxy, one wire), 300 files took 26-29 s to
    reach the remote where one mount alone takes 14 s, and nothing said so. Each mount's tree is now
    written and waited for before the next one's begins, and the record says it was alone."""
    spans: list[tuple[float, float]] = []
    real = treelag.measure

    def timed(*args: object, **kwargs: object) -> object:
        start = time.monotonic()
        time.sleep(0.2)  # long enough that mounts measured at once would overlap
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        spans.append((start, time.monotonic()))
        return found

    monkeypatch.setattr(treelag, "measure", timed)
    dirs = [tmp_path / name for name in ("a", "b", "c")]
    for d in dirs:
        d.mkdir()
    lags, errors = measure_all([(d.name, d, d) for d in dirs], timeout=5, files=20)
    assert errors == [] and [lag.label for lag in lags] == ["a", "b", "c"]
    assert all(lag.alone for lag in lags)
    spans.sort()
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans)), f"measured at once: {spans}"


def test_a_lag_measured_through_every_mount_at_once_says_so() -> None:
    """A run stored before issue 49 wrote its tree through every mount at once: its durability words say so;
    a lag measured alone needs no such words."""
    shared = TreeLag("full-0ms", 300, 1.0, 27.0, 0, 300, 300.0)
    alone = TreeLag("full-0ms", 300, 1.0, 14.0, 0, 300, 300.0, alone=True)
    assert "every mount at once" in clouddrives._durability(_sync(), shared).measures[0].text
    assert "every mount at once" not in clouddrives._durability(_sync(), alone).measures[0].text
    assert TreeLag.from_dict({k: v for k, v in alone.to_dict().items() if k != "alone"}).alone is False


def test_what_a_mount_shows_that_its_remote_does_not_hold_at_its_size(tmp_path: Path) -> None:
    """Files only on the mount's side, or there at another size, are named; files on both at one size,
    files only on the remote (a seed) and what is not a regular file are not."""
    mount, remote = tmp_path / "mount", tmp_path / "remote"
    for side in (mount, remote):
        (side / "d" / "e").mkdir(parents=True)
        (side / "same").write_bytes(b"x" * 10)
        (side / "d" / "e" / "same").write_bytes(b"y" * 3)
    (mount / "d" / "new").write_bytes(b"z")  # not uploaded yet
    (mount / "d" / "e" / "growing").write_bytes(b"w" * 100)  # half uploaded
    (remote / "d" / "e" / "growing").write_bytes(b"w" * 50)
    (remote / "seed").write_bytes(b"s")  # only the remote has it
    (mount / "link").symlink_to("same")
    assert not_on_remote(mount, remote) == ["d/e/growing", "d/new"]
    (remote / "d" / "new").write_bytes(b"z")
    (remote / "d" / "e" / "growing").write_bytes(b"w" * 100)
    assert not_on_remote(mount, remote) == []
    assert not_on_remote(tmp_path / "gone", remote) == []  # nothing shown, nothing missing


def test_dry_run_prints_the_lab_and_its_commands_and_starts_nothing(tmp_path: Path) -> None:
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path), "MOUNTBENCH_DB": str(tmp_path / "db")}
    done = subprocess.run([sys.executable, "-m", "mountbench", "cloudlab", "--mode", "off,full", "--rtt", "0,20",
                           "--dry-run"], env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "rclone serve webdav" in out and "toxiproxy-server" in out
    assert "12500 KB/s each way" in out and "home link of 100 Mbit/s" in out
    for label in ("off-0ms", "full-0ms", "off-20ms", "full-20ms"):
        assert f"rclone mount :webdav:{label}" in out
    assert "random-read-warm" in out and "[cold]" in out
    assert "Samples: 5 targets x 4 workloads x 3 rounds = 60" in out
    assert not (tmp_path / "mountbench" / "cloudlab").exists()


def test_cold_only_plans_no_warm_twin(tmp_path: Path) -> None:
    """The hidden --cold-only (the cold-read timing test's run): full caches reads, and still no warm twin."""
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path), "MOUNTBENCH_DB": str(tmp_path / "db")}
    done = subprocess.run([sys.executable, "-m", "mountbench", "cloudlab", "--mode", "off,full", "--rtt", "20",
                           "--only", "random-read", "--cold-only", "--dry-run"], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "random-read-warm" not in done.stdout and "random-read: random-read 4k QD1 (S4), cold [cold]" in done.stdout
    assert "Samples: 3 targets x 1 workloads x 3 rounds = 9" in done.stdout


def test_cloudlabs_help_names_its_own_default_preset() -> None:
    done = subprocess.run([sys.executable, "-m", "mountbench", "cloudlab", "--help"], capture_output=True, text=True,
                          timeout=60, env={**__import__("os").environ, "COLUMNS": "200"})  # fmt: skip
    assert "default clouddrive, at --size 64M" in done.stdout and "default quick" not in done.stdout


def test_the_memory_guard_stops_the_delay_past_its_bound_and_it_comes_back(tmp_path: Path) -> None:
    """A real toxiproxy under a guard of 1 byte: stopped within a watch interval or two, the reason
    kept for the sample; restarted on the same ports with the same proxies."""
    if toxiproxy_binary() is None:
        pytest.skip("toxiproxy is not built (scripts/install.sh --test)")
    proxy = DelayProxy(procs.free_port(), tmp_path / "toxiproxy.log")
    proxy.start()
    try:
        url = proxy.add("rtt20", 20, None)
        first = proxy.proc
        guard = MemoryGuard(proxy, limit=1).start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and first is not None and first.poll() is None:
            time.sleep(0.05)
        assert first is not None and first.poll() is not None, "the guard did not stop toxiproxy"
        why, peak = guard.take()
        assert why is not None and "over its 1.00 B bound" in why and "this sample is void" in why, why
        assert peak > 0
        guard.stop()
        proxy.restart()
        assert proxy.proc is not first and proxy.proc.poll() is None
        assert json.loads(proxy._call("GET", "/proxies"))["rtt20"]["listen"] == url.removeprefix("http://")
    finally:
        proxy.stop()


def test_the_labs_directory_is_private_whatever_the_umask(tmp_path: Path) -> None:
    """Issue 47 case 4: the cloud lab's directory was 0755, so another user read the remote, the
    mounts' caches and the local baseline."""
    import os

    from mountbench.labs.cloud.cloudlab import CloudLab

    lab = CloudLab(cloud_specs(["off"], ["0"]), root=tmp_path / "root")
    old = os.umask(0o022)
    try:
        lab.make_workdir()
    finally:
        os.umask(old)
    assert lab.workdir.stat().st_mode & 0o777 == 0o700
    assert lab.remote_dir.is_dir() and lab.local_dir.is_dir()
