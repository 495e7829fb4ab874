"""What the guest must mount, as data: slugs, tags, and the guest-side mount script.

Pure functions only (no processes), so the plan and the script are unit-testable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mountbench.lab.mounts import HostService
from mountbench.lab.spec import MountSpec

GUEST_MNT = "/mnt"
GUEST_RESULTS = "/results"


@dataclass
class LabMount:
    """One mount under test: where it lives on both sides and how it was seen in the guest."""

    spec: MountSpec
    slug: str
    tag: str  # 9p/virtiofs mount tag, disk serial, or "tmpfs" (set by the kind)
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


def mount_command(mount: LabMount) -> str:
    """The guest-side line (a helper of init.sh or of the kind) that mounts `mount`."""
    return mount.spec.mount_kind.mount_command(mount)


def mount_script(commands: Sequence[str], helpers: Sequence[str] = ()) -> str:
    """/run/mbctl/mounts.sh: sourced by stage 2 of init.sh; the kinds' shell helpers,
    then one mount per line."""
    text = "# written by mountbench lab: one mount per line\n"
    text += "".join(h.strip("\n") + "\n" for h in dict.fromkeys(helpers) if h.strip())
    return text + "".join(f"{c}\n" for c in commands)
