"""`mountbench lab --preset s1` under TCG: study S1's cases (fio, nginx, start-up) run inside
the guest on sshfs, whose host side (sshd, then the session and sftp-server that appear
once the guest connects) is measured around every sample; one guest boot for every
assertion; the report draws S1's view. About a minute on an idle 2-core machine.
(test_lab_cli.py covers host CPU on every default mount.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def mountbench(*args: str, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mountbench", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_lab_s1_with_host_cost(lab_ready: None, tmp_path: Path, mb_env: dict[str, str]) -> None:
    if shutil.which("wrk") is None:
        pytest.skip("nginx and wrk are not installed (apt-get install nginx-light wrk)")
    app = tmp_path / "app"  # a tiny application tree: start-up under TCG is minutes with the whole stdlib
    app.mkdir()
    (app / "tinyapp.py").write_text("import json\nCONFIG = json.loads('{\"a\": 1}')\n")
    out = tmp_path / "lab.json"
    proc = mountbench(
        "lab", "--mount", "sshfs", "--preset", "s1", "--only", "one-file-seq-read",
        "--only", "http-sendfile", "--only", "startup-warm", "--app-tree", str(app), "--size", "4M",
        "--runtime", "1", "--repeat", "1", "--accel", "tcg", "--json", str(out), env=mb_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = json.loads(out.read_text())["runs"]
    samples = run["samples"]
    assert len(samples) == 3 and all(s["ok"] for s in samples), [(s["target"], s["error"]) for s in samples]
    by_key = {(s["target"].split()[0], s["workload"]): s for s in samples}
    fio, http = by_key[("sshfs", "one-file-seq-read")], by_key[("sshfs", "http-sendfile")]
    for sample in (fio, http, by_key[("sshfs", "startup-warm")]):
        assert sample["metrics"]["host.cpu_s"] > 0  # QEMU's I/O threads and sshd work for every sample
        assert sample["metrics"]["host.uss_peak"] > 0  # sshd, its session and sftp-server
        assert sample["metrics"]["host.ctx_voluntary"] > 0
        assert any(c["code"] == "emulated-guest-cpu" for c in sample["caveats"])  # sshfs: ssh is guest CPU
    assert fio["metrics"]["read.bw"] > 0 and fio["metrics"]["host.cpu_s_per_gib"] > 0
    assert http["metrics"]["http.requests_per_s"] > 0 and http["metrics"]["host.cpu_s_per_gib"] > 0
    assert http["metrics"]["nginx.cpu_s"] > 0  # nginx in the guest, measured there
    # S1's view in the report, from the stored lab run
    report = tmp_path / "lab.md"
    proc = mountbench("report", run["id"], "--out", str(report), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    text = report.read_text()
    assert "## Host cost per case (study S1)" in text and "guest emulated" in text
    assert (tmp_path / "lab-cost-http-sendfile.png").exists()
    assert (tmp_path / "lab-bars-http-requests-per-s.png").exists()


def test_lab_refuses_watch(mb_env: dict[str, str], lab_ready: None) -> None:
    proc = mountbench("lab", "--watch", "sshfs", env=mb_env, timeout=60)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "the lab measures the host processes" in proc.stderr
