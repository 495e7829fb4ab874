"""The lab guest's life: prepare the host side, boot, run commands, tear everything down.

    with Guest(DEFAULT_MOUNTS, accel="auto") as guest:
        for m in guest.mounts:
            print(m.label, m.guest_path, m.mount_options)
        rc = guest.run_in_guest("fio --name=x --directory=/mnt/9p ...", on_line=print)
        data = (guest.results_path / "out.json").read_text()

Every process started here (QEMU, each virtiofsd, each sshd and its session
children) is stopped when the block ends, however it ends, and dies with the
Python thread that started it if Python itself is killed. The lab work dir is
removed unless keep=True; one left by a killed lab is swept by the next lab.
Python orchestrates only: nothing it does is timed.
"""

from __future__ import annotations

import contextlib
import queue
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from mountbench.errors import ToolMissing, UsageError
from mountbench.host import process as procs
from mountbench.labfacts import GuestMountFacts, QemuLabFacts
from mountbench.labs import leftovers
from mountbench.labs.frame import LabContext, start_daemon
from mountbench.labs.netns import Namespace, private_network
from mountbench.labs.netns import why_not as network_why_not
from mountbench.labs.qemu.accel import AccelChoice, probe_accel
from mountbench.labs.qemu.console import Console, ConsoleLine
from mountbench.labs.qemu.faults import BootError, GuestError, GuestTimeout, likely_cause
from mountbench.labs.qemu.initramfs import build_initramfs, init_script
from mountbench.labs.qemu.kernel import Kernel, find_kernel
from mountbench.labs.qemu.mounts.guestmount import MountSpec
from mountbench.labs.qemu.mountscript import (
    GUEST_RESULTS,
    GuestMount,
    assign_slugs,
    mount_command,
    mount_script,
)
from mountbench.labs.qemu.mountspec import DEFAULT_MOUNTS
from mountbench.labs.qemu.qemu import (
    QEMU,
    Device,
    QemuConfig,
    Share9p,
    UserNet,
    VhostUserFs,
    kernel_cmdline,
    qemu_argv,
)
from mountbench.labs.qemu.virtiofsd import find_virtiofsd
from mountbench.units import parse_size

LineCallback = Callable[[str], None]

BOOT_TIMEOUT_TCG = 240.0
BOOT_TIMEOUT_KVM = 90.0
SHUTDOWN_TIMEOUT = 30.0
_SUN_PATH_MAX = 100  # AF_UNIX paths are limited to 108 bytes; keep a margin


@dataclass
class BootTimes:
    """Wall-clock seconds of the lab's phases (host clock, time.monotonic)."""

    prepare_s: float = 0.0  # start() called -> QEMU started (probe, initramfs, daemons, images)
    kernel_s: float | None = None  # QEMU started -> guest init running
    root_s: float | None = None  # QEMU started -> host root mounted in the guest
    ready_s: float | None = None  # QEMU started -> every mount ready
    first_command_s: float | None = None  # QEMU started -> the first command starting
    shutdown_s: float | None = None  # close() called -> everything stopped


@dataclass
class CommandRun:
    """One run_in_guest() call, timed on the host between the guest's markers."""

    id: str
    command: str
    returncode: int | None = None
    seconds: float | None = None  # guest "start" marker -> "done" marker


@dataclass
class _Daemon:
    name: str  # its role in serving_processes
    proc: subprocess.Popen[bytes]
    slug: str | None  # the mount it serves (None: the root)
    log: Path
    stop_with: Callable[[], None] | None = None  # how to stop it, when more than its process tree

    def stop(self) -> None:
        if self.stop_with is not None:
            self.stop_with()
        else:
            procs.stop_tree(self.proc)


