"""startup workloads with a real interpreter and real trees on real mounts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.runhelpers import load_export, mountbench, plant_neighbours, snapshot
from support.tools import needs_fio

from mountbench.kinds.startup import MARKER, MODULES, import_code, interpreter, tree_source

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def test_python_start_up_cold_and_warm_from_tmpfs_and_ext4(
    tmp_path: Path, mb_env: dict[str, str], tmpfs_dir: Path, ext4_dir: Path
) -> None:
    before = plant_neighbours(ext4_dir)
    out = tmp_path / "run.json"
    proc = mountbench(
        "run", f"ram={tmpfs_dir}", f"disk={ext4_dir}", "--preset", "startup", "--repeat", "1", "--json", str(out),
        env=mb_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert snapshot(ext4_dir) == before
    (run,) = load_export(out)["runs"]
    samples = run["samples"]
    assert len(samples) == 4 and all(s["ok"] for s in samples), [s["error"] for s in samples]
    for sample in samples:
        m = sample["metrics"]
        assert m["wall"] > 0 and m["user"] > 0 and m["sys"] >= 0
        if sample["workload"] == "startup-cold" and os.geteuid() == 0:
            assert sample["cache_action"].startswith("dropped")
        if sample["workload"] == "startup-warm":
            assert sample["cache_action"] == "not needed (a warm workload)"
    titles = {w["name"]: w["title"] for w in run["workloads"]}
    assert titles["startup-cold"] == f"Python start-up importing {len(MODULES)} stdlib modules, cold"
    assert "lower is better" in proc.stdout


def test_the_import_check_notices_modules_from_outside_the_copy(tmp_path: Path) -> None:
    """A module that reaches outside the copy would make the timing measure another disk."""
    copy = tmp_path / "copy"
    elsewhere = tmp_path / "elsewhere"
    copy.mkdir()
    elsewhere.mkdir()
    (elsewhere / "far.py").write_text("")
    (copy / "near.py").write_text(f"import sys\nsys.path.append({str(elsewhere)!r})\nimport far\n")
    python = interpreter()
    code = import_code(copy, ["near"], strict=True, extra_path=[])
    out = subprocess.run([python.path, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    marker, inside, outside, *where = out.stdout.split()
    assert (marker, inside, outside) == (MARKER, "1", "1") and where == [str(elsewhere / "far.py")]


def test_the_standard_library_copy_leaves_out_tests_and_optimised_bytecode() -> None:
    source = tree_source(None)
    assert source.parts[0][0] == interpreter().stdlib
    assert 500 < source.files < 5000 and source.bytes > 10 * 2**20
    assert "test" in source.excludes and "*.opt-1.pyc" in source.excludes


def test_app_tree_and_startup_cmd(tmp_path: Path, mb_env: dict[str, str], tmpfs_dir: Path) -> None:
    app = tmp_path / "app"
    (app / "pkg").mkdir(parents=True)
    (app / "pkg" / "__init__.py").write_text("import json\nVALUE = json.dumps([1])\n")
    (app / "tool.py").write_text("import pkg\n")
    (app / "data.txt").write_text("x" * 10000)
    out = tmp_path / "run.json"
    # the tree alone: its top-level modules are imported from the copy
    proc = mountbench("run", str(tmpfs_dir), "--app-tree", str(app), "--repeat", "1", "--json", str(out), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    assert run["config"]["presets"] == ["startup"] and run["config"]["app"]["tree"] == str(app)
    assert all(s["ok"] for s in run["samples"]) and len(run["samples"]) == 2
    assert run["workloads"][0]["title"] == "Python start-up importing app, cold"
    # a command of one's own, run inside the copy ({tree} is its path)
    proc = mountbench(
        "run", str(tmpfs_dir), "--app-tree", str(app), "--startup-cmd", "cat {tree}/data.txt tool.py",
        "--only", "startup-warm", "--repeat", "1", "--json", str(out), env=mb_env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    (sample,) = run["samples"]
    assert sample["ok"] and sample["metrics"]["wall"] > 0
    assert run["workloads"][0]["spec"]["command"] == "cat {tree}/data.txt tool.py"
    # a command that fails is the cell's error, with its message
    proc = mountbench(
        "run", str(tmpfs_dir), "--startup-cmd", "cat no-such-file", "--only", "startup-cold", "--repeat", "1",
        "--json", str(out), env=mb_env,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # its only sample failed: the run failed
    (sample,) = load_export(out)["runs"][0]["samples"]
    assert not sample["ok"] and "exit 1" in sample["error"] and "no-such-file" in sample["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--app-tree", "/nonexistent-mountbench-tree"], "--app-tree /nonexistent-mountbench-tree: not a directory"),
        (["--startup-cmd", "no-such-program-mb --version"], "no-such-program-mb is not on PATH"),
        (["--startup-cmd", "'unclosed"], "--startup-cmd"),
        (["--startup-cmd", "true", "--preset", "quick"], "add --preset startup"),
        (["--app-tree", "EMPTY"], "has no Python modules at its top level"),
    ],
)
def test_bad_startup_options_are_one_line_errors(
    tmp_path: Path, mb_env: dict[str, str], args: list[str], message: str
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README").write_text("no modules here\n")
    target = tmp_path / "t"
    target.mkdir()
    args = [str(empty) if a == "EMPTY" else a for a in args]
    proc = mountbench("run", str(target), *args, env=mb_env)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr
    assert not list(target.iterdir())


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("start-up tests run on Linux")
