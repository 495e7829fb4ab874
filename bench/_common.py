"""Shared helpers for the benchmark scripts (not tests: they print figures)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

MOUNTBENCH = [sys.executable, "-m", "mountbench"]


def timed(argv: list[str], **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    return time.monotonic() - start, proc


def check(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(proc.args)}\n{proc.stderr}")
    return proc


def load_runs(path: Path) -> list[dict]:
    return json.loads(path.read_text())["runs"]
