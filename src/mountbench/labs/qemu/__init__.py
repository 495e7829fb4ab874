"""`mountbench lab`: compare VM shared-folder mounts and virtual disks in a real QEMU guest.

The guest's root is the host's root, read-only, so the guest runs the host's own
fio, tar, Python and mountbench. Each MountSpec gets its own empty host
directory (or disk image) exposed through its device and mounted at
/mnt/<slug>; results come back through a dedicated writable share at /results.
Each mount type (9p, virtiofs, ...) is one module in labs/qemu/mounts, listed in its
registry MOUNT_TYPES. The lab's member of the frame (labs/frame.py) is labs/qemu/member.py.
"""

from mountbench.labs.qemu.accel import AccelChoice, probe_accel
from mountbench.labs.qemu.faults import BootError, GuestError, GuestTimeout
from mountbench.labs.qemu.guest import BootTimes, CommandRun, Guest
from mountbench.labs.qemu.mounts import MOUNT_TYPES, MountType
from mountbench.labs.qemu.mounts.guestmount import GuestMount, MountSpec
from mountbench.labs.qemu.mountspec import DEFAULT_MOUNTS, parse_mount_spec
from mountbench.labs.qemu.prereq import lab_problems

__all__ = [
    "DEFAULT_MOUNTS",
    "MOUNT_TYPES",
    "AccelChoice",
    "BootError",
    "BootTimes",
    "CommandRun",
    "Guest",
    "GuestError",
    "GuestMount",
    "GuestTimeout",
    "MountSpec",
    "MountType",
    "lab_problems",
    "parse_mount_spec",
    "probe_accel",
]
