"""Skips for tools a test needs; importable from any test folder (pytest's pythonpath has tests/)."""

from __future__ import annotations

import shutil

import pytest


def needs_fio() -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed (apt-get install fio)")
