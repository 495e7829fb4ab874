"""The container lab's host side: its directory, its image, one container holding every mount
type, and commands run in it; all of it gone when the block ends, however it ends.

    with ContainerLab(mount_types) as lab:
        lab.exec([python, "-m", "mountbench", "run", ...], on_line=print)

On entry the lab first sweeps what killed runs left (workdir.py), then builds its image,
prepares each mount (a volume, the overlay's lower directory) and starts the container
(``sleep infinity``, no network). The container gets the host's Python and mountbench
read-only at the paths the host has them, and the results directory; everything it runs
is started with ``podman exec``. On exit the container, volume and image are removed, every
mount under the lab directory unmounted and the directory deleted.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mountbench.errors import MountbenchError
from mountbench.host import process as procs
from mountbench.labs.containers.image import Image, build_image, python_paths
from mountbench.labs.containers.mounts import MountType
from mountbench.labs.containers.podman import RUNTIME, PodmanFailed
from mountbench.labs.containers.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.containers.workdir import LabDir, sweep_dead, work_root
from mountbench.labs.frame import LabContext, refuse

RESULTS = "/results"  # the lab's results directory as the container sees it


@dataclass
class ContainerLab(LabContext):
    mount_types: Sequence[MountType]
    on_note: Callable[[str], None] = print
    root: Path = field(default_factory=work_root)
    lab: LabDir | None = None
    image: Image | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    _pid: int | None = None

    # --- up ---------------------------------------------------------------------------

    def _before_start(self) -> None:
        refuse(lab_problems(mount_types={k.name for k in self.mount_types}), DOCTOR_FLAG)
        for cleaned in sweep_dead(self.root):
            self.on_note(f"cleaned what a killed container-lab run left: {cleaned}")

    def _start(self) -> None:
        self.lab = LabDir.create(self.root)
        lab, podman, names = self.lab, self.lab.podman, self.lab.names
        t0 = time.monotonic()
        self.image = build_image(podman, names.image, names.label, lab.path / "image")
        self.on_note(f"containers: image {names.image} built from the host's tools in {time.monotonic() - t0:.1f} s")
        for mount_type in self.mount_types:
            mount_type.prepare(lab, podman)
        (lab.path / "results" / "tmp").mkdir(exist_ok=True)
        argv = ["run", "--detach", "--name", names.container, "--label", names.label, "--network", "none",
                "--env", "HOME=/root", "--env", f"TMPDIR={RESULTS}/tmp", "--env", "PYTHONDONTWRITEBYTECODE=1",
                "--env", "PYTHONIOENCODING=utf-8",
                "--volume", f"{lab.path / 'results'}:{RESULTS}"]  # fmt: skip
        for path in python_paths():
            argv += ["--volume", f"{path}:{path}:ro"]
        for mount_type in self.mount_types:
            argv += mount_type.run_args(lab, names)
        podman.run([*argv, names.image, "sleep", "infinity"])
        pid = podman.run(["inspect", "--format", "{{.State.Pid}}", names.container]).strip()
        self._pid = int(pid) if pid.isdigit() and int(pid) > 0 else None
        if self._pid is None:
            raise PodmanFailed(f"the lab's container did not start (state pid {pid!r})")
        self.facts = self._describe()

    def _describe(self) -> dict[str, Any]:
        assert self.lab is not None and self.image is not None
        podman = self.lab.podman
        info = podman.run(["info", "--format", "{{.Store.GraphDriverName}}|{{.Host.Security.Rootless}}|"
                           "{{.Host.CgroupManager}}|{{.Host.CgroupsVersion}}"]).strip().split("|")  # fmt: skip
        driver, rootless, cgroups, cgroup_version = ([*info, "", "", "", ""])[:4]
        version = podman.run(["version", "--format", "{{.Client.Version}}"]).strip()
        runtime = subprocess.run([RUNTIME, "--version"], capture_output=True, text=True, timeout=30).stdout
        return {
            "engine": f"podman {version}",
            "runtime": (runtime.splitlines() or [RUNTIME])[0],
            "storage_driver": driver,
            "rootless": rootless == "true",
            "cgroup_manager": cgroups,
            "cgroups": cgroup_version,
            "network": "none",
            "image": self.image.to_dict(),
        }

    # --- use --------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        assert self._pid is not None
        return self._pid

    @property
    def results(self) -> Path:
        assert self.lab is not None
        return self.lab.path / "results"

    @property
    def host_dir(self) -> Path:
        assert self.lab is not None
        return self.lab.path / "host"

    def exec(self, argv: Sequence[str], on_line: Callable[[str], None], timeout: float | None = None) -> int:
        """Run ``argv`` in the container, each line of its output to ``on_line``; its exit
        status. Ctrl-C stops it (and the lab's close() stops the container)."""
        assert self.lab is not None
        podman = self.lab.podman
        proc = subprocess.Popen(
            podman.argv(["exec", self.lab.names.container, *argv]), env=podman.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True,
            preexec_fn=procs.die_with_parent(signal.SIGKILL),
        )  # fmt: skip
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                on_line(line.rstrip("\n"))
                if deadline is not None and time.monotonic() > deadline:
                    raise MountbenchError(f"the container's command did not finish within {timeout:.0f} s")
            return proc.wait()
        finally:
            if proc.poll() is None:
                procs.stop_tree(proc, signal.SIGINT)

    def exec_output(self, argv: Sequence[str], timeout: float = 120.0) -> str:
        assert self.lab is not None
        return self.lab.podman.run(["exec", self.lab.names.container, *argv], timeout=timeout)

    def mount_facts(self, mount_types: Sequence[MountType]) -> dict[str, dict[str, str]]:
        """Each mount as the container's mount table shows it: filesystem type, source and options."""
        table: dict[str, dict[str, str]] = {}
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.pid}/mountinfo").read_text().splitlines():
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) > 5 and len(tail) > 2:
                    table[fields[4]] = {"fstype": tail[0], "source": tail[1], "options": f"{fields[5]},{tail[2]}"}
        return {mount_type.name: table.get(mount_type.path) or table.get("/", {}) for mount_type in mount_types}

    # --- down -------------------------------------------------------------------------

    def close(self) -> None:
        """Remove the container, volume, image and the lab directory. Idempotent."""
        if self.lab is None:
            return
        problems = self.lab.remove()
        self.lab = None
        if problems:
            raise MountbenchError(f"the container lab could not clean up: {'; '.join(problems)}")
