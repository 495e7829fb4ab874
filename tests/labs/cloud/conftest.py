"""Fixtures for the cloud-lab tests: skip (with the fix) where rclone, FUSE or toxiproxy are missing."""

from __future__ import annotations

import os

import pytest

from mountbench.labs.cloud.prereq import lab_problems


@pytest.fixture(scope="module")
def cloud_ready() -> None:
    """Skip (or fail, with MOUNTBENCH_CLOUD_REQUIRED=1) when the cloud lab cannot run here. Module-scoped:
    the module-scoped runs that several tests read (test_cloudlab_e2e.py) ask it first."""
    problems = lab_problems()
    if problems:
        text = "; ".join(f"{p} ({p.fix})" for p in problems)
        if os.environ.get("MOUNTBENCH_CLOUD_REQUIRED") == "1":
            pytest.fail(f"cloud lab prerequisites missing: {text}")
        pytest.skip(f"cloud lab prerequisites missing: {text}")
