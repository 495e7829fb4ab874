"""What the guest must mount, as data: slugs, tags, and the guest-side mount script.

Pure functions only (no processes), so the plan and the script are unit-testable.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mountbench.lab.spec import MountSpec

GUEST_MNT = "/mnt"
GUEST_RESULTS = "/results"
GUEST_CTL = "/run/mbctl"
GUEST_KEY = f"{GUEST_CTL}/ssh/id_ed25519"
HOST_FROM_GUEST = "10.0.2.2"  # QEMU user networking's alias for the host loopback


@dataclass
class LabMount:
    """One mount under test: where it lives on both sides and how it was seen in the guest."""

    spec: MountSpec
    slug: str
    tag: str  # 9p/virtiofs mount tag, disk serial, or "tmpfs"
    host_path: Path | None = None  # the host directory, disk image, or None (guest-tmpfs)
    served_by: str = ""  # e.g. "qemu 9p", "rust virtiofsd 1.14.0 (/path)", "sshd + sftp-server"
    proc_mounts: str = ""  # the guest's /proc/mounts line for guest_path
    guest_error: str = ""  # why the guest could not mount it, if it could not
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def kind(self) -> str:
        return self.spec.kind

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


def assign_slugs(specs: Iterable[MountSpec]) -> list[tuple[MountSpec, str]]:
    """Pair each spec with a unique slug (`9p`, `9p-cache-loose`, a repeat gets `-2`)."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        base = spec.slug
        n = seen.get(base, 0) + 1
        seen[base] = n
        out.append((spec, base if n == 1 else f"{base}-{n}"))
    return out


def ninep_options(spec: MountSpec) -> str:
    """Guest mount options for a 9p spec."""
    return f"trans=virtio,version=9p2000.L,cache={spec.get('cache')},msize={spec.get('msize')}"


def tmpfs_options(spec: MountSpec) -> str:
    size = spec.get("size")
    return "mode=1777" + (f",size={size}" if size else "")


def mount_command(mount: LabMount, ssh_port: int | None = None, ssh_user: str = "root") -> str:
    """The guest-side helper call (defined in init.sh) that mounts `mount`."""
    q = shlex.quote
    kind = mount.kind
    if kind == "9p":
        args = ["mb_mount", mount.slug, "9p", mount.tag, ninep_options(mount.spec)]
    elif kind == "virtiofs":
        args = ["mb_mount", mount.slug, "virtiofs", mount.tag, "rw"]
    elif kind == "disk":
        args = ["mb_disk", mount.slug, mount.tag]
    elif kind == "sshfs":
        if ssh_port is None or mount.host_path is None:
            raise ValueError("an sshfs mount needs the sshd port and a host directory")
        args = ["mb_sshfs", mount.slug, str(ssh_port), ssh_user, str(mount.host_path), GUEST_KEY]
    elif kind == "guest-tmpfs":
        args = ["mb_mount", mount.slug, "tmpfs", "tmpfs", tmpfs_options(mount.spec)]
    else:  # pragma: no cover - parse_mount_spec admits no other kind
        raise ValueError(kind)
    return " ".join(q(a) for a in args)


def mount_script(commands: Sequence[str]) -> str:
    """/run/mbctl/mounts.sh: sourced by stage 2 of init.sh."""
    return "# written by mountbench lab: one mount per line\n" + "".join(f"{c}\n" for c in commands)
