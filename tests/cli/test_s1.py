"""`mountbench run --preset s1 --watch ...` end to end on tmpfs and a real sshfs mount: every
case of study S1, the host cost of sshfs and its sshd measured around each sample, and the
report's S1 view."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import load_export, mountbench
from support.tools import needs_fio

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _tools():
    needs_fio()
    if shutil.which("wrk") is None:
        pytest.skip("nginx and wrk are not installed (apt-get install nginx-light wrk)")


def test_s1_preset_with_watched_sshfs(tmp_path: Path, mb_env: dict[str, str]) -> None:
    out = tmp_path / "s1.json"
    app = tmp_path / "app"  # start-up with the whole standard library is tests/kinds/test_startup.py's
    app.mkdir()
    (app / "smallapp.py").write_text("import json, email.parser\n")
    with (
        realmounts.tmpfs("160m") as ram,
        realmounts.sshd() as server,
        realmounts.host_dir("s1") as remote,
        realmounts.sshfs(remote, server) as fuse,
    ):
        proc = mountbench(
            "run", f"ram={ram}", f"sshfs={fuse.mountpoint}", "--preset", "s1", "--size", "8M",
            "--runtime", "1", "--repeat", "1", "--watch", str(fuse.pid), "--watch", str(server.proc.pid),
            "--app-tree", str(app),
            "--json", str(out), env=mb_env, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert not list(remote.iterdir())  # the scratch directory is gone on the server side too
    (run,) = load_export(out)["runs"]
    assert run["config"]["watch"] == [str(fuse.pid), str(server.proc.pid)]
    samples = run["samples"]
    assert len(samples) == 16 and all(s["ok"] for s in samples), [(s["workload"], s["error"]) for s in samples]
    by_key = {(s["target"], s["workload"]): s["metrics"] for s in samples}
    for workload in ("one-file-seq-read", "ten-files-rand-read", "http-sendfile", "startup-cold"):
        assert "host.cpu_s" in by_key[("sshfs", workload)]
    # serving 8 MiB through sshfs costs its daemons CPU (/proc counts it in 10 ms ticks)
    assert by_key[("sshfs", "one-file-seq-read")]["host.cpu_s"] > 0  # at least one clock tick (10 ms)
    assert by_key[("sshfs", "one-file-seq-read")]["host.cpu_s_per_gib"] > 0
    assert by_key[("sshfs", "http-sendfile")]["host.cpu_s"] > by_key[("ram", "http-sendfile")]["host.cpu_s"]
    assert by_key[("sshfs", "http-sendfile")]["http.requests_per_s"] > 0
    assert by_key[("sshfs", "startup-warm")]["wall"] > 0
    # the report draws S1's view
    report = tmp_path / "s1.md"
    proc = mountbench("report", run["id"], "--out", str(report), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    text = report.read_text()
    assert "## Host cost per case (study S1)" in text and "### nginx static files, sendfile on (wrk)" in text
    assert (tmp_path / "s1-cost-http-sendfile.png").stat().st_size > 10_000
    assert (tmp_path / "s1-bars-http-requests-per-s.png").exists()
    assert "### host CPU time (lower is better)" in text and "### http requests/s (higher is better)" in text
