"""`mountbench cloudlab` end to end: real rclone serving and mounting over real FUSE, a real
delay on the wire (toxiproxy), two RTTs, the two ends of the cache modes; then nothing left running
or mounted, and every format naming the phase (cold, warm) of each read figure: one run, read by
two tests. Also: a killed run's leftovers are cleaned by the next run, and Ctrl-C stops everything."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import psutil
import pytest

from mountbench.labs.cloud import state as state_mod
from mountbench.probefacts import CloudProbe

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("cloud_ready")]
RTT_MS = 20


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data"),
            "MOUNTBENCH_DB": str(tmp_path / "db.sqlite"), "COLUMNS": "200"}  # fmt: skip


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mountbench", "cloudlab", *args]


def _mounted_under(path: Path) -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [f.split()[4] for f in lines if f.split()[4].startswith(str(path))]


def _processes_under(path: Path) -> list[str]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(path) in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(f"{proc.pid} {cmdline[:100]}")
    return found


def assert_nothing_left(tmp_path: Path) -> None:
    assert _mounted_under(tmp_path) == []
    assert _processes_under(tmp_path) == []
    root = tmp_path / "cache" / "mountbench" / "cloudlab"
    assert not root.exists() or list(root.iterdir()) == []


# the probe's tree: what the test reads of its lag (none for off; the 5 s write-back for full, all of it) is
# the same for 30 files as for the 300 a user's run writes, which take ~25 s longer at 20 ms
TREE_LAG_FILES = 30
MODES = ("off", "full")  # write-through and whole-file caching: the two ends (the unit tests cover every mode's matrix)
LABELS = ["local", *(f"{m}-{rtt}ms" for rtt in (0, RTT_MS) for m in MODES)]


class Compared(NamedTuple):
    """The one comparison run the tests below read (the longest run of the suite's cloud lab)."""

    tmp: Path
    run: dict
    terminal: str
    took: float
    reports: dict[str, str]  # report --from the run's JSON: md and html as printed, csv as the files it wrote
    notes: str  # what the run said on stderr


@pytest.fixture(scope="module")
def compared(cloud_ready: None, tmp_path_factory: pytest.TempPathFactory) -> Compared:
    """`cloudlab` on the two ends of the cache modes at two RTTs, S4's random read (cold and warm)
    and a tree extract, probed; then its report in the other formats."""
    tmp = tmp_path_factory.mktemp("compared")
    out = tmp / "run.json"
    started = time.monotonic()
    done = subprocess.run(
        _command("--mode", ",".join(MODES), "--rtt", f"0,{RTT_MS}", "--repeat", "1", "--runtime", "1", "--size", "8M",
                 "--tree", "tiny", "--only", "random-read", "--only", "extract", "--probe-timeout", "8",
                 "--tree-lag-files", str(TREE_LAG_FILES), "--json", str(out)),
        env=_env(tmp), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]
    reports = {}
    report = [sys.executable, "-m", "mountbench", "report", "--from", str(out)]
    for fmt in ("md", "html"):
        shown = subprocess.run([*report, "--format", fmt], env=_env(tmp), capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0, shown.stderr
        reports[fmt] = shown.stdout
    csv_run = subprocess.run([*report, "--format", "csv", "--out", str(tmp / "r.csv")], env=_env(tmp),
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert csv_run.returncode == 0, csv_run.stderr
    reports["csv"] = "".join(p.read_text() for p in sorted(tmp.glob("r*.csv")))
    return Compared(tmp, run, done.stdout, took, reports, done.stderr)


def test_cloudlab_compares_local_disk_with_cache_modes_at_two_rtts(compared: Compared) -> None:
    tmp_path, run, text, labels = compared.tmp, compared.run, compared.terminal, LABELS
    for label in labels:
        assert label in text
    # the comparison, the pick-two columns and the latency percentiles
    assert "random-read 4k QD1 (S4)" in text and "extract" in text
    # the one pick-two section (report/sections/picktwo.py): its title names the properties, its columns short
    assert "Cloud drive: pick two (performance, consistency with the remote, durability at fsync)" in text
    for column in ("performance", "consistency", "durability"):
        assert f" {column} " in text
    assert "latency percentiles" in text and "p99.9" in text and "p50" in text

    lab = run["config"]["lab"]
    assert lab["name"] == "cloud" and set(lab) == {"name", "probe"}  # its own facts, none of the QEMU lab's
    probe = CloudProbe.from_dict(lab["probe"])
    assert [t.label for t in probe.targets] == labels
    syncs = {m.label: m.sync for m in probe.mounts if m.sync is not None}
    assert set(syncs) == set(labels[1:]), probe.errors

    # the delay is really on the wire: lower bounds it guarantees, whatever the load (a comparison with
    # the 0 ms mounts would be decided by noise). mkdir and rmdir are each a request to the remote
    # (each at least one RTT); the first read of a file only the remote had is a miss.
    for mode in MODES:
        slow = syncs[f"{mode}-{RTT_MS}ms"]
        assert statistics.median(slow.round_trip_ms) >= 2 * RTT_MS, (mode, slow.round_trip_ms)
        assert slow.first_read_ms[0] >= RTT_MS, (mode, slow.first_read_ms)  # the first read is a miss
    # what "durable" means: off writes through at close(); writes/full upload after close (write-back)
    for rtt in (0, RTT_MS):
        assert syncs[f"off-{rtt}ms"].at_close == (True,)
        for mode in ("full",):
            late = syncs[f"{mode}-{rtt}ms"]
            assert late.at_close == (False,) and late.at_fsync == (False,)
            assert late.close_delay_ms[0] is not None and late.close_delay_ms[0] >= 1000.0

    # a tree's upload lag: off has it on the remote at the last close; writes and full upload it
    # after the write-back delay (5 s), all of it
    lags = {lag.label: lag for lag in probe.tree_lag}
    assert set(lags) == set(labels[1:]), probe.errors
    assert {lag.files for lag in lags.values()} == {TREE_LAG_FILES}
    assert all(lag.alone for lag in lags.values())  # one mount at a time (issue 49)
    for rtt in (0, RTT_MS):
        assert lags[f"off-{rtt}ms"].lag_s == 0.0
        for mode in ("full",):
            lag = lags[f"{mode}-{rtt}ms"]
            assert lag.on_remote == lag.files and lag.lag_s is not None and lag.lag_s >= 4.0, lag
            assert lag.at_close < lag.files
    assert "files:" in text and "after the last close" in text  # the durability words say it

    samples = run["samples"]
    cloud_ok = [s for s in samples if s["ok"] and s["target"] != "local"]
    assert cloud_ok and all("host.cpu_s" in s["metrics"] for s in cloud_ok)  # rclone's own cost per sample
    reads = [s for s in samples if s["workload"] == "random-read" and s["ok"]]
    assert {s["target"] for s in reads} == set(labels)  # off too: its files written as new files (dd)
    assert all("read.lat_p99" in s["metrics"] for s in reads)
    # issue 47 case 5: the machine's page cache was emptied before every buffered sample; the files a
    # read reads are evicted one by one now (fio's working files: their names are known)
    assert all(s["cache_action"].startswith("evicted") for s in reads), {s["cache_action"] for s in reads}
    caveated = {s["target"] for s in samples if any(c["code"] == "cloud-cache" for c in s["caveats"])}
    assert caveated == {f"full-{rtt}ms" for rtt in (0, RTT_MS)}

    # the section in the other formats: Markdown and the CSV of its records
    md = compared.reports["md"]
    assert "Cloud drive: pick two" in md and "first read / cached re-read" in md
    with (tmp_path / "r-picktwo.csv").open(newline="") as rows:  # every lab's pick two, one row a measure
        records = list(csv.DictReader(rows))
    assert {r["lab"] for r in records} == {"cloud"} and {r["target"] for r in records} >= set(labels)
    measured = {(r["target"], r["measure"]) for r in records}
    assert all((label, "mode") in measured for label in labels)  # the local disk: the baseline, its mode alone
    assert all((label, what) in measured for label in labels[1:] for what in ("wire", "round_trip", "reads"))
    assert_nothing_left(tmp_path)
    print(f"cloudlab end to end: {compared.took:.1f} s")


def test_every_format_says_which_phase_a_figure_is(compared: Compared) -> None:
    """S4's random read is measured cold and, as a mode of the run (full) caches reads, warm: each
    figure of it says which, in every format. (The same run as the comparison above.)"""
    tmp, run, terminal = compared.tmp, compared.run, compared.terminal
    assert [w["name"] for w in run["workloads"]] == ["random-read", "random-read-warm", "extract"]
    assert "random-read 4k QD1 (S4), cold" in terminal and "random-read 4k QD1 (S4), warm" in terminal
    assert "cold: each working file was only on the remote" in terminal and "warm: read after" in terminal
    for sample in run["samples"]:
        if sample["target"] == "local" or sample["workload"] == "extract":  # the tree writes: it has no phase
            continue
        codes = {c["code"] for c in sample["caveats"]}
        assert ("cloud-warm" if sample["workload"].endswith("-warm") else "cloud-cold") in codes, sample
    for fmt in ("md", "html"):
        shown = compared.reports[fmt]
        assert "(S4), cold" in shown and "(S4), warm" in shown, fmt
        assert "cold: each working file" in shown and "warm: read after" in shown, fmt
        assert "rated on the cold figures" in shown, fmt  # pick two says which it rates
    pick = (tmp / "r-picktwo.csv").read_text()
    assert "random-read: cold" in pick and ", warm" in pick
    assert "(S4), cold" in compared.reports["csv"] and "(S4), warm" in compared.reports["csv"]


def test_every_sample_on_a_mount_meets_a_fresh_delay_and_a_warm_read_keeps_the_page_cache(compared: Compared) -> None:
    """Issue 49: toxiproxy under a Go memory limit slowed every cloud mount in a run's second round, and
    the warm phase emptied the whole page cache between its untimed read and the timed one. Now the delay
    is started afresh before every sample on a cloud mount, said in the output (how many times) and in
    the stored facts, and a warm sample on full evicts only rclone's cache files (its record says so)."""
    run = compared.run
    on_mounts = [s for s in run["samples"] if s["target"] != "local"]
    said = [line for line in compared.notes.splitlines() if "the delay was started afresh" in line]
    assert said == [f"cloudlab: the delay was started afresh {len(on_mounts)} time(s), once before each sample on "
                    "a cloud mount; its memory guard never had to stop it"], compared.notes  # fmt: skip
    tools = CloudProbe.from_dict(run["config"]["lab"]["probe"]).tools
    assert "started afresh before every sample on a cloud mount" in tools["toxiproxy"]
    assert "started afresh before every sample" in compared.reports["md"]  # the notes of every format
    for sample in run["samples"]:
        warm_on_full = sample["workload"].endswith("-warm") and sample["target"].startswith("full-")
        action = sample["cache_action"]
        if warm_on_full:
            assert action.startswith("not needed (warm phase: only rclone's cache files"), sample
            assert any("Only rclone's cache files" in c["text"] for c in sample["caveats"]), sample
        elif sample["workload"].startswith("random-read"):
            # cold, the local disk, and off's warm (from the remote): its files evicted, or every cache dropped
            assert action.startswith(("evicted", "dropped")), sample


def _start_and_wait_for_mounts(tmp_path: Path, dead: Path | None = None) -> subprocess.Popen[str]:
    """A lab started and mounted (a mount under a work directory other than ``dead``), into its probe."""
    proc = subprocess.Popen(
        _command("--mode", "writes", "--rtt", "0", "--repeat", "1", "--runtime", "1", "--size", "4M",
                 "--only", "random-read", "--probe-timeout", "30"),
        env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip

    def mounted() -> bool:
        return any(dead is None or not m.startswith(str(dead)) for m in _mounted_under(tmp_path))

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not mounted():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.2)
    assert mounted(), "the lab never mounted"
    time.sleep(1.0)  # into the probe (a 30 s timeout: it is still running)
    return proc


def test_a_killed_run_is_cleaned_by_the_next_and_ctrl_c_stops_everything_the_lab_started(tmp_path: Path) -> None:
    """kill -9 leaves the lab's mounts, namespace and work directory; the next run cleans them before it
    starts, and a Ctrl-C in that run stops everything it started (two lab starts, not three: the
    killed run's and the next, which is the one interrupted)."""
    proc = _start_and_wait_for_mounts(tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)  # no cleanup at all: the stale mount stays
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _processes_under(tmp_path):
        time.sleep(0.1)  # its children die with it (PR_SET_PDEATHSIG)
    assert _processes_under(tmp_path) == [], "the killed run's children outlived it"
    root = tmp_path / "cache" / "mountbench" / "cloudlab"
    assert list(root.iterdir()), "the killed run left no work directory to clean"
    (state,) = [state_mod.LabState.load(d) for d in root.iterdir()]
    assert state is not None and (root / state.workdir.name / "tmp").is_dir()
    assert _mounted_under(state.workdir), "a killed run leaves its mounts"

    # the next run cleans it first (what it does before anything else), then Ctrl-C
    proc = _start_and_wait_for_mounts(tmp_path, dead=state.workdir)
    assert not state.workdir.exists() and _mounted_under(state.workdir) == []
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    cleaned = [line for line in stderr.splitlines() if "cleaned what a dead cloud-lab run left" in line]
    assert cleaned == [f"cleaned what a dead cloud-lab run left: {state.workdir}"], stderr  # nothing it could not
    assert_nothing_left(tmp_path)  # the killed run's temporary files too: they were in its work directory
    if state.network:  # the namespace it made (as root) is gone with it
        assert state.network not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_a_killed_run_is_resumed_on_a_lab_made_again(tmp_path: Path) -> None:
    """kill -9 after the first samples are stored; `cloudlab --resume` makes the lab again (the same
    cache mode and RTT, new mount points), keeps what was stored and takes only the rest."""
    db = tmp_path / "db.sqlite"
    proc = subprocess.Popen(
        _command("--mode", "writes", "--rtt", "0", "--repeat", "3", "--runtime", "1", "--size", "4M",
                 "--only", "random-read", "--no-probe"),
        env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    stored: list[tuple[str, str, int]] = []
    while time.monotonic() < deadline and len(stored) < 2:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.3)
        if db.exists():
            with sqlite3.connect(db) as conn:
                stored = conn.execute("SELECT run_id, target, round FROM samples WHERE ok = 1").fetchall()
    assert len(stored) >= 2, "no samples stored within 120 s"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    run_id = stored[0][0]

    # `run --resume` cannot: the mounts are gone, and it says which command can
    wrong = subprocess.run([sys.executable, "-m", "mountbench", "run", "--resume", run_id], env=_env(tmp_path),
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert wrong.returncode == 2 and f"mountbench cloudlab --resume {run_id}" in wrong.stderr, wrong.stderr

    out = tmp_path / "resumed.json"
    done = subprocess.run(_command("--resume", run_id, "--json", str(out)), env=_env(tmp_path),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"resuming run {run_id}" in done.stderr
    (run,) = json.loads(out.read_text())["runs"]
    assert run["status"] == "complete"
    taken = sorted((s["target"], s["round"]) for s in run["samples"] if s["ok"])
    assert taken == sorted((t, r) for t in ("local", "writes-0ms") for r in (0, 1, 2))
    before = {(target, rnd) for _, target, rnd in stored}
    assert len(before) < len(taken)  # the resume took the rest
    # what was stored before the kill is kept as it was, not taken again
    kept = {(s["target"], s["round"]): s["started_at"] for s in run["samples"]}
    with sqlite3.connect(db) as conn:
        first = dict(((t, r), at) for t, r, at in conn.execute(
            "SELECT target, round, started_at FROM samples WHERE run_id = ?", (run_id,)))  # fmt: skip
    assert all(kept[key] == first[key] for key in before)
    assert {t["label"]: t["path"] for t in run["targets"]}["writes-0ms"].startswith(str(tmp_path / "cache"))
    assert_nothing_left(tmp_path)
