"""The cloud lab's host side: a remote served in a network namespace of the lab's own, a delay
proxy per RTT, and one rclone mount per (cache mode, RTT), all started here and stopped with the run.

:class:`CloudLab` is a context manager. On entry it first cleans what dead runs left
(state.py), then creates its work directory (``<cache>/mountbench/cloudlab/<id>/``: the
remote's directory, the local baseline, the mount points, rclone's caches, logs, temporary
files and the state record) and its network namespace (netns.py), starts ``rclone serve
webdav``, toxiproxy and the mounts inside it. On exit (success, error, Ctrl-C, SIGTERM) it
unmounts, stops every process at once, removes the namespace and the work directory. If this
process is killed outright, its children die with it (PR_SET_PDEATHSIG) and the next run
unmounts what is left by the state record.

Between samples (:meth:`CloudLab.settle`, :meth:`CloudLab.make_cold`): wait until a mount has
uploaded what it was given, and make a working file one that only the remote has.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from mountbench.errors import MountbenchError
from mountbench.host import process as procs
from mountbench.host.scratch import rename_beneath, unlink_beneath
from mountbench.labs.cloud import state as state_mod
from mountbench.labs.cloud.delay import DelayProxy, MemoryGuard
from mountbench.labs.cloud.matrix import LOCAL, CloudSpec
from mountbench.labs.cloud.mounts import Wire
from mountbench.labs.cloud.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.cloud.rc import RemoteControl
from mountbench.labs.cloud.remote import WebdavRemote, obscure, rclone_binary, rclone_version
from mountbench.labs.cloud.uploaded import not_on_remote
from mountbench.labs.frame import LabContext, refuse
from mountbench.labs.netns import HostLoopback, Network, PortPool, lab_network

MOUNT_WAIT_S = 20.0
SEED_DIR = ".mountbench-cloudlab-seed"  # in each remote directory before its mount starts
SEED_BYTES = 4 * 1024**2
COLD_SUFFIX = ".mountbench-cold"  # a working file's name while it leaves the mount's cache
STOP_GRACE_S = 2.0
TREE_SETTLE_S = 300.0  # the longest a mount's uploads may take to stop moving after the probe
UPLOAD_STALL_S = 20.0  # uploads that have not moved for this long (past the 5 s write-back delay) never will
# with every file the mount shows on the remote, uploads still counted after this long (plus 4 RTTs: rclone's
# answer from the remote) never go up
UPLOAD_QUIET_S = 1.0


def not_isolated(why: str) -> str:
    """What a lab without a network namespace of its own says (``why``: netns.why_not())."""
    return (f"{why}: the cloud lab's servers listen on this machine's loopback; the remote and rclone's remote "
            "controls take only a password this run holds, but toxiproxy's API takes none (any local user could "
            "change the delay)")  # fmt: skip


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
    rc: RemoteControl
    cache: Path  # rclone's --cache-dir for this mount
    error: str | None = None
    stuck_uploads: int = 0  # uploads the probe left that rclone never finishes (settle waits for the rest)

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass
class CloudLab(LabContext):
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
        self.tmp_dir = self.workdir / "tmp"
        self.network: Network = HostLoopback()
        self.ports = PortPool()  # no two listeners of the lab on one port
        self._secret = secrets.token_urlsafe(24)  # the remote's password: only this run holds it
        self._remote: WebdavRemote | None = None
        self._proxy: DelayProxy | None = None
        self._state: state_mod.LabState | None = None
        self._tempdir_before: str | None = None
        self._delay_lock = threading.Lock()  # one restart of the delay at a time (its guard's thread, or ours)
        self.delay_starts = 0  # the delay started afresh before a sample (fresh_delay)
        self.delay_trips = 0  # ... by its memory guard, mid-sample (that sample is void)

    # --- up ---------------------------------------------------------------------------

    def _before_start(self) -> None:
        refuse(lab_problems(modes={spec.mode.name for spec in self.specs}), DOCTOR_FLAG)
        for cleaned in state_mod.sweep_dead_runs(self.root):
            self.on_note(f"cleaned what a dead cloud-lab run left: {cleaned}")

    def _start(self) -> None:
        self.make_workdir()
        self._state = state_mod.LabState(self.workdir)
        self._state.save()
        # temporary files of the workloads (the trees' sources) live in the work directory, so
        # that a killed run's are swept with it (they were left in /tmp before)
        self._tempdir_before, tempfile.tempdir = tempfile.tempdir, str(self.tmp_dir)
        self.tools["rclone"] = rclone_version()
        self.network, why = lab_network(self.workdir / "log" / "netns.log")
        if why:
            self.on_note(not_isolated(why))
        self._remote = WebdavRemote(self.remote_dir, self.workdir / "log" / "serve.log", self.network, self._secret,
                                    self.ports.take())  # fmt: skip
        self._state.add_process(self._remote.start().pid, "rclone serve webdav")
        self._proxy = DelayProxy(self._remote.port, self.workdir / "log" / "toxiproxy.log", self.network, self.ports)
        self._state.add_process(self._proxy.start().pid, "toxiproxy")
        self._proxy.guard = MemoryGuard(self._proxy, on_trip=self._restart_delay).start()
        # the stored facts say how the delay ran (the report's notes show them in every format)
        self.tools["toxiproxy"] = (f"toxiproxy {self._proxy.version()}, no memory limit, started afresh before "
                                   "every sample on a cloud mount")  # fmt: skip
        for spec in self.specs:
            if spec.rtt_ms not in self.wires:
                url = self._proxy.add(f"rtt{spec.rtt_ms}", spec.rtt_ms, spec.bandwidth_kbps)
                self.wires[spec.rtt_ms] = Wire(url, spec.rtt_ms, spec.bandwidth_kbps)
        for spec in self.specs:
            self.mounts.append(self._mount(spec))

    def make_workdir(self) -> None:
        """The lab's directory, private (0700) whatever the umask: the remote, the mounts, rclone's
        caches and the local baseline are nobody else's to read."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.workdir.mkdir(mode=0o700)
        self.workdir.chmod(0o700)
        for d in (self.remote_dir, self.local_dir, self.workdir / "mnt", self.workdir / "cache", self.workdir / "log",
                  self.tmp_dir):  # fmt: skip
            d.mkdir(exist_ok=True)

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
        rc = RemoteControl(self.ports.take(), secrets.token_urlsafe(24), self.network)
        argv = spec.mode.argv(spec.label, wire, mountpoint, cache, log)
        argv[0] = rclone_binary()
        argv += rc.options()
        env = {**os.environ, **rc.env(), "RCLONE_WEBDAV_USER": WebdavRemote.USER,
               "RCLONE_WEBDAV_PASS": obscure(self._secret)}  # fmt: skip
        self._state.add_mount(mountpoint)  # before it exists: a kill in between still gets it unmounted
        proc = procs.start(self.network.argv(argv), log=log, env=env)
        self._state.add_process(proc.pid, f"rclone mount {spec.label}")
        mount = CloudMount(spec, mountpoint, self.remote_dir / spec.label, proc, spec.mode.options(), rc, cache)
        if not state_mod.wait_mounted(mountpoint, MOUNT_WAIT_S, lambda: proc.poll() is None):
            mount.error = f"rclone mount did not come up: {procs.log_tail(log, 3) or f'exit {proc.poll()}'}"
        return mount

    # --- between samples --------------------------------------------------------------

    def mount_for(self, label: str) -> CloudMount | None:
        return next((m for m in self.mounts if m.label == label and m.error is None), None)

    def settle(self, mount: CloudMount, timeout: float) -> str | None:
        """Wait until ``mount`` has uploaded everything written through it; why not, or None."""
        try:
            waited, pending = mount.rc.wait_uploaded(timeout, allowed=mount.stuck_uploads)
        except OSError as exc:
            return f"could not ask {mount.label} about its uploads: {exc}"
        if pending > mount.stuck_uploads:
            return f"{mount.label} still had {pending} file(s) to upload after {waited:.0f} s"
        return None

    def note_stuck_uploads(self, mount: CloudMount, stall: float) -> str | None:
        """After the probe (and again after the tree): wait for ``mount``'s uploads until every file
        the mount shows is on the remote at its size and the count of uploads left has held a moment
        (uploaded.py), until they stop moving for ``stall`` seconds, or until no more are left than
        were found stuck before. What is then left never goes up (rclone keeps a file written in a
        directory renamed before its upload: the probe's files are all removed, but that upload stays
        counted), and later settles wait only for the rest. What was left, or None."""
        quiet = UPLOAD_QUIET_S + 4 * mount.spec.rtt_ms / 1000

        def settled() -> bool:
            return not not_on_remote(mount.path, mount.remote_path)

        try:
            _, pending = mount.rc.wait_uploaded(
                TREE_SETTLE_S, allowed=mount.stuck_uploads, stall=stall, settled=settled, quiet=quiet
            )
        except OSError as exc:
            return f"could not ask {mount.label} about its uploads: {exc}"
        mount.stuck_uploads = pending
        if not pending:
            return None
        return (
            f"{mount.label}: {pending} file(s) the probe wrote never reached the remote (rclone keeps a file "
            "written in a directory renamed before its upload); the samples wait only for their own uploads"
        )

    def note_stuck_uploads_of(self, mounts: Sequence[CloudMount], stall: float) -> list[str]:
        """:meth:`note_stuck_uploads` for every mount at once, one thread each: a mount whose uploads
        stall waits its ``stall`` seconds beside the others, not after them. The notes, in order."""
        notes: dict[str, str | None] = {}
        failed: list[BaseException] = []

        def one(mount: CloudMount) -> None:
            try:
                notes[mount.label] = self.note_stuck_uploads(mount, stall)
            except BaseException as exc:  # handed to the caller's thread below
                failed.append(exc)

        threads = [threading.Thread(target=one, args=(m,), daemon=True, name=f"uploads-{m.label}") for m in mounts]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + TREE_SETTLE_S + 60.0  # each wait is bounded by TREE_SETTLE_S
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if failed:
            raise failed[0]
        return [note for m in mounts if (note := notes.get(m.label))]

    def make_cold(self, mount: CloudMount, scratch: Path) -> str | None:
        """Make every regular file at the top of ``scratch`` (the working files; not dotfiles) one that only the
        remote has, whatever the mount cached of it: renamed through the mount (the cache entry
        follows), linked back under its name on the remote, the renamed one deleted through the
        mount (its cache entry goes), then the mount forgets the directory's listing. Call after
        :meth:`settle`. Why it could not, or None."""
        relative = scratch.relative_to(mount.path)
        remote = mount.remote_path / relative
        try:
            mount.rc.forget(str(relative))  # its listing as the remote has it now
            # dotfiles are the run's own (the scratch directory's marker, held open: never renamed)
            names = [p.name for p in remote.iterdir() if p.is_file() and not p.name.startswith(".")]
            for name in names:
                if (scratch / name).stat().st_size != (remote / name).stat().st_size:
                    return f"{name} differs between {mount.label} and its remote after the uploads"
                aside = name + COLD_SUFFIX
                rename_beneath(scratch, name, aside)  # by descriptor, beneath the scratch directory
                os.link(remote / aside, remote / name)
                unlink_beneath(scratch, aside)
            mount.rc.forget(str(relative))
        except OSError as exc:
            return f"could not make {mount.label}'s working files remote-only: {exc}"
        return None

    def _restart_delay(self, stopped: subprocess.Popen[bytes] | None = None) -> None:
        """The delay again on the same ports, recorded: when ``stopped`` (the process its guard has
        just stopped, which calls this at once) is still the one running, or none is running."""
        with self._delay_lock:
            proxy, state = self._proxy, self._state
            if proxy is None or state is None:
                return
            if proxy.proc is not None and proxy.proc is not stopped and proxy.proc.poll() is None:
                return  # started again already
            state.add_process(proxy.restart().pid, "toxiproxy")

    def fresh_delay(self) -> None:
        """Before a sample on a cloud mount, after every mount's uploads are done (nothing in flight):
        the delay started afresh on the same ports (0.06 s), so every sample meets the same proxy
        and none the memory earlier samples left in it (delay.py). Counted in ``delay_starts``."""
        if self._proxy is None:
            return
        self._restart_delay(self._proxy.proc)
        self.delay_starts += 1

    def evict_cached(self, mount: CloudMount, scratch: Path) -> str | None:
        """Only rclone's cache files of the working files at the top of ``scratch`` leave the page
        cache (written back first): a warm read is then served by rclone's cache from its disk, as
        the local disk's samples read from the disk, and nothing else the page cache holds is
        dropped. Why it could not, or None."""
        relative = scratch.relative_to(mount.path)
        try:
            names = [p.name for p in scratch.iterdir() if p.is_file() and not p.name.startswith(".")]
            for name in names:
                for cached in (mount.cache / "vfs").glob(f"*/{mount.label}/{relative}/{name}"):
                    fd = os.open(cached, os.O_RDONLY)
                    try:
                        os.fdatasync(fd)
                        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    finally:
                        os.close(fd)
        except OSError as exc:
            return f"could not evict {mount.label}'s cache files from the page cache: {exc}"
        return None

    def delay_trouble(self) -> str | None:
        """Why the delay failed the sample just taken (its memory bound tripped; the guard has
        started it again already, or failed to: then it is tried here once more), or None."""
        proxy = self._proxy
        if proxy is None or proxy.guard is None:
            return None
        why, _ = proxy.guard.take()
        if why is None:
            return None
        self.delay_trips += 1
        if proxy.proc is None or proxy.proc.poll() is not None:
            with contextlib.suppress(MountbenchError):
                self._restart_delay()
        return why

    def delay_resident_bytes(self) -> int | None:
        return self._proxy.resident_bytes() if self._proxy is not None else None

    # --- down -------------------------------------------------------------------------

    def close(self) -> None:
        """Unmount, stop every process (all at once), remove the namespace and the work
        directory (unless keep). Idempotent."""
        if self._tempdir_before is not None or tempfile.tempdir == str(self.tmp_dir):
            tempfile.tempdir, self._tempdir_before = self._tempdir_before, None
        for mount in self.mounts:
            if mount.error is None and mount.proc.poll() is None and mount.spec.mode.caches_writes:
                with contextlib.suppress(OSError):
                    pending = mount.rc.pending_uploads()
                    if pending:
                        self.on_note(f"{mount.label}: {pending} file(s) written through the mount were still only in "
                                     "rclone's cache at unmount (not on the remote)")  # fmt: skip
        problems = [why for why in (state_mod.unmount(m.path) for m in self.mounts) if why]
        running = [m.proc for m in self.mounts]
        running += [server.proc for server in (self._proxy, self._remote) if server is not None and server.proc]
        if self._proxy is not None and self._proxy.guard is not None:
            self._proxy.guard.stop()
        stop_all(running)
        for server in (self._proxy, self._remote):
            if server is not None:
                server.proc = None
        self._proxy = self._remote = None
        self.network.close()
        if problems:
            raise MountbenchError(f"the cloud lab could not unmount: {'; '.join(problems)}")
        if not self.keep and self.workdir.exists():
            shutil.rmtree(self.workdir, ignore_errors=True)
        elif self._state is not None:
            with contextlib.suppress(OSError):
                (self.workdir / state_mod.STATE).unlink()

    def listeners(self) -> dict[str, int]:
        """Every TCP port the lab listens on (in its namespace when it has one), by what it is."""
        found: dict[str, int] = {}
        if self._remote is not None:
            found["rclone serve webdav"] = self._remote.port
        if self._proxy is not None:
            found["toxiproxy API"] = self._proxy.api_port
            found |= {f"toxiproxy proxy {p.name}": p.port for p in self._proxy.proxies}
        found |= {f"rclone rc of {m.label}": m.rc.port for m in self.mounts}
        return found

    def seed(self, mount: CloudMount) -> Path:
        """The seed file as the mount shows it."""
        return mount.path / SEED_DIR / "seed.bin"

    def serving_pids(self, label: str) -> list[int]:
        """The processes serving one target: its rclone mount and the rclone serving the remote."""
        pids = [m.proc.pid for m in self.mounts if m.label == label and m.proc.poll() is None]
        if pids and self._remote is not None and self._remote.proc is not None:
            pids.append(self._remote.proc.pid)
        return pids


def stop_all(running: Sequence[subprocess.Popen[bytes]]) -> None:
    """Stop every process at once (each with its descendants), so that stopping the lab takes one
    grace period, not one per process."""
    threads = [threading.Thread(target=procs.stop_tree, args=(p,), kwargs={"grace_s": STOP_GRACE_S}, daemon=True)
               for p in running]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=3 * STOP_GRACE_S)
