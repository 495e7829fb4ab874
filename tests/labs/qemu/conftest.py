"""Fixtures for the lab tests."""

from __future__ import annotations

import pytest
from support.labhelpers import require_lab


@pytest.fixture
def lab_ready() -> None:
    """Skip (or fail with MOUNTBENCH_LAB_REQUIRED=1) when the host cannot boot the lab guest."""
    require_lab()
