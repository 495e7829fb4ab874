"""Fixtures for the container-lab tests: skip (with the fix) where Podman, runc or root are missing."""

from __future__ import annotations

import os

import pytest

from mountbench.labs.containers.prereq import lab_problems


@pytest.fixture
def podman_ready() -> None:
    """Skip (or fail, with MOUNTBENCH_CONTAINERS_REQUIRED=1) when the container lab cannot run here."""
    problems = lab_problems()
    if problems:
        text = "; ".join(f"{p} ({p.fix})" for p in problems)
        if os.environ.get("MOUNTBENCH_CONTAINERS_REQUIRED") == "1":
            pytest.fail(f"container lab prerequisites missing: {text}")
        pytest.skip(f"container lab prerequisites missing: {text}")
