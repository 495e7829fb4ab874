"""The container lab's host side: its directory, its image, one container holding every mount
type, and commands run in it; all of it gone when the block ends, however it ends.

    with ContainerLab(mount_types) as lab:
        lab.run([python, "-m", "mountbench", "run", ...], (), on_line=print, timeout=None)

On entry the lab first sweeps what killed runs left (workdir.py), then builds its image,
prepares each mount (a volume, the overlay's lower directory) and starts the container
(no network; its first process lives only as long as this one: ``LIFELINE``, so a ``kill -9`` of
mountbench ends the container and everything running in it). The container gets the host's Python and mountbench
read-only at the paths the host has them, and the results directory; everything it runs
is started with ``podman exec``. On exit the container, volume and image are removed, every
mount under the lab directory unmounted and the directory deleted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mountbench.errors import MountbenchError
from mountbench.host import process as procs
from mountbench.labfacts import ContainerLabFacts, ContainerMount
from mountbench.labs.containers.image import Image, build_image, python_paths
from mountbench.labs.containers.mounts import MountType
from mountbench.labs.containers.podman import RUNTIME, Podman, PodmanFailed
from mountbench.labs.containers.podman import TIMEOUT_S as PODMAN_TIMEOUT_S
from mountbench.labs.containers.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.containers.workdir import LabDir, Names, sweep_dead, work_root
from mountbench.labs.delegated import InsideTimeout
from mountbench.labs.frame import LabContext, refuse

RESULTS = "/results"  # the lab's results directory as the container sees it
# the container's first process: it lives as long as the pipe's write end in mountbench (``_run_with_lifeline``)
LIFELINE = "exec cat <&3 >/dev/null"


def run_options(lab: LabDir, mount_types: Sequence[MountType]) -> list[str]:
    """``podman run``'s arguments for the lab's container, up to its image (``with_lifeline`` adds the rest)."""
    names = lab.names
    argv = ["run", "--detach", "--name", names.container, "--label", names.label, "--network", "none",
            "--env", "HOME=/root", "--env", f"TMPDIR={RESULTS}/tmp", "--env", "PYTHONDONTWRITEBYTECODE=1",
            "--env", "PYTHONIOENCODING=utf-8",
            "--volume", f"{lab.path / 'results'}:{RESULTS}"]  # fmt: skip
    for path in python_paths():
        argv += ["--volume", f"{path}:{path}:ro"]
    for mount_type in mount_types:
        argv += mount_type.run_args(lab, names)
    return argv


def with_lifeline(argv: list[str], names: Names) -> list[str]:
    """``podman run ARGV`` completed: the pipe's read end kept at fd 3, the image, and its first process."""
    return [*argv, "--preserve-fds", "1", names.image, "sh", "-c", LIFELINE]


