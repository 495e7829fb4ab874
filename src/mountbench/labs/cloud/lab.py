"""The cloud lab's host side: a remote served on loopback, a delay proxy per RTT, and one
rclone mount per (cache mode, RTT), all started here and stopped with the run.

:class:`CloudLab` is a context manager. On entry it first cleans what dead runs left
(state.py), then creates its work directory (``<cache>/mountbench/cloudlab/<id>/``: the
remote's directory, the local baseline, the mount points, rclone's caches, logs and the
state record), starts ``rclone serve webdav``, toxiproxy and the mounts. On exit (success,
error, Ctrl-C) it unmounts, stops every process and removes the work directory. If this
process is killed outright, its children die with it (PR_SET_PDEATHSIG) and the next run
unmounts what is left by the state record.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import platformdirs

from mountbench.errors import MountbenchError
from mountbench.host import process as procs
from mountbench.labs.cloud import state as state_mod
from mountbench.labs.cloud.delay import DelayProxy
from mountbench.labs.cloud.matrix import LOCAL, CloudSpec
from mountbench.labs.cloud.mounts import Wire
from mountbench.labs.cloud.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.cloud.remote import WebdavRemote, rclone_binary, rclone_version
from mountbench.labs.frame import refuse

MOUNT_WAIT_S = 20.0
SEED_DIR = ".mountbench-cloudlab-seed"  # in each remote directory before its mount starts
SEED_BYTES = 4 * 1024**2


def work_root() -> Path:
    return Path(platformdirs.user_cache_dir("mountbench")) / "cloudlab"


@dataclass
class CloudMount:
    """One running rclone mount: a target of the run."""

    spec: CloudSpec
    path: Path  # the mount point
    remote_path: Path  # the same directory as the remote stores it
    proc: subprocess.Popen[bytes]
    options: tuple[str, ...]
    error: str | None = None

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass
class CloudLab:
    specs: Sequence[CloudSpec]
    keep: bool = False
    on_note: Callable[[str], None] = print
    root: Path = field(default_factory=work_root)
    mounts: list[CloudMount] = field(default_factory=list)
    wires: dict[int, Wire] = field(default_factory=dict)
    tools: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workdir = self.root / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        self.remote_dir = self.workdir / "remote"
        self.local_dir = self.workdir / LOCAL
        self._remote: WebdavRemote | None = None
        self._proxy: DelayProxy | None = None
        self._state: state_mod.LabState | None = None

    # --- up ---------------------------------------------------------------------------

    def __enter__(self) -> CloudLab:
        refuse(lab_problems(modes={spec.mode.name for spec in self.specs}), DOCTOR_FLAG)
        for cleaned in state_mod.sweep_dead_runs(self.root):
            self.on_note(f"cleaned what a dead cloud-lab run left: {cleaned}")
        for d in (self.remote_dir, self.local_dir, self.workdir / "mnt", self.workdir / "cache", self.workdir / "log"):
            d.mkdir(parents=True, exist_ok=True)
        self._state = state_mod.LabState(self.workdir)
        self._state.save()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        assert self._state is not None
        self.tools["rclone"] = rclone_version()
        self._remote = WebdavRemote(self.remote_dir, self.workdir / "log" / "serve.log")
        self._state.add_process(self._remote.start().pid, "rclone serve webdav")
        self._proxy = DelayProxy(self._remote.port, self.workdir / "log" / "toxiproxy.log")
        self._state.add_process(self._proxy.start().pid, "toxiproxy")
        self.tools["toxiproxy"] = f"toxiproxy {self._proxy.version()}"
        for spec in self.specs:
            if spec.rtt_ms not in self.wires:
                url = self._proxy.add(f"rtt{spec.rtt_ms}", spec.rtt_ms, spec.bandwidth_kbps)
                self.wires[spec.rtt_ms] = Wire(url, spec.rtt_ms, spec.bandwidth_kbps)
        for spec in self.specs:
            self.mounts.append(self._mount(spec))

    def _mount(self, spec: CloudSpec) -> CloudMount:
        assert self._state is not None
        (self.remote_dir / spec.label).mkdir()
        # a file only the remote has: the probe's first reads of it must cross the wire
        (self.remote_dir / spec.label / SEED_DIR).mkdir()
        (self.remote_dir / spec.label / SEED_DIR / "seed.bin").write_bytes(os.urandom(SEED_BYTES))
        mountpoint = self.workdir / "mnt" / spec.label
        mountpoint.mkdir()
        cache = self.workdir / "cache" / spec.label
        log = self.workdir / "log" / f"mount-{spec.label}.log"
        wire = self.wires[spec.rtt_ms]
        argv = spec.mode.argv(spec.label, wire, mountpoint, cache, log)
        argv[0] = rclone_binary()
        self._state.add_mount(mountpoint)  # before it exists: a kill in between still gets it unmounted
        proc = procs.start(argv, log=log)
        self._state.add_process(proc.pid, f"rclone mount {spec.label}")
        mount = CloudMount(spec, mountpoint, self.remote_dir / spec.label, proc, spec.mode.options())
        if not state_mod.wait_mounted(mountpoint, MOUNT_WAIT_S, lambda: proc.poll() is None):
            mount.error = f"rclone mount did not come up: {procs.log_tail(log, 3) or f'exit {proc.poll()}'}"
        return mount

    # --- down -------------------------------------------------------------------------

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Unmount, stop every process, remove the work directory (unless keep). Idempotent."""
        problems = []
        for mount in self.mounts:
            why = state_mod.unmount(mount.path)  # rclone mount exits when unmounted
            if why:
                problems.append(why)
            procs.stop_tree(mount.proc)
        for server in (self._proxy, self._remote):
            if server is not None:
                server.stop()
        self._proxy = self._remote = None
        if problems:
            raise MountbenchError(f"the cloud lab could not unmount: {'; '.join(problems)}")
        if not self.keep and self.workdir.exists():
            shutil.rmtree(self.workdir, ignore_errors=True)
        elif self._state is not None:
            with contextlib.suppress(OSError):
                (self.workdir / state_mod.STATE).unlink()

    def seed(self, mount: CloudMount) -> Path:
        """The seed file as the mount shows it."""
        return mount.path / SEED_DIR / "seed.bin"

    def serving_pids(self, label: str) -> list[int]:
        """The processes serving one target: its rclone mount and the rclone serving the remote."""
        pids = [m.proc.pid for m in self.mounts if m.label == label and m.proc.poll() is None]
        if pids and self._remote is not None and self._remote.proc is not None:
            pids.append(self._remote.proc.pid)
        return pids
