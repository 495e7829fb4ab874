"""mountbench's image (the Containerfile), built once per test session by scripts/build-image.sh
in a Podman state directory of the session's own (never the machine's Podman storage), and
removed with everything in it at the end (`build-image.sh --remove`). The image test and the
image_fidelity bench's smoke run share it (tests/conftest.py's ``mountbench_image``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from mountbench.labs.containers.podman import Podman
from mountbench.labs.containers.prereq import lab_problems
from support.wheels import REPO

SCRIPT = REPO / "scripts" / "build-image.sh"
TAG = "localhost/mountbench:test"


@dataclass(frozen=True)
class BuiltImage:
    state: Path  # Podman's configuration, storage and run state for the image
    tag: str
    output: str  # what build-image.sh printed
    seconds: float

    @property
    def podman(self) -> Podman:
        return Podman(self.state / "containers.conf", self.state / "storage.conf")

    def run(self, args: Sequence[str | Path], timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``podman run --rm ARGS`` with the image's own Podman settings."""
        return subprocess.run(self.podman.argv(["run", "--rm", *map(str, args)]), env=self.podman.env,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip


def problems() -> list[str]:
    """Why the image cannot be built here ('' each: what is missing, with its fix)."""
    found = [f"{p} ({p.fix})" for p in lab_problems()]  # root, podman, runc, fio, overlayfs: as the container lab
    if shutil.which("mmdebstrap") is None:
        found.append("mmdebstrap is missing (apt-get install mmdebstrap)")
    return found


def require() -> None:
    """Skip (or fail, with MOUNTBENCH_CONTAINERS_REQUIRED=1, as the container lab's tests) where
    the image cannot be built."""
    missing = problems()
    if missing:
        text = f"the image cannot be built here: {'; '.join(missing)}"
        if os.environ.get("MOUNTBENCH_CONTAINERS_REQUIRED") == "1":
            pytest.fail(text)
        pytest.skip(text)


def built(state: Path) -> Iterator[BuiltImage]:
    """Build the image in ``state`` (a directory that does not exist yet); remove it all afterwards."""
    require()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTAINERS_")}
    start = time.monotonic()
    try:
        done = subprocess.run([str(SCRIPT), "--state", str(state), "--tag", TAG, "--no-registry"], env=env,
                              capture_output=True, text=True, timeout=1200)  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        yield BuiltImage(state, TAG, done.stdout, time.monotonic() - start)
    finally:
        subprocess.run([str(SCRIPT), "--remove", "--state", str(state)], env=env, capture_output=True, timeout=300)
