"""Helpers for the lab tests: skipping when the host cannot boot a guest, checking teardown."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import psutil
import pytest

from mountbench.labs.qemu import DEFAULT_MOUNTS, lab_problems


def require_lab(types: Iterable[str] | None = None) -> None:
    """Skip (or fail, with MOUNTBENCH_LAB_REQUIRED=1) when the host lacks lab pieces: the
    lab's own and those of these mount types (default: the default mounts' types)."""
    if types is None:
        types = {spec.type_name for spec in DEFAULT_MOUNTS}
    problems = lab_problems(types=types)
    if problems:
        text = "; ".join(f"{p} ({p.fix})" for p in problems)
        if os.environ.get("MOUNTBENCH_LAB_REQUIRED") == "1":
            pytest.fail(f"lab prerequisites missing: {text}")
        pytest.skip(f"lab prerequisites missing: {text}")


def lab_root() -> str:
    """How the guest gets the host root in boot tests (MOUNTBENCH_LAB_ROOT=9p|virtiofs|auto)."""
    return os.environ.get("MOUNTBENCH_LAB_ROOT", "auto")


def assert_all_gone(pids: Iterable[int], lab_dir: Path | None) -> None:
    """Every process the lab started has exited, and its work dir is gone."""
    alive = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            if proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{pid} {' '.join(proc.cmdline())[:80]}")
        except psutil.NoSuchProcess:
            pass
    assert not alive, f"lab processes still running: {alive}"
    if lab_dir is not None:
        assert not lab_dir.exists(), f"lab work dir {lab_dir} was not removed"