@dataclass
class ContainerLab(LabContext):
    mount_types: Sequence[MountType]
    on_note: Callable[[str], None] = print
    root: Path = field(default_factory=work_root)
    lab: LabDir | None = None
    image: Image | None = None
    facts: ContainerLabFacts = field(default_factory=ContainerLabFacts)
    _pid: int | None = None
    _lifeline: int | None = None  # the write end of the pipe the container's first process reads (LIFELINE)

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
        self._run_with_lifeline(podman, run_options(lab, self.mount_types))
        pid = podman.run(["inspect", "--format", "{{.State.Pid}}", names.container]).strip()
        self._pid = int(pid) if pid.isdigit() and int(pid) > 0 else None
        if self._pid is None:
            raise PodmanFailed(f"the lab's container did not start (state pid {pid!r})")
        self.facts = self._describe()

    def _run_with_lifeline(self, podman: Podman, argv: list[str]) -> None:
        """``podman run`` of the container, its first process reading a pipe whose write end only this
        process holds (non-inheritable): when mountbench ends, however it ends (``kill -9`` too), that
        process reads end-of-file and exits, and the kernel kills everything else in the container's
        PID namespace with it (the in-container run, its fio). Podman keeps the pipe's read end at
        fd 3 in the container (``--preserve-fds 1``)."""
        assert self.lab is not None
        read_end, self._lifeline = os.pipe()
        at_fd3 = 'exec "$@"' if read_end == 3 else f'exec "$@" 3<&{read_end} {read_end}<&-'
        command = podman.argv(with_lifeline(argv, self.lab.names))
        try:
            done = subprocess.run(["sh", "-c", at_fd3, "sh", *command], env=podman.env, pass_fds=(read_end,),
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=PODMAN_TIMEOUT_S)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise PodmanFailed(f"podman run did not finish within {PODMAN_TIMEOUT_S:.0f} s") from None
        finally:
            os.close(read_end)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise PodmanFailed(f"podman run failed: {last}")

    def _describe(self) -> ContainerLabFacts:
        """The engine, runtime, storage driver and image (the mounts, the other engines and the probe
        come later: labs/containers/rounds.py)."""
        assert self.lab is not None and self.image is not None
        podman = self.lab.podman
        info = podman.run(["info", "--format", "{{.Store.GraphDriverName}}|{{.Host.Security.Rootless}}|"
                           "{{.Host.CgroupManager}}|{{.Host.CgroupsVersion}}"]).strip().split("|")  # fmt: skip
        driver, rootless, cgroups, cgroup_version = ([*info, "", "", "", ""])[:4]
        version = podman.run(["version", "--format", "{{.Client.Version}}"]).strip()
        runtime = subprocess.run([RUNTIME, "--version"], capture_output=True, text=True, timeout=30).stdout
        return ContainerLabFacts(
            engine=f"podman {version}",
            runtime=(runtime.splitlines() or [RUNTIME])[0],
            storage_driver=driver,
            rootless=rootless == "true",
            cgroup_manager=cgroups,
            cgroups=cgroup_version,
            network="none",
            image=self.image.facts(),
        )

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

    # what labs/delegated.py runs a delegated run with: this container is an Inside
    python = sys.executable  # the host's, read-only in the container at its own path
    results_inside = RESULTS

    @property
    def env(self) -> dict[str, str]:
        """The environment every podman command of this lab runs with (its own configuration)."""
        assert self.lab is not None
        return self.lab.podman.env

    def exec_argv(self, argv: Sequence[str], stdin: bool = False) -> list[str]:
        """``podman exec`` of ``argv`` in the container (``stdin``: its standard input kept open)."""
        assert self.lab is not None
        return self.lab.podman.argv(["exec", *(["--interactive"] if stdin else []), self.lab.names.container, *argv])

    def run(self, argv: Sequence[str], setup: Sequence[Sequence[str]], on_line: Callable[[str], None],
            timeout: float | None) -> int:  # fmt: skip
        """Run ``argv`` in the container (after each of ``setup``), each line of its output to ``on_line``;
        its exit status. Ctrl-C stops it (and the lab's close() stops the container)."""
        for step in setup:
            self.exec_output(step)
        proc = procs.spawn(self.exec_argv(argv), env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)  # fmt: skip
        deadline = None if timeout is None else time.monotonic() + timeout

        def line_in_time(line: str) -> None:
            on_line(line)
            if deadline is not None and time.monotonic() > deadline:
                raise InsideTimeout(f"the container's command did not finish within {timeout:.0f} s")

        try:
            procs.stream(proc, line_in_time)  # stdout and stderr apart, line by line
            return proc.wait()
        finally:
            if proc.poll() is None:
                procs.stop_tree(proc, signal.SIGINT)

    def exec_output(self, argv: Sequence[str], timeout: float = 120.0) -> str:
        assert self.lab is not None
        return self.lab.podman.run(["exec", self.lab.names.container, *argv], timeout=timeout)

    def mount_facts(self, mount_types: Sequence[MountType]) -> list[ContainerMount]:
        """Each mount as its type says it is and as the container's mount table shows it: filesystem
        type, source and options."""
        table: dict[str, tuple[str, str, str]] = {}
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.pid}/mountinfo").read_text().splitlines():
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) > 5 and len(tail) > 2:
                    table[fields[4]] = (tail[0], tail[1], f"{fields[5]},{tail[2]}")
        shown = {m.name: table.get(m.path) or table.get("/", ("", "", "")) for m in mount_types}
        return [ContainerMount(m.name, m.path, m.meaning, m.outlives, m.shares, *shown[m.name]) for m in mount_types]

    # --- down -------------------------------------------------------------------------

    def close(self) -> None:
        """Remove the container, volume, image and the lab directory. Idempotent."""
        if self._lifeline is not None:
            os.close(self._lifeline)  # the container's first process ends, and everything in it
            self._lifeline = None
        if self.lab is None:
            return
        problems = self.lab.remove()
        self.lab = None
        if problems:
            raise MountbenchError(f"the container lab could not clean up: {'; '.join(problems)}")
