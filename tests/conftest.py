"""Shared fixtures. Real mounts come from support/realmounts.py (created and removed by the suite)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def mb_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment whose results database lives in the test's temp dir."""
    db = tmp_path / "results.sqlite"
    monkeypatch.setenv("MOUNTBENCH_DB", str(db))
    env = dict(os.environ)
    env["MOUNTBENCH_DB"] = str(db)
    return env

