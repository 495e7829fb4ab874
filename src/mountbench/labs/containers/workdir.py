"""The lab's own directory: Podman's configuration, storage and run state for one run, the
host directory behind the bind mount (the baseline too), the overlay mount's lower directory
and the results; and how it goes away, after the run or after a run that was killed.

Everything the lab makes in Podman is named from the lab's id (:class:`Names`) and lives in
this directory's private storage: cleaning up removes those names and then the directory,
never anything listed. A directory whose owner process is gone (a ``kill -9``) is swept by
the next run: its container, volume and image removed through its own configuration, every
mount under it unmounted, the directory deleted.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import platformdirs
import psutil

from mountbench.labs import leftovers
from mountbench.labs.containers.podman import Podman, PodmanFailed
from mountbench.labs.leftovers import mount_points

OWNER = "owner.json"
LABEL = "mountbench.lab"  # the label on everything the lab makes, its value the lab's id


def work_root() -> Path:
    return Path(platformdirs.user_cache_dir("mountbench")) / "containers"


@dataclass(frozen=True)
class Names:
    """What the lab calls what it makes in Podman, from its id."""

    lab_id: str

    @property
    def container(self) -> str:
        return f"mountbench-{self.lab_id}"

    @property
    def volume(self) -> str:
        return f"mountbench-{self.lab_id}-volume"

    @property
    def image(self) -> str:
        return f"localhost/mountbench-lab:{self.lab_id}"

    @property
    def label(self) -> str:
        return f"{LABEL}={self.lab_id}"


@dataclass(frozen=True)
class LabDir:
    path: Path

    @classmethod
    def create(cls, root: Path) -> LabDir:
        lab_id = f"{time.strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(3)}"
        lab = cls(root / lab_id)
        for sub in ("storage", "run", "tmp", "host", "lower", "results", "image", "network"):
            (lab.path / sub).mkdir(parents=True)
        lab.path.chmod(0o700)  # nothing of it is anyone else's business
        me = psutil.Process()
        (lab.path / OWNER).write_text(json.dumps({"pid": me.pid, "started": me.create_time()}))
        lab.containers_conf.write_text(containers_conf(lab.path))
        lab.storage_conf.write_text(storage_conf(lab.path))
        return lab

    @property
    def names(self) -> Names:
        return Names(self.path.name)

    @property
    def containers_conf(self) -> Path:
        return self.path / "containers.conf"

    @property
    def storage_conf(self) -> Path:
        return self.path / "storage.conf"

    @property
    def podman(self) -> Podman:
        return Podman(self.containers_conf, self.storage_conf)

    @classmethod
    def read(cls, path: Path) -> LabDir | None:
        """The lab directory at ``path``; None when it is not one (no owner written)."""
        return cls(path) if (path / OWNER).exists() else None

    def owner_alive(self) -> bool:
        try:
            owner = json.loads((self.path / OWNER).read_text())
            return leftovers.alive(int(owner["pid"]), float(owner["started"]))
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def remove(self) -> list[str]:
        """Remove the lab's container, volume and image, unmount what is left under the
        directory and delete it. Returns what could not be undone (empty: all gone)."""
        problems = []
        if self.containers_conf.exists() and self.storage_conf.exists():
            podman = self.podman
            for args in (
                ["rm", "--force", "--time", "0", "--ignore", self.names.container],
                ["volume", "rm", "--force", self.names.volume],
                ["rmi", "--force", "--ignore", self.names.image],
            ):
                with contextlib.suppress(PodmanFailed):
                    podman.run(args, check=False)
        for mountpoint in mounts_under(self.path):
            why = unmount(mountpoint)
            if why:
                problems.append(why)
        if not problems:
            shutil.rmtree(self.path, ignore_errors=True)
            if self.path.exists():
                problems.append(f"{self.path} could not be removed")
        return problems


def sweep_dead(root: Path) -> list[str]:
    """Clean up what labs whose process died left; the directories cleaned (one that could not
    be removed, e.g. a mount that would not go, is not named and is tried again next time)."""
    return [str(path) for path, problems in leftovers.sweep_dead(root, LabDir.read) if not problems]


def containers_conf(lab: Path) -> str:
    """Podman's engine settings for the lab: runc with cgroupfs and no default ulimits (what
    works where crun and systemd cgroups do not), no network, its state inside the lab."""
    return (
        "# written by mountbench containers: this lab's own Podman settings\n"
        "[containers]\n"
        "default_ulimits = []\n"
        'netns = "none"\n'
        "[engine]\n"
        'cgroup_manager = "cgroupfs"\n'
        'runtime = "runc"\n'
        'events_logger = "none"\n'
        f'tmp_dir = "{lab / "tmp"}"\n'
        f'static_dir = "{lab / "storage" / "libpod"}"\n'
        f'volume_path = "{lab / "storage" / "volumes"}"\n'
        "[network]\n"  # CNI's or netavark's configuration and lock: the lab's, not /etc/cni's
        f'network_config_dir = "{lab / "network"}"\n'
    )


def storage_conf(lab: Path) -> str:
    return (
        "# written by mountbench containers: this lab's own image and container storage\n"
        "[storage]\n"
        'driver = "overlay"\n'
        f'graphroot = "{lab / "storage"}"\n'
        f'runroot = "{lab / "run"}"\n'
    )


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below ``path`` in this mount namespace, deepest first."""
    prefix = str(path)
    found = {point for point in mount_points() if point == prefix or point.startswith(prefix + "/")}
    return sorted(found, key=lambda p: -p.count("/"))


def unmount(mountpoint: str) -> str | None:
    """Unmount, lazily when busy; a reason when that fails too."""
    for argv in (["umount", mountpoint], ["umount", "-l", mountpoint]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if done.returncode == 0:
            return None
    return f"could not unmount {mountpoint}: {done.stderr.strip() or f'exit {done.returncode}'}"
