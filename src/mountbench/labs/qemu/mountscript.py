"""What the guest must mount, as data: slugs, tags, and the guest-side mount script.

Pure functions only (no processes), so the plan and the script are unit-testable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mountbench.labs.qemu.mounts.guestmount import GuestMount, MountSpec

GUEST_RESULTS = "/results"


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


def mount_command(mount: GuestMount) -> str:
    """The guest-side line (a helper of init.sh or of the mount type) that mounts `mount`."""
    return mount.spec.mount_type.mount_command(mount)


def mount_script(commands: Sequence[str], helpers: Sequence[str] = ()) -> str:
    """/run/mbctl/mounts.sh: sourced by stage 2 of init.sh; the mount types' shell helpers,
    then one mount per line."""
    text = "# written by mountbench lab: one mount per line\n"
    text += "".join(h.strip("\n") + "\n" for h in dict.fromkeys(helpers) if h.strip())
    return text + "".join(f"{c}\n" for c in commands)
