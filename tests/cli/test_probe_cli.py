"""mountbench probe from the command line: real probes on real mounts, stored and re-rendered."""

from __future__ import annotations

import json

import pytest
from support import realmounts
from support.runhelpers import mountbench, plant_neighbours, ramfs, snapshot

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
    assert text.startswith("_No data loss or corruption found._") and "| O_DIRECT |" in text
    as_json = mountbench("probe", "--show", "last", "--format", "json", env=mb_env)
    data = json.loads(as_json.stdout)
    assert list(data)[:2] == ["data_loss", "id"] and data["data_loss"] == []
    assert len(data["targets"]) == 2
    assert data["reference"]["target"]["fs"]["fstype"]  # the local reference, measured for real
    verdicts = {r["capability"]: r["verdict"] for r in data["targets"][0]["results"]}
    assert verdicts["symlink"] in {"yes", "no", "differs"}


def test_probe_diff_shows_only_what_differs_and_names_fit(tmp_path, mb_env):
    """tmpfs against ramfs (no O_DIRECT, no size): --diff keeps the rows that differ, and the
    terminal table fits 100 columns."""
    with realmounts.tmpfs("16m") as ram, ramfs() as plain:
        proc = mountbench("probe", str(ram), str(plain), "--no-reference", "--diff", "--format", "md", env=mb_env)
        assert proc.returncode == 0, proc.stderr
        rows = {line.split("|")[1].strip() for line in proc.stdout.splitlines() if line.startswith("| ")}
        assert "O_DIRECT" in rows and "statfs: total size (not free)" in rows  # ramfs: EINVAL, and no size reported
        assert "fsync" not in rows  # its times differ, but a time is not the answer
        assert "symlinks" not in rows and "chmod" not in rows and "maximum name length" not in rows
        again = mountbench("probe", "--show", "last", "--diff", env={**mb_env, "COLUMNS": "100"})
    assert again.returncode == 0, again.stderr
    assert "only the" in again.stdout and "capabilities on which the columns disagree" in again.stdout
    assert "symlinks" not in again.stdout.split("mountbench probe")[1].split("└")[0]
    assert max(len(line) for line in again.stdout.splitlines()) <= 100


def test_probe_view_coherence_of_a_bind_mount(tmp_path, mb_env):
    with realmounts.tmpfs("16m") as ram, realmounts.bind_mount(ram) as view:
        proc = mountbench("probe", "--view", f"{ram}={view}", "--repeat", "2", "--timeout", "2", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert "create" in proc.stdout
    assert "local ref." in proc.stdout  # the same checks on one local directory, next to the pair


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent-mountbench"], "does not exist"),
        (["/tmp", "--reference", "/nonexistent-mountbench-reference"], "does not exist"),
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
