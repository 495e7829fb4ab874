"""What a lab mount type is: the interface every module in labs/qemu/mounts/ implements.

A mount type is one way for the guest to reach storage (9p, virtiofs, sshfs, a virtual
disk, the guest's own tmpfs). Its module knows everything about it:

- its options (`options`): allowed values, defaults, which ones the label shows,
  plus any rule between options (`option_problem`, `defaults`);
- the host side (`attach`): the QEMU devices it adds, the host directory or image
  behind it, the daemons it starts (through MountHost, which stops them at the end
  and reports them as the mount's serving processes for host-cost measurement);
- the guest side (`mount_command`, `guest_helpers`, `guest_modules`,
  `needs_network`): the shell line in /run/mbctl/mounts.sh that mounts it;
- what limits its numbers (`host_cache`, `guest_cpu_bound`);
- whether the guest shares a host directory (`shared`: coherence is measured across it);
- what the host must have installed for it (`prerequisites`).

Adding a mount type is one new module with a MountType subclass and one line in
MOUNT_TYPES (labs/qemu/mounts/__init__.py). Nothing else in the lab names a mount type.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from mountbench.labs.frame import Problem
from mountbench.units import parse_size

if TYPE_CHECKING:
    from mountbench.labs.qemu.qemu import Device

GUEST_MNT = "/mnt"  # each mount under test is /mnt/<slug> in the guest
HOST_FROM_GUEST = "10.0.2.2"  # QEMU user networking's alias for the host loopback
GUEST_CTL = "/run/mbctl"  # the lab's control share in the guest (read-only; MountHost.control_dir on the host)


@dataclass(frozen=True)
class Option:
    """One option of a mount type: its allowed values (or a type), default, and whether
    the label always shows it (`core`) or only when it differs from the default."""

    choices: tuple[str, ...] = ()
    type: Literal["choice", "int", "size"] = "choice"
    default: str | None = None
    core: bool = False
    minimum: int | None = None
    maximum: int | None = None
    doc: str = ""


@dataclass(frozen=True)
class HostService:
    """A daemon the lab started on the host's loopback for one mount.

    The guest reaches it at HOST_FROM_GUEST:port over QEMU user networking (the
    mount type sets needs_network). `user` is the account the guest logs in as, when the
    protocol has one.
    """

    port: int
    user: str = ""


_SIZE_MULT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def format_size(n: int) -> str:
    """Shortest exact binary form of a byte count: 4294967296 -> `4G`."""
    for suffix in ("T", "G", "M", "K"):
        mult = _SIZE_MULT[suffix]
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


@dataclass(frozen=True)
class MountSpec:
    """One mount under test, with its effective options (defaults filled in).

    `options` is a tuple of (name, value) in a fixed order, so the spec is hashable
    and two spellings of the same configuration compare equal.
    """

    type_name: str  # the mount type's name, as `--mount NAME` gives it
    options: tuple[tuple[str, str], ...]
    definition: MountType = field(
        compare=False, repr=False
    )  # the mount type's module (set by labs.qemu.mountspec's parser)

    @property
    def mount_type(self) -> MountType:
        """The mount type's definition (labs/qemu/mounts/<type>.py)."""
        return self.definition

    def get(self, name: str, default: str | None = None) -> str | None:
        """The effective value of one option (None when unset and without default)."""
        return dict(self.options).get(name, default)

    @property
    def label(self) -> str:
        """Readable name with the full option set, e.g. `9p cache=loose msize=512000`.

        Core options always appear; the others only when they differ from the
        default, so equal specs have equal labels.
        """
        parts = [self.type_name]
        table = self.mount_type.options
        for name, value in self.options:
            opt = table[name]
            if opt.core or value != opt.default:
                parts.append(f"{name}={value}")
        return " ".join(parts)

    @property
    def slug(self) -> str:
        """Short path-safe name, used for /mnt/<slug> in the guest.

        Only options that differ from their default appear, so the default specs
        get the plain type (`9p`, `disk`) and variants stay short (`9p-cache-loose`).
        """
        parts = [self.type_name]
        table = self.mount_type.options
        for name, value in self.options:
            if value != table[name].default:
                parts.append(f"{name}-{value}")
        return re.sub(r"[^A-Za-z0-9.-]+", "-", "-".join(parts)).strip("-").lower()

    @property
    def spec_text(self) -> str:
        """The canonical spec string that parses back to this spec."""
        if not self.options:
            return self.type_name
        return self.type_name + ":" + ",".join(f"{k}={v}" for k, v in self.options)

    @property
    def size_bytes(self) -> int | None:
        """The `size=` option in bytes, when the mount type has one."""
        size = self.get("size")
        return parse_size(size) if size is not None else None

    def __str__(self) -> str:
        return self.label


@dataclass
class GuestMount:
    """One mount under test: where it lives on both sides and how it was seen in the guest."""

    spec: MountSpec
    slug: str
    tag: str  # 9p/virtiofs mount tag, disk serial, or "tmpfs" (set by the mount type)
    host_path: Path | None = None  # the host directory, disk image, or None (guest-tmpfs)
    served_by: str = ""  # e.g. "qemu 9p", "rust virtiofsd 1.14.0 (/path)", "sshd + sftp-server"
    service: HostService | None = None  # the mount's own loopback daemon (sshd), when it has one
    proc_mounts: str = ""  # the guest's /proc/mounts line for guest_path
    guest_error: str = ""  # why the guest could not mount it, if it could not
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def type_name(self) -> str:
        return self.spec.type_name

    @property
    def guest_path(self) -> str:
        return f"{GUEST_MNT}/{self.slug}"

    @property
    def fstype(self) -> str:
        """The filesystem type the guest reports (third /proc/mounts field)."""
        parts = self.proc_mounts.split()
        return parts[2] if len(parts) > 2 else ""

    @property
    def mount_options(self) -> str:
        """The options the guest reports (fourth /proc/mounts field)."""
        parts = self.proc_mounts.split()
        return parts[3] if len(parts) > 3 else ""


