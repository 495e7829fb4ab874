"""Fixtures the bad-input and fault-pass tests share: a target that nothing may write to, and the
check that a refusal began no run (those files run alongside the host's tests)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.runhelpers import plant_neighbours, runs_begun_since, snapshot


@pytest.fixture
def target(tmp_path: Path):
    """A target directory with neighbours planted; after the test it must be as it was."""
    directory = tmp_path / "target"
    directory.mkdir()
    before = plant_neighbours(directory)
    yield directory
    assert snapshot(directory) == before, "a failed command wrote to the target"


@pytest.fixture
def no_run_started(tmp_path, mb_env):
    """No command of the test began a run: a run stores itself before its first sample, whose
    cache drop and fio the tests alongside must never see."""
    since = time.time()
    yield
    assert runs_begun_since(since, tmp_path, Path(mb_env["MOUNTBENCH_DB"])) == []
