"""`mountbench lab` end to end: boot under TCG, run mountbench in the guest on every
default mount, bring the results home with host costs and caveats."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def mountbench(*args: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mountbench", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_lab_default_mounts_fio_and_tree(lab_ready: None, tmp_path: Path, mb_env: dict[str, str]) -> None:
    out = tmp_path / "lab.json"
    proc = mountbench(
        "lab", "--preset", "quick", "--preset", "tree", "--tree", "tiny", "--only", "rnd4k-q1-read",
        "--only", "extract", "--runtime", "0.3", "--size", "4M", "--repeat", "1", "--accel", "tcg",
        "--json", str(out), env=mb_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]
    labels = [t["label"] for t in run["targets"]]
    for kind in ("9p", "virtiofs", "sshfs", "disk", "guest-tmpfs"):
        assert any(label.startswith(kind) for label in labels), labels
    assert any("cache=loose" in label for label in labels)
    assert run["config"]["baseline"] == "guest-tmpfs"
    samples = run["samples"]
    assert len(samples) == 6 * 2
    assert all(s["ok"] for s in samples), [(s["target"], s["error"]) for s in samples if not s["ok"]]
    for sample in samples:
        codes = {c["code"] for c in sample["caveats"]}
        # TCG: every number says so; sshfs's cost is guest CPU (ssh), and 9p cache=loose and virtiofs
        # cache=auto copy through the guest's page cache (emulated): their caveat is the stronger one
        stronger = sample["target"].startswith(("sshfs", "virtiofs")) or "loose" in sample["target"]
        assert ("emulated-guest-cpu" if stronger else "emulated") in codes, sample["target"]
        assert sample["metrics"]["host.cpu_s"] >= 0
        assert sample["metrics"]["guest.cpu_s"] > 0  # the whole guest's busy CPU during the timed part
        if sample["workload"] == "rnd4k-q1-read":
            assert sample["metrics"]["read.iops"] > 0
            assert sample["metrics"]["host.cpu_s_per_gib"] >= 0
        else:
            assert sample["metrics"]["wall"] > 0
    # the mount options as the guest saw them (/proc/mounts), per target
    info = {t["label"]: t["info"] for t in run["targets"]}
    loose = next(v for k, v in info.items() if "cache=loose" in k)
    assert loose["fstype"] == "9p" and "loose" in loose["mount_options"] and "msize=512000" in loose["mount_options"]
    assert next(v for k, v in info.items() if k.startswith("virtiofs"))["fstype"] == "virtiofs"
    assert next(v for k, v in info.items() if k.startswith("sshfs"))["fstype"] == "fuse.sshfs"
    assert next(v for k, v in info.items() if k.startswith("disk"))["fstype"] == "ext4"
    lab = run["config"]["lab"]
    assert lab["name"] == "qemu" and "cloud" not in lab
    assert lab["accel"] == "tcg" and lab["boot"]["first_command_s"] > 0
    # stored on the host like any run, and shown with the caveat
    with sqlite3.connect(mb_env["MOUNTBENCH_DB"]) as db:
        assert db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 12
    assert "guest emulated" in proc.stdout


def test_lab_bad_mount_spec_fails_before_booting(mb_env: dict[str, str]) -> None:
    proc = mountbench("lab", "--mount", "nfs:vers=4", env=mb_env, timeout=60)  # 4.1 or 3
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_lab_probe_options_without_probe_fail_before_booting(mb_env: dict[str, str], tmp_path: Path) -> None:
    proc = mountbench("lab", "--mount", "9p", "--probe-timeout", "2", env=mb_env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "mountbench: error: --probe-repeat and --probe-timeout apply to --probe; add --probe or drop them"
    ]
    assert not Path(mb_env["MOUNTBENCH_DB"]).exists()


def test_a_lab_run_is_resumed_by_lab_resume_alone_and_one_it_cannot_make_again_is_refused_in_one_line(
    mb_env: dict[str, str],
) -> None:
    """Every lab resumes (issue 52); a QEMU-lab run that does not record how its mounts were made is
    refused before anything boots, in one line."""
    import dataclasses

    from support.factories import make_run

    from mountbench.labfacts import QemuLabFacts
    from mountbench.store import Store

    run = make_run({("9p", "extract"): [1.0]}, run_id="r7", baseline="9p")
    config = dataclasses.replace(run.config, lab=QemuLabFacts(accel="tcg", emulated=True))
    with Store(Path(mb_env["MOUNTBENCH_DB"])) as store:
        store.import_run(dataclasses.replace(run, status="interrupted", config=config))
    said = {}
    for args in (("lab", "--resume", "r7"), ("run", "--resume", "r7"), ("cloudlab", "--resume", "r7")):
        proc = mountbench(*args, env=mb_env, timeout=60)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        said[args[0]] = proc.stderr
    assert "run r7 cannot be resumed: it does not record how each of its mounts was made" in said["lab"]
    assert "resume it with 'mountbench lab --resume r7'" in said["run"]
    assert "run r7 is not a cloudlab run; resume it with 'mountbench lab --resume r7'" in said["cloudlab"]