class MountHost(Protocol):
    """What the Guest offers a mount type while it wires the host side of one mount.

    Every process started or adopted here is stopped when the lab closes, however
    it closes, and is listed (with its children) under its role in the mount's
    serving processes, next to QEMU itself.
    """

    @property
    def index(self) -> int:
        """The mount's position in the lab (unique: tags and serials derive from it)."""
        ...

    @property
    def lab_dir(self) -> Path:
        """The lab work dir, removed with the lab unless kept."""
        ...

    @property
    def control_dir(self) -> Path:
        """Shared read-only with the guest at GUEST_CTL."""
        ...

    @property
    def logs_dir(self) -> Path: ...

    @property
    def virtiofsd(self) -> str:
        """The lab's virtiofsd choice: auto | rust | qemu | a path."""
        ...

    def mount_dir(self) -> Path:
        """A new empty host directory for this mount (what 9p, virtiofs, sshfs serve)."""
        ...

    def image_path(self, name: str) -> Path:
        """Where to create a disk image called `name` (not created)."""
        ...

    def socket_path(self, name: str) -> Path:
        """A path for an AF_UNIX socket called `name`, short enough for sun_path."""
        ...

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
        """Start a daemon serving this mount and wait until `ready()`; on failure raise
        BootError('{failure}: {log tail}; see {log}')."""
        ...

    def adopt_daemon(
        self,
        role: str,
        proc: subprocess.Popen[bytes],
        log: Path,
        stop: Callable[[], None] | None = None,
    ) -> None:
        """Take charge of a daemon the mount type started itself (stopped with `stop`, else
        by stopping its process tree)."""
        ...

    def network_prefix(self) -> list[str]:
        """What the command line of a server the guest reaches at HOST_FROM_GUEST starts with, to
        run where that address leads: the lab's own network namespace ([] when the lab has
        none, and such a server listens on the host's loopback)."""
        ...

    def listening(self, port: int) -> bool:
        """Does a TCP socket listen on ``port`` where HOST_FROM_GUEST leads?"""
        ...

    def network_reach(self) -> str:
        """Who besides the guest reaches a server started with network_prefix(), in words."""
        ...


class MountType:
    """One lab mount type. Subclasses set the class attributes and override what differs.

    The defaults describe a mount type with no options, no host side, nothing to load
    in the guest, and no caveat.
    """

    name: ClassVar[str]  # what `--mount NAME[:opt=val]` says
    options: ClassVar[Mapping[str, Option]] = {}  # in label order (most telling first)
    needs_network: ClassVar[bool] = False  # QEMU user networking: host loopback at HOST_FROM_GUEST
    guest_modules: ClassVar[tuple[str, ...]] = ()  # kernel modules the guest loads at boot (deps resolved)
    guest_helpers: ClassVar[str] = ""  # POSIX sh functions defined in mounts.sh before the mount lines
    # Why the mount's cost is CPU work inside the guest, when it is (encrypting or
    # checksumming every byte): emulation distorts that, so under TCG its cells carry
    # the emulated-guest-cpu caveat instead of the general one (labs/qemu/caveats.py).
    guest_cpu_bound: ClassVar[str | None] = None
    # Its `cache` option values that put the guest's page cache in the data path: under TCG
    # every cached byte is copied by emulated instructions, so those modes' gains do not show
    # (bench/studies_lab.py: 9p cache=loose wrote 0.47x as fast as without a cache, study S3 6.6x)
    guest_caching_values: ClassVar[frozenset[str]] = frozenset()
    reference: ClassVar[bool] = False  # the natural baseline (storage without any sharing layer)
    # The guest sees a host directory (host_path), which the host can change while the
    # guest works: `lab --probe` measures coherence between the two views of it.
    shared: ClassVar[bool] = False

    # --- options -----------------------------------------------------------------------

    def option_problem(self, given: Mapping[str, str]) -> Problem | None:
        """A rule between the given options that is broken, with its fix."""
        return None

    def defaults(self, given: Mapping[str, str]) -> dict[str, str]:
        """The effective value of every option not given (options without a default stay unset)."""
        return {name: opt.default for name, opt in self.options.items() if opt.default is not None}

    # --- host side ---------------------------------------------------------------------

    def prerequisites(self) -> list[Problem]:
        """Host pieces this mount type needs that are missing (checked before anything boots)."""
        return []

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        """Wire the host side of `mount` and return the QEMU devices it needs.

        Sets what the host side decided on the mount: `host_path`, `served_by`,
        `service` (a loopback daemon), `tag` and `extra` (recorded with the run).
        """
        raise NotImplementedError

    # --- guest side --------------------------------------------------------------------

    def mount_command(self, mount: GuestMount) -> str:
        """The line in mounts.sh that mounts `mount` at /mnt/<slug> and reports it
        with mb_record (or mb_failed); the helpers are those of init.sh and guest_helpers."""
        raise NotImplementedError

    # --- caveats -----------------------------------------------------------------------

    def outside_network(self, spec: MountSpec) -> str | None:
        """Why this mount's server must reach something outside the lab's own network namespace
        (so the lab runs without one), or None."""
        return None

    def host_cache(self, spec: MountSpec) -> str | None:
        """Why the host's page cache may serve this mount whatever the guest asks
        (O_DIRECT included), or None when it cannot."""
        return None
