"""Podman as the lab calls it: always with the lab's own configuration and storage (the
environment below), so that nothing it runs can see or change the user's own Podman state, nor
the machine's: its network configuration and CNI lock live in the lab's directory
(containers.conf's ``network_config_dir``, labs/containers/workdir.py), and the one command that
keeps a cache under /var/lib/containers whatever it is told (``podman import``: containers/image's
blob-info cache) runs in a private mount namespace where the lab's directory takes that place
(host/contain.py ``popen_in_view``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mountbench.errors import MountbenchError
from mountbench.host import contain

RUNTIME = "runc"  # crun refuses to start containers on hosts like this one (see prereq.py)
SYSTEM_DIR = "system"  # the lab's stand-in for /var/lib/containers in podman import's private view
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

    @property
    def lab_dir(self) -> Path:
        return self.containers_conf.parent

    def system_binds(self) -> tuple[tuple[str, str], ...]:
        """What stands in for the machine's /var/lib/containers (or, where it is missing, /var/lib)
        in a private view: the lab's own ``system`` folder."""
        system = self.lab_dir / SYSTEM_DIR
        system.mkdir(mode=0o700, exist_ok=True)
        target = "/var/lib/containers" if os.path.isdir("/var/lib/containers") else "/var/lib"
        return ((str(system), target),)

    def run(self, args: Sequence[str], *, check: bool = True, timeout: float = TIMEOUT_S,
            private_view: bool = False) -> str:  # fmt: skip
        """Run ``podman ARGS``; its stdout. Raises PodmanFailed (with podman's last words)
        when it fails and ``check``. ``private_view``: in a private mount namespace where the lab's
        directory stands in for /var/lib/containers (see the module)."""
        try:
            done = contain.run(
                self.argv(args), contain.NOTHING, binds=self.system_binds() if private_view else (), env=self.env,
                capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
            ) if private_view else subprocess.run(
                self.argv(args), env=self.env, capture_output=True, text=True, timeout=timeout,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise PodmanFailed(f"podman {args[0]} did not finish within {timeout:.0f} s") from None
        except contain.ContainmentError as exc:
            raise PodmanFailed(f"podman {args[0]} could not be kept apart from the machine's state ({exc})") from None
        except OSError as exc:
            raise PodmanFailed(f"cannot run podman ({exc}); apt-get install podman") from None
        if check and done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise PodmanFailed(f"podman {' '.join(args[:2])} failed: {last}")
        return done.stdout
