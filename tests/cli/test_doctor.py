"""`mountbench doctor --preset`: what a run of the preset would refuse, found before the run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from support import realmounts
from support.runhelpers import mountbench, plant_neighbours, snapshot
from support.tools import needs_fio


def _row(stdout: str, check: str) -> str:
    """The text of the table rows that start with ``check`` (cells wrap onto later lines)."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(f"│ {check}")]
    assert starts, f"no row {check!r} in:\n{stdout}"
    block = []
    for line in lines[starts[0] :]:
        if block and (line.startswith("└") or (line.startswith("│ ") and not line.startswith("│  "))):
            break
        block.append(line)
    return " ".join(" ".join(line.replace("│", " ").split()) for line in block)


def test_a_preset_too_big_for_the_target_is_found_before_a_run(mb_env: dict[str, str]) -> None:
    needs_fio()
    with realmounts.tmpfs("20m") as small:
        before = plant_neighbours(small)
        proc = mountbench("doctor", str(small), "--preset", "quick", env={**mb_env, "COLUMNS": "200"})
        assert proc.returncode == 1, proc.stderr
        assert "✓ 6 workload(s) ready" in _row(proc.stdout, "preset quick: fio")
        room = _row(proc.stdout, "preset quick: room on the targets")
        assert "✗ not enough space" in room and "needs 256 MiB" in room and "pass --size" in room
        assert snapshot(small) == before  # doctor's scratch came and went


def test_a_preset_whose_tool_is_missing_names_the_tool_and_its_install(tmp_path: Path, mb_env: dict[str, str]) -> None:
    needs_fio()
    only_fio = tmp_path / "bin"
    only_fio.mkdir()
    fio = shutil.which("fio")
    assert fio is not None
    (only_fio / "fio").symlink_to(fio)
    target = tmp_path / "t"
    target.mkdir()
    env = {**mb_env, "PATH": str(only_fio), "COLUMNS": "200"}
    proc = mountbench("doctor", str(target), "--preset", "http", env=env)
    assert proc.returncode == 1, proc.stderr
    http = _row(proc.stdout, "preset http: http")
    assert "✗ cannot run its" in http and "wrk is needed by the http workloads" in http and "apt-get" in http
    assert "✓ the working sets fit" in _row(proc.stdout, "preset http: room on the targets")
    if os.geteuid() == 0:
        assert proc.stdout.count("✗") == 1, proc.stdout


def test_an_unknown_preset_is_bad_input() -> None:
    proc = mountbench("doctor", "--preset", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "mountbench: error: unknown preset 'nope'; choose from " + proc.stderr.split("choose from ", 1)[1].strip()
    ]
    assert "quick" in proc.stderr and "Traceback" not in proc.stderr


def test_doctor_names_each_target_as_a_run_of_them_does(tmp_path: Path, mb_env: dict[str, str]) -> None:
    """Issue 48: `doctor` labelled two different directories both 'nr-newcomer (ext4)' (each resolved alone),
    while `run` told them apart ('a/nr-newcomer (ext4)', 'b/nr-newcomer (ext4)'): one labelling for both."""
    import re

    needs_fio()
    dirs = [tmp_path / side / "nr-newcomer" for side in ("a", "b")]
    for path in dirs:
        path.mkdir(parents=True)
    doctor = mountbench("doctor", *map(str, dirs), env={**mb_env, "COLUMNS": "200"})
    dry = mountbench("run", *map(str, dirs), "--dry-run", env={**mb_env, "COLUMNS": "200"})
    assert dry.returncode == 0, dry.stderr
    run_labels = re.findall(r"^  target (.+): /", dry.stdout, flags=re.M)
    doctor_labels = re.findall(r"^│ target (.+?) +│", doctor.stdout, flags=re.M)
    assert len(set(run_labels)) == 2 and doctor_labels == run_labels, (doctor.stdout, run_labels)
