"""mountbench probe from the command line: real probes on real mounts, stored and re-rendered."""

from __future__ import annotations

import json

import pytest
from support import realmounts
from support.runhelpers import mountbench, plant_neighbours, snapshot

pytestmark = pytest.mark.slow


def test_probe_two_targets_store_and_render(tmp_path, mb_env):
    disk = tmp_path / "disk"
    disk.mkdir()
    before = plant_neighbours(disk)
    with realmounts.tmpfs("16m") as ram:
        proc = mountbench("probe", str(ram), str(disk), "--timeout", "5", env=mb_env)
        assert proc.returncode == 0, proc.stderr
        assert not [p for p in ram.iterdir() if p.name.startswith(".mountbench-probe")]
    assert snapshot(disk) == before
    assert "O_DIRECT" in proc.stdout and "tmpfs" in proc.stdout
    md = tmp_path / "caps.md"
    shown = mountbench("probe", "--show", "last", "--format", "md", "--out", str(md), env=mb_env)
    assert shown.returncode == 0, shown.stderr
    text = md.read_text()
    assert text.startswith("|") and "O_DIRECT" in text
    as_json = mountbench("probe", "--show", "last", "--format", "json", env=mb_env)
    data = json.loads(as_json.stdout)
    assert len(data["targets"]) == 2
    verdicts = {r["capability"]: r["verdict"] for r in data["targets"][0]["results"]}
    assert verdicts["symlink"] in {"yes", "no", "differs"}


def test_probe_view_coherence_of_a_bind_mount(tmp_path, mb_env):
    with realmounts.tmpfs("16m") as ram, realmounts.bind_mount(ram) as view:
        proc = mountbench("probe", "--view", f"{ram}={view}", "--repeat", "2", "--timeout", "2", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert "create" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent-mountbench"], "does not exist"),
        (["--view", "/tmp"], "give two paths as A=B"),
        ([], "give at least one TARGET"),
        (["--show", "nosuchprobe"], "nothing stored"),
    ],
)
def test_probe_bad_input(args, message, mb_env):
    proc = mountbench("probe", *args, env=mb_env)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_view_of_unrelated_directories_is_refused(tmp_path, mb_env):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    proc = mountbench("probe", "--view", f"{a}={b}", "--timeout", "1", env=mb_env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