@dataclass
class _MountHost:
    """The MountHost a mount type wires one mount's host side through (see labs/qemu/mounts/base.py)."""

    guest: Guest
    mount: GuestMount
    index: int

    @property
    def lab_dir(self) -> Path:
        assert self.guest.lab_dir is not None
        return self.guest.lab_dir

    @property
    def control_dir(self) -> Path:
        return self.lab_dir / "ctl"

    @property
    def logs_dir(self) -> Path:
        return self.lab_dir / "logs"

    @property
    def virtiofsd(self) -> str:
        return self.guest.virtiofsd

    def mount_dir(self) -> Path:
        path = self.lab_dir / "mounts" / self.mount.slug
        path.mkdir()
        return path

    def image_path(self, name: str) -> Path:
        return self.lab_dir / "images" / name

    def socket_path(self, name: str) -> Path:
        assert self.guest._sock_dir is not None
        return self.guest._sock_dir / name

    def start_daemon(
        self,
        role: str,
        argv: list[str],
        log: Path,
        *,
        ready: Callable[[], bool],
        failure: str,
        timeout: float = 10.0,
    ) -> subprocess.Popen[bytes]:
        return self.guest._start_daemon(role, argv, log, self.mount.slug, ready=ready, failure=failure, timeout=timeout)

    def adopt_daemon(
        self,
        role: str,
        proc: subprocess.Popen[bytes],
        log: Path,
        stop: Callable[[], None] | None = None,
    ) -> None:
        self.guest._adopt(role, proc, log, self.mount.slug, stop)

    def network_prefix(self) -> list[str]:
        return self.guest._net.argv([]) if self.guest._net is not None else []

    def listening(self, port: int) -> bool:
        return self.guest._net.listening(port) if self.guest._net is not None else procs.port_open(port)

    def network_reach(self) -> str:
        if self.guest._net is not None:
            return "in the lab's own network namespace: no one else reaches it"
        return f"on the host's loopback: every local user reaches it ({self.guest.network_note})"


