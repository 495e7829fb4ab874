"""Podman as the lab calls it: always with the lab's own configuration and storage (the
environment below), so that nothing it runs can see or change the user's own Podman state."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mountbench.errors import MountbenchError

RUNTIME = "runc"  # crun refuses to start containers on hosts like this one (see prereq.py)
TIMEOUT_S = 120.0


class PodmanFailed(MountbenchError):
    """A podman command the lab needs failed."""


def podman_binary() -> str | None:
    return shutil.which("podman")


@dataclass(frozen=True)
class Podman:
    """podman bound to one lab directory's containers.conf and storage.conf."""

    containers_conf: Path
    storage_conf: Path

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTAINERS_", "REGISTRY_AUTH"))}
        return env | {"CONTAINERS_CONF": str(self.containers_conf), "CONTAINERS_STORAGE_CONF": str(self.storage_conf)}

    def argv(self, args: Sequence[str]) -> list[str]:
        return [podman_binary() or "podman", "--runtime", RUNTIME, *args]

    def run(self, args: Sequence[str], *, check: bool = True, timeout: float = TIMEOUT_S) -> str:
        """Run ``podman ARGS``; its stdout. Raises PodmanFailed (with podman's last words)
        when it fails and ``check``."""
        try:
            done = subprocess.run(
                self.argv(args), env=self.env, capture_output=True, text=True, timeout=timeout,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise PodmanFailed(f"podman {args[0]} did not finish within {timeout:.0f} s") from None
        except OSError as exc:
            raise PodmanFailed(f"cannot run podman ({exc}); apt-get install podman") from None
        if check and done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise PodmanFailed(f"podman {' '.join(args[:2])} failed: {last}")
        return done.stdout
