"""What limits a lab mount's numbers, as caveats: the host's page cache, and emulation.

Under TCG every guest instruction is emulated while the host side (QEMU's device
code, virtiofsd, sshd) runs natively, so emulation slows a mount in proportion to
the CPU work it does inside the guest. A mount whose cost is mostly guest CPU
(sshfs: ssh encryption) is slowed far more than the others and its place among
them says nothing about real hardware: under TCG sshfs extracted a tree 3x slower
than 9p, on real hardware it is 2x faster (issue 12, study S0).
"""

from __future__ import annotations

from mountbench import model
from mountbench.labs.qemu.accel import EMULATED_TEXT
from mountbench.labs.qemu.mounts.guestmount import MountSpec
from mountbench.model import Caveat

EMULATED_GUEST_CPU = model.EMULATED_GUEST_CPU


def emulated_guest_cpu_text(spec: MountSpec, why: str) -> str:
    return (
        f"guest emulated (TCG, no usable KVM) and {spec.type_name} costs CPU work in the guest ({why}): emulation "
        "slows that far more than the host-side work other mounts rely on, so its order against other mounts "
        "is not meaningful here; compare it in a KVM guest or on real hardware"
    )


def emulation_caveat(spec: MountSpec, emulated: bool) -> Caveat | None:
    """The caveat every cell of this mount carries in an emulated guest (None under KVM):
    a distinct one for mount types whose cost is guest CPU, the general one for the others."""
    if not emulated:
        return None
    why = spec.mount_type.guest_cpu_bound or guest_cache_why(spec)
    if why:
        return Caveat(EMULATED_GUEST_CPU, emulated_guest_cpu_text(spec, why))
    return Caveat(model.EMULATED, EMULATED_TEXT)


def guest_cache_why(spec: MountSpec) -> str | None:
    """Why a `cache=` value's numbers mean little under TCG (None when the spec's `cache=` keeps the
    guest's page cache out of the data path)."""
    if spec.get("cache") not in spec.mount_type.guest_caching_values:
        return None
    return (
        f"cache={spec.get('cache')} puts the guest's page cache in the data path, and every cached byte is "
        "copied by emulated instructions (about 120-190 MB/s here), so the mode's gain does not show: in "
        "bench/studies_lab.py 9p with cache=loose wrote 0.47x as fast as without a cache, 6.6x as fast in "
        "study S3, and virtiofs read 0.13x as fast as 9p"
    )


def host_cache_caveat(spec: MountSpec) -> Caveat | None:
    """Mounts whose data the host serves from its own page cache, whatever the guest asks
    (O_DIRECT included): their numbers can be host-RAM numbers."""
    why = spec.mount_type.host_cache(spec)
    if why is None:
        return None
    return Caveat(model.HOST_CACHE, f"the host's page cache may serve these: {why}")