@dataclass(eq=False, repr=False)
class Guest(LabContext):
    """A throwaway QEMU guest exposing one host directory per MountSpec.

    Args:
        specs: the mounts under test (default: DEFAULT_MOUNTS).
        workdir: parent directory for the lab work dir (default: the system temp
            dir). The host directories under test live there, so its filesystem
            is what 9p, virtiofs and sshfs serve.
        cpus, memory: guest size (memory as `1G`, `512M` or bytes).
        accel: `auto` | `kvm` | `tcg`, or a ready AccelChoice.
        kernel: a bzImage (default: the newest /boot/vmlinuz-* with modules).
        keep: keep the lab work dir (images, sockets, keys, logs) afterwards.
        root: how the guest gets the host root: `auto` (virtiofs when a Rust
            virtiofsd is available, else 9p), `9p` or `virtiofs`.
        virtiofsd: `auto` | `rust` | `qemu` or a path: the daemon for virtiofs mounts.
        results_dir: host directory shared writable at /results (default: inside
            the work dir, removed with it unless keep=True).
        boot_timeout: seconds to wait for the guest to be ready.
        on_console: called with every console line (boot included), in the
            calling thread.
        kernel_args: extra guest kernel command-line arguments.
    """

    specs: Sequence[MountSpec] = DEFAULT_MOUNTS
    workdir: Path | str | None = None
    cpus: int = 2
    memory: str | int = "1G"
    accel: str | AccelChoice = "auto"
    kernel: str | Path | None = None
    keep: bool = False
    root: str = "auto"
    virtiofsd: str = "auto"
    results_dir: Path | str | None = None
    boot_timeout: float | None = None
    on_console: LineCallback | None = None
    kernel_args: Sequence[str] = ()

    # state, filled by start()
    mounts: list[GuestMount] = field(default_factory=list, init=False)
    accel_choice: AccelChoice | None = field(default=None, init=False)
    kernel_info: Kernel | None = field(default=None, init=False)
    root_transport: str = field(default="", init=False)
    root_server: str = field(default="", init=False)
    lab_dir: Path | None = field(default=None, init=False)
    times: BootTimes = field(default_factory=BootTimes, init=False)
    commands: list[CommandRun] = field(default_factory=list, init=False)
    qemu_argv: list[str] = field(default_factory=list, init=False)
    started_pids: list[int] = field(default_factory=list, init=False)  # every process started

    def __post_init__(self) -> None:
        self.specs = tuple(self.specs)
        if self.root not in ("auto", "9p", "virtiofs"):
            raise UsageError(f"root={self.root!r} is not valid; use auto, 9p or virtiofs")
        if self.cpus < 1:
            raise UsageError(f"--cpus {self.cpus} is not valid; use 1 or more")
        mem = self.memory if isinstance(self.memory, int) else _size(self.memory, "--memory")
        if mem < 256 << 20:
            raise UsageError(f"--memory {self.memory} is too small; use at least 256M")
        self._memory_mib = mem >> 20
        self._qemu: subprocess.Popen[bytes] | None = None
        self._net: Namespace | None = None  # the lab's own network namespace, when it has one
        self.network_note = ""  # why it has none (when a mount needs the network)
        self._results: Path | None = None
        self._console: Console | None = None
        self._ctl: socket.socket | None = None
        self._daemons: list[_Daemon] = []
        self._sock_dir: Path | None = None
        self._t_qemu: float = 0.0
        # new -> starting -> ready <-> busy -> closed; broken after a timeout or death.
        # A guest left busy (an interrupted command) is stopped, not asked to exit.
        self._state = "new"
        self._events: list[str] = []

    def __repr__(self) -> str:
        mounts = ", ".join(m.slug for m in self.mounts) or ", ".join(s.slug for s in self.specs)
        return f"<Guest {self._state} root={self.root_transport or self.root} mounts=[{mounts}] dir={self.lab_dir}>"

    # ----- context manager -------------------------------------------------

    # LabContext's: ``with Guest(...) as guest`` starts it (start()) and closes it

    # ----- public API ------------------------------------------------------

    @property
    def results_path(self) -> Path:
        """The host directory behind the guest's /results."""
        assert self._results is not None, "start() first"
        return self._results

    @property
    def guest_results(self) -> str:
        return GUEST_RESULTS

    @property
    def qemu_pid(self) -> int | None:
        return self._qemu.pid if self._qemu is not None else None

    @property
    def ready(self) -> bool:
        return self._state == "ready"

    def mount(self, key: MountSpec | str) -> GuestMount:
        """The GuestMount for a spec, a slug or a label."""
        for m in self.mounts:
            if key in (m.spec, m.slug, m.label):
                return m
        raise KeyError(key)

    def host_dir(self, key: MountSpec | str) -> Path | None:
        """The host directory (or disk image) behind a mount; None for guest-tmpfs."""
        return self.mount(key).host_path

    def serving_processes(self, key: MountSpec | str) -> dict[str, list[int]]:
        """Host PIDs doing the work for one mount, by role, as of now (for psutil sampling).

        QEMU is always there (it runs the guest, 9p and virtio-blk); each daemon
        the mount's type started is there under its role, with its children: a
        virtiofsd and its sandbox child; sshd with its session children and
        sftp-server, which appear once the guest has connected.
        """
        m = self.mount(key)
        roles: dict[str, list[int]] = {}
        if self._qemu is not None and self._qemu.poll() is None:
            roles["qemu"] = [self._qemu.pid]
        for d in self._daemons:
            if d.slug == m.slug and d.proc.poll() is None:
                roles[d.name] = procs.tree_pids(d.proc.pid)
        return roles

    def all_pids(self) -> list[int]:
        """Every live host process this lab started (and their children)."""
        pids: list[int] = []
        for p in self._all_procs():
            if p.poll() is None:
                pids += procs.tree_pids(p.pid)
        return pids

    def describe(self) -> QemuLabFacts:
        """The lab's environment, for the run record."""
        accel = self.accel_choice
        return QemuLabFacts(
            accel=accel.accel if accel else None,
            accel_reason=accel.reason if accel else None,
            emulated=accel.emulated if accel else None,
            kernel=self.kernel_info.version if self.kernel_info else None,
            kernel_image=str(self.kernel_info.image) if self.kernel_info else None,
            qemu=qemu_version(),
            cpus=self.cpus,
            memory_mib=self._memory_mib,
            root=self.root_transport,
            root_server=self.root_server,
            boot=vars(self.times).copy(),
            mounts=tuple(self._mount_facts(m) for m in self.mounts),
        )

    @staticmethod
    def _mount_facts(m: GuestMount) -> GuestMountFacts:
        host_path = str(m.host_path) if m.host_path else None
        return GuestMountFacts(m.label, m.spec.spec_text, m.slug, m.guest_path, host_path, m.served_by, m.proc_mounts,
                               dict(m.extra))  # fmt: skip

    def console_tail(self, n: int = 25) -> list[str]:
        return self._console.tail(n) if self._console is not None else []

    # ----- start -----------------------------------------------------------

    def start(self) -> None:
        """Prepare the host side, boot the guest and wait until every mount is ready; a failed
        start closes what it began (as ``with Guest(...)`` does)."""
        self.__enter__()

    def _before_start(self) -> None:
        if self._state != "new":
            raise GuestError("this Guest was already started; make a new one")
        self._state = "starting"

    def _start(self) -> None:
        t0 = time.monotonic()
        self._prepare()
        self.times.prepare_s = time.monotonic() - t0
        self._boot()

    def _prepare(self) -> None:
        if shutil.which(QEMU) is None:
            raise ToolMissing(f"{QEMU} is missing; run: apt-get install qemu-system-x86")
        self.kernel_info = find_kernel(self.kernel)
        self.accel_choice = (
            self.accel if isinstance(self.accel, AccelChoice) else probe_accel(self.accel, self.kernel_info)
        )
        initrd = build_initramfs(self.kernel_info)
        parent = Path(self.workdir) if self.workdir is not None else Path(tempfile.gettempdir())
        parent.mkdir(parents=True, exist_ok=True)
        sweep_stale_guest_dirs(parent)
        self.lab_dir = Path(tempfile.mkdtemp(prefix=LAB_PREFIX, dir=parent))
        lab = self.lab_dir
        me = psutil.Process()
        (lab / OWNER_FILE).write_text(f"{me.pid} {me.create_time()} {'keep' if self.keep else 'remove'}\n")
        ctl, logs = lab / "ctl", lab / "logs"
        for d in (ctl, logs, lab / "mounts", lab / "images"):
            d.mkdir()
        self._results = Path(self.results_dir) if self.results_dir else lab / "results"
        self._results.mkdir(parents=True, exist_ok=True)
        self._sock_dir = lab / "sock"
        if len(str(self._sock_dir / "virtiofs-root.sock")) > _SUN_PATH_MAX:
            self._sock_dir = Path(tempfile.mkdtemp(prefix="mb-lab-"))
        else:
            self._sock_dir.mkdir()
        (ctl / "init.sh").write_bytes(init_script())

        devices: list[Device] = []
        devices.append(self._root_device(logs))
        devices.append(Share9p("mbctl", ctl, "none", readonly=True))
        devices.append(Share9p("mbres", self._results, "none"))

        commands: list[str] = []
        helpers: list[str] = []
        need_net = False
        if any(spec.mount_type.needs_network for spec in self.specs):
            # QEMU and the servers its guest reaches at 10.0.2.2 in a network namespace of their own
            outside = [why for spec in self.specs if (why := spec.mount_type.outside_network(spec))]
            self.network_note = "; ".join(outside) or network_why_not()
            if not self.network_note:
                self._net = private_network(logs / "netns.log")
                self.started_pids.append(self._net.holder.pid)
        for index, (spec, slug) in enumerate(assign_slugs(self.specs)):
            m = GuestMount(spec, slug, tag=f"mb{index}")
            self.mounts.append(m)
            mount_type = spec.mount_type
            devices += mount_type.attach(m, _MountHost(self, m, index))
            commands.append(mount_command(m))
            helpers.append(mount_type.guest_helpers)
            need_net = need_net or mount_type.needs_network
        if need_net:
            devices.append(UserNet())
        (ctl / "mounts.sh").write_text(mount_script(commands, helpers))

        self._cfg = QemuConfig(
            kernel=self.kernel_info.image,
            initrd=initrd,
            control_socket=self._sock_dir / "control.sock",
            accel_args=self.accel_choice.qemu_args,
            cpus=self.cpus,
            memory_mib=self._memory_mib,
            append=kernel_cmdline(self.root_transport, net=need_net, extra=tuple(self.kernel_args)),
            devices=tuple(devices),
        )
        self.qemu_argv = self._net.argv(qemu_argv(self._cfg)) if self._net is not None else qemu_argv(self._cfg)
        (lab / "qemu.cmdline").write_text(" ".join(self.qemu_argv) + "\n")

    def _root_device(self, logs: Path) -> Device:
        """The host root, read-only: Rust virtiofsd --readonly, else 9p readonly=on."""
        rust = find_virtiofsd("rust") if self.root in ("auto", "virtiofs") else None
        if self.root == "virtiofs" and rust is None:
            raise ToolMissing(
                "root=virtiofs needs the Rust virtiofsd (it has --readonly); "
                "run: cargo install virtiofsd (or use root=9p)"
            )
        if rust is not None:
            assert self._sock_dir is not None
            sock = self._sock_dir / "virtiofs-root.sock"
            argv = rust.argv(
                sock, Path("/"), cache="always", readonly=True, sandbox="none",
                announce_submounts=False,
            )  # fmt: skip
            self._start_daemon(
                "virtiofsd", argv, logs / "virtiofsd-root.log", None,
                ready=sock.exists, failure="virtiofsd for the root did not create its socket",
            )  # fmt: skip
            self.root_transport = "virtiofs"
            self.root_server = f"{rust.description} --readonly --cache=always"
            return VhostUserFs("mbroot", sock)
        self.root_transport = "9p"
        self.root_server = "qemu 9p readonly=on (guest: cache=loose, ro)"
        return Share9p("mbroot", Path("/"), "passthrough", readonly=True, multidevs_remap=True)

    def _start_daemon(
        self,
        role: str,
        argv: list[str],
        log: Path,
        slug: str | None,
        *,
        ready: Callable[[], bool],
        failure: str,
        timeout: float = 10.0,
    ) -> subprocess.Popen[bytes]:
        return start_daemon(argv, log, ready=ready, failure=failure, timeout=timeout,
                            started=lambda proc: self._adopt(role, proc, log, slug),
                            error=lambda why: BootError(f"{why}; see {log}"))  # fmt: skip

    def _adopt(
        self,
        role: str,
        proc: subprocess.Popen[bytes],
        log: Path,
        slug: str | None,
        stop: Callable[[], None] | None = None,
    ) -> None:
        self._daemons.append(_Daemon(role, proc, slug, log, stop))
        self.started_pids.append(proc.pid)

    # ----- boot ------------------------------------------------------------

    def _boot(self) -> None:
        assert self.lab_dir is not None and self.accel_choice is not None
        logs = self.lab_dir / "logs"
        self._t_qemu = time.monotonic()
        self._qemu = procs.start(self.qemu_argv, stdout=subprocess.PIPE, log=logs / "qemu.log")
        self.started_pids.append(self._qemu.pid)
        assert self._qemu.stdout is not None
        self._console = Console(self._qemu, logs / "console.log")
        timeout = self.boot_timeout or (BOOT_TIMEOUT_TCG if self.accel_choice.emulated else BOOT_TIMEOUT_KVM)
        deadline = self._t_qemu + timeout
        by_slug = {m.slug: m for m in self.mounts}
        while True:
            line = self._next_line(deadline)
            if line is None:
                raise self._boot_error(f"the guest did not become ready within {timeout:.0f} s")
            if line is _EOF:
                raise self._boot_error("QEMU exited before the guest was ready", exited=True)
            assert isinstance(line, ConsoleLine)
            ev = line.event
            if ev is None:
                continue
            self._events.append(ev)
            since = line.t - self._t_qemu
            if ev == "init":
                self.times.kernel_s = since
            elif ev == "root-ready":
                self.times.root_s = since
            elif ev == "mounted":
                slug, _, rest = line.args.partition(" ")
                if slug in by_slug:
                    by_slug[slug].proc_mounts = rest.strip()
            elif ev == "mount-failed":
                slug, _, rest = line.args.partition(" ")
                if slug in by_slug:
                    by_slug[slug].guest_error = rest.strip() or "mount failed"
            elif ev == "fatal":
                raise self._boot_error(f"guest init failed: {line.args}")
            elif ev == "ready":
                self.times.ready_s = since
                break
        failed = [m for m in self.mounts if m.guest_error or not m.proc_mounts]
        if failed:
            detail = "; ".join(f"{m.label}: {m.guest_error or 'not mounted'}" for m in failed)
            raise BootError(
                f"the guest could not mount {detail}{self._where()}",
                self.console_tail(15),
            )
        self._ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._ctl.connect(str(self._cfg.control_socket))
        self._state = "ready"

    def _next_line(self, deadline: float | None) -> ConsoleLine | object | None:
        """The next console line (passed to on_console), _EOF, or None at the deadline."""
        assert self._console is not None
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            line = self._console.lines.get(timeout=wait)
        except queue.Empty:
            return None
        if line is None:
            return _EOF
        if self.on_console is not None:
            self.on_console(_raw(line))
        return line

    def _boot_error(self, message: str, exited: bool = False) -> BootError:
        assert self.accel_choice is not None
        if exited and self._qemu is not None:  # stdout closed: QEMU is exiting
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._qemu.wait(timeout=5)
        qemu_log = ""
        if self.lab_dir is not None and self._qemu is not None and self._qemu.poll() is not None:
            qemu_log = procs.log_tail(self.lab_dir / "logs" / "qemu.log", 5)
        cause = likely_cause(
            self.console_tail(40),
            accel=self.accel_choice.accel,
            root=self.root_transport,
            qemu_log=qemu_log,
            events=self._events,
        )
        return BootError(f"{message}; likely cause: {cause}{self._where()}", self.console_tail(15))

    def _where(self) -> str:
        if self.keep:
            return f"; logs kept in {self.lab_dir}"
        return "; keep the lab (keep=True, --keep-guest) to read its logs"

    # ----- commands --------------------------------------------------------

    def run_in_guest(
        self,
        command: str,
        on_line: LineCallback | None = None,
        timeout: float | None = None,
    ) -> int:
        """Run `command` with the host's /bin/sh inside the guest; return its exit status.

        The command runs in the chroot of the host's root (so host binaries work),
        from /, with stdin from /dev/null and stdout+stderr merged, not a tty.
        Each output line goes to `on_line` as it arrives. On timeout the guest is
        stopped and GuestTimeout raised (the Guest is then unusable). The command
        ends when its output closes: a process it leaves in the background must
        redirect its output. Files meant for the host go to /results.
        """
        if self._state != "ready":
            raise GuestError(f"the guest is not ready (state: {self._state})")
        assert self.lab_dir is not None and self._ctl is not None
        cmd_id = f"c{len(self.commands) + 1}-{secrets.token_hex(4)}"
        run = CommandRun(cmd_id, command)
        self.commands.append(run)
        script = self.lab_dir / "ctl" / f"cmd-{cmd_id}.sh"
        script.write_text(command.rstrip("\n") + "\n")
        while self._console is not None and not self._console.lines.empty():
            if self._next_line(0) is _EOF:
                raise self._dead("QEMU exited while the guest was idle")
        self._state = "busy"  # stays so if this call ends with an exception
        self._ctl.sendall(f"run {cmd_id}\n".encode())
        deadline = None if timeout is None else time.monotonic() + timeout
        t_start: float | None = None
        while True:
            line = self._next_line(deadline)
            if line is None:
                self._state = "broken"
                tail = self.console_tail(15)
                self._stop_qemu(grace=2.0)
                raise GuestTimeout(f"the guest command did not finish within {timeout} s", tail)
            if line is _EOF:
                raise self._dead("QEMU exited during the command")
            assert isinstance(line, ConsoleLine)
            if t_start is None:
                if line.event == "start" and line.args == cmd_id:
                    t_start = line.t
                    if self.times.first_command_s is None:
                        self.times.first_command_s = t_start - self._t_qemu
                continue  # console lines before our start marker are not ours
            if line.event == "done" and line.args.split()[0] == cmd_id:
                if line.text and on_line is not None:
                    on_line(line.text)
                run.returncode = int(line.args.split()[1])
                run.seconds = line.t - t_start
                script.unlink(missing_ok=True)
                self._state = "ready"
                return run.returncode
            if on_line is not None:
                on_line(_raw(line))

    def send_to_command(self, line: str) -> None:
        """Send one line to the command running now (run_in_guest, from another thread): it
        arrives on the guest's /dev/ttyS1, the lab's control channel, which the command may
        open and read (the probe agent does). The guest's own loop reads that channel only
        between commands, so nothing may be sent once the command has ended."""
        if "\n" in line:
            raise ValueError("one line at a time")
        if self._state != "busy" or self._ctl is None:
            raise GuestError(f"no command is running in the guest (state: {self._state})")
        self._ctl.sendall(line.encode() + b"\n")

    def _dead(self, message: str) -> GuestError:
        self._state = "broken"
        return GuestError(f"{message}{self._where()}", self.console_tail(15))

    # ----- teardown --------------------------------------------------------

    def _all_procs(self) -> list[subprocess.Popen[bytes]]:
        out = [self._qemu] if self._qemu is not None else []
        out += [d.proc for d in self._daemons]
        return out

    def _stop_qemu(self, grace: float) -> None:
        if self._qemu is not None and self._qemu.poll() is None:
            procs.stop_tree(self._qemu, grace_s=grace)

    def close(self) -> None:
        """Stop everything this lab started and remove its work dir (unless keep).

        Safe to call more than once, and a Ctrl-C during the teardown does not
        stop it half-way: the interrupt is re-raised once everything is down.
        """
        if self._state == "closed":
            return
        t0 = time.monotonic()
        interrupted: BaseException | None = None
        steps: list[Callable[[], None]] = [
            self._graceful_shutdown,
            lambda: self._stop_qemu(grace=5.0),
            *[d.stop for d in self._daemons],
            lambda: self._net.close() if self._net is not None else None,
            self._close_channels,
            self._remove_files,
        ]
        for step in steps:
            try:
                step()
            except KeyboardInterrupt as exc:
                interrupted = exc
            except Exception:  # teardown goes on whatever one step does
                continue
        self._state = "closed"
        self.times.shutdown_s = time.monotonic() - t0
        if interrupted is not None:
            raise interrupted

    def _graceful_shutdown(self) -> None:
        """Ask a ready guest to unmount and power off; fall back to stopping QEMU."""
        if self._state != "ready" or self._ctl is None or self._qemu is None:
            return
        with contextlib.suppress(OSError):
            self._ctl.sendall(b"exit\n")
            deadline = time.monotonic() + SHUTDOWN_TIMEOUT
            while self._qemu.poll() is None and time.monotonic() < deadline:
                if self._next_line(min(deadline, time.monotonic() + 0.5)) is _EOF:
                    break
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._qemu.wait(timeout=max(0.1, deadline - time.monotonic()))

    def _close_channels(self) -> None:
        if self._ctl is not None:
            with contextlib.suppress(OSError):
                self._ctl.close()
        if self._console is not None:
            self._console.join(timeout=5.0)

    def _remove_files(self) -> None:
        outside = self.lab_dir is None or not (
            self._sock_dir is not None and self._sock_dir.is_relative_to(self.lab_dir)
        )
        if self._sock_dir is not None and outside:
            shutil.rmtree(self._sock_dir, ignore_errors=True)
        if self.lab_dir is not None and not self.keep:
            shutil.rmtree(self.lab_dir, ignore_errors=True)


