"""The package as pip builds it, for the install tests (tests/install) and the image's: where the
checkout is, and a copy of its sources to build from (so the checkout gets no build/ or egg-info)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APT_TOOLS = ("apt", "apt-get", "apt-cache", "aptitude", "dpkg")


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path
    wheelhouse: Path  # the wheel's dependencies for this Python (pip download)


def copy_sources(into: Path) -> Path:
    """pyproject.toml, README.md and src/ of the checkout (no caches, no egg-info) in ``into``."""
    into.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, into / name)
    shutil.copytree(REPO / "src", into / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return into
