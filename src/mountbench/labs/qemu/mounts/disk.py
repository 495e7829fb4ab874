"""disk: a fresh image file (raw or qcow2) on a virtio-blk disk, formatted ext4 in the guest."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from mountbench.errors import ToolMissing
from mountbench.labs.qemu.faults import BootError
from mountbench.labs.qemu.mounts.guestmount import GuestMount, MountHost, MountSpec, MountType, Option, Problem
from mountbench.labs.qemu.qemu import Device, Disk

# mb_disk SLUG SERIAL: format the virtio disk with that serial as ext4 and mount it.
# Inode tables and journal are written now, not lazily in the background where
# they would disturb the measurements.
GUEST_HELPERS = r"""
mb_disk() {  # SLUG SERIAL
    dev=""
    for s in /sys/block/*/serial; do
        [ -r "$s" ] && [ "$(cat "$s")" = "$2" ] && dev=/dev/$(basename "$(dirname "$s")")
    done
    if [ -z "$dev" ]; then
        mb_failed "$1" "no virtio disk with serial $2"
        return
    fi
    mkdir -p "/mnt/$1"
    if ! out=$(mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$dev" 2>&1); then
        mb_failed "$1" "mkfs.ext4 $dev: $out"
        return
    fi
    if out=$(mount -t ext4 "$dev" "/mnt/$1" 2>&1); then
        mb_record "$1"
    else
        mb_failed "$1" "mount $dev: $out"
    fi
}
"""


class VirtualDisk(MountType):
    name = "disk"
    options: ClassVar[Mapping[str, Option]] = {
        "format": Option(("raw", "qcow2"), default="raw", core=True),
        "cache": Option(("none", "writeback", "writethrough", "directsync", "unsafe"), default="none", core=True),
        "preallocation": Option(("off", "metadata", "full"), default="off"),
        "size": Option(type="size", default="4G", core=True, minimum=64 << 20),
    }
    # crc32c_generic backs ext4's checksums on any CPU
    guest_modules = ("virtio_blk", "crc32c_generic", "ext4")
    guest_helpers = GUEST_HELPERS

    def option_problem(self, given: Mapping[str, str]) -> Problem | None:
        if "preallocation" in given and given.get("format", "raw") != "qcow2":
            return Problem("preallocation= applies to qcow2 images only", "add format=qcow2 or drop it")
        return None

    def defaults(self, given: Mapping[str, str]) -> dict[str, str]:
        effective = super().defaults(given)
        if given.get("format") != "qcow2":
            del effective["preallocation"]  # a raw image has no allocation mode here
        return effective

    def prerequisites(self) -> list[Problem]:
        problems = []
        if shutil.which("qemu-img") is None:
            problems.append(Problem("qemu-img is missing (disk mounts)", "apt-get install qemu-utils"))
        if shutil.which("mkfs.ext4") is None and not Path("/usr/sbin/mkfs.ext4").exists():
            problems.append(
                Problem(
                    "mkfs.ext4 is missing (disk mounts are formatted in the guest with the host's tools)",
                    "apt-get install e2fsprogs",
                )
            )
        return problems

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        mount.tag = f"mbdisk{host.index}"  # the disk's serial: at most 20 characters
        fmt = mount.spec.get("format") or "raw"
        path = host.image_path(f"{mount.slug}.{'qcow2' if fmt == 'qcow2' else 'img'}")
        args = ["qemu-img", "create", "-q", "-f", fmt]
        if fmt == "qcow2":
            args += ["-o", f"preallocation={mount.spec.get('preallocation') or 'off'}"]
        args += [str(path), str(mount.spec.size_bytes)]
        if shutil.which("qemu-img") is None:
            raise ToolMissing("qemu-img is missing; run: apt-get install qemu-utils")
        out = subprocess.run(args, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise BootError(f"qemu-img could not create {path}: {out.stderr.strip()}")
        mount.host_path = path
        cache = mount.spec.get("cache") or "none"
        mount.served_by = f"qemu virtio-blk ({fmt}, cache={cache})"
        return [Disk(path, mount.tag, fmt, cache)]

    def mount_command(self, mount: GuestMount) -> str:
        return shlex.join(["mb_disk", mount.slug, mount.tag])

    def host_cache(self, spec: MountSpec) -> str | None:
        cache = spec.get("cache", "none")
        if cache in ("none", "directsync"):
            return None
        return f"the image is opened with cache={cache}"