_EOF = object()
LAB_PREFIX = "mountbench-lab-"
OWNER_FILE = "owner"


@dataclass(frozen=True)
class StaleGuestDir:
    """A lab work directory as its owner file tells it: which process made it, and when."""

    path: Path
    pid: int
    started: float

    @classmethod
    def read(cls, path: Path) -> StaleGuestDir | None:
        """None for a directory that is not a lab's, has no owner file yet, or was kept on purpose."""
        if not path.name.startswith(LAB_PREFIX):
            return None
        try:
            pid_text, started, mode = (path / OWNER_FILE).read_text().split()
            return None if mode == "keep" else cls(path, int(pid_text), float(started))
        except (OSError, ValueError):
            return None

    def owner_alive(self) -> bool:
        return leftovers.alive(self.pid, self.started)

    def remove(self) -> list[str]:
        shutil.rmtree(self.path, ignore_errors=True)
        return []


def sweep_stale_guest_dirs(parent: Path) -> list[Path]:
    """Remove lab work dirs left by a lab whose process was killed (kill -9, power loss).

    Only directories with an owner file naming a process that no longer exists
    and that were not kept on purpose (keep=True) are removed.
    """
    return [path for path, _ in leftovers.sweep_dead(parent, StaleGuestDir.read)]


def _raw(line: ConsoleLine) -> str:
    if line.event is None:
        return line.text
    return f"{line.text}MB-LAB {line.event}" + (f" {line.args}" if line.args else "")


def _size(text: str, what: str) -> int:
    try:
        return parse_size(text)
    except UsageError:
        raise UsageError(f"{what} {text!r} is not a size; use e.g. 1G or 512M") from None


def qemu_version(qemu: str = QEMU) -> str | None:
    """QEMU's version line, e.g. `QEMU emulator version 7.2.22 (Debian ...)`."""
    path = shutil.which(qemu)
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.splitlines()[0].strip() if out.stdout else None
