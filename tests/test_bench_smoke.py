"""Each benchmark of mountbench itself (bench/) runs in its --smoke mode: the script works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.tools import needs_fio

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.slow
def test_aa_smoke(tmp_path):
    needs_fio()
    proc = subprocess.run(
        [sys.executable, str(BENCH / "aa.py"), "--smoke", "--shm", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "called faster/slower" in proc.stdout and "goal (" in proc.stdout


@pytest.mark.slow
def test_time_to_answer_smoke(tmp_path):
    needs_fio()
    proc = subprocess.run(
        [sys.executable, str(BENCH / "time_to_answer.py"), "--smoke", "--disk", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "agreement with the reference" in proc.stdout and "confidently wrong:" in proc.stdout


@pytest.mark.slow
def test_fidelity_smoke(tmp_path):
    needs_fio()
    proc = subprocess.run(
        [sys.executable, str(BENCH / "fidelity.py"), "--smoke", "--dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "fidelity on" in proc.stdout and "all workloads pooled" in proc.stdout
