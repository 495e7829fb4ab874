"""The guest kernel and the modules it needs, resolved with `modinfo`."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mountbench.errors import ToolMissing, UsageError
from mountbench.labs.qemu.mounts import guest_modules

# What the guest loads for itself, top level only: the host root over 9p or
# virtiofs under an overlay. Each mount type adds its own (labs/qemu/mounts); the
# dependencies are resolved with modinfo and come first.
ROOT_MODULES: Final = ("virtio_pci", "9pnet_virtio", "9p", "fuse", "virtiofs", "overlay")


def wanted_modules() -> tuple[str, ...]:
    """Every module the guest loads at boot: the root's, then every mount type's, each once."""
    return tuple(dict.fromkeys((*ROOT_MODULES, *guest_modules())))


_VERSION_RE = re.compile(rb"^(\d+\.\d+[^\s\x00]*)")


@dataclass(frozen=True)
class Kernel:
    """A bootable kernel image and where its modules live."""

    image: Path
    version: str
    modules_dir: Path  # /lib/modules/<version>


@dataclass(frozen=True)
class Module:
    """One kernel module to put into the initramfs, in load order."""

    name: str
    path: Path  # as installed; may end in .ko.xz / .ko.zst / .ko.gz


def bzimage_version(image: Path) -> str | None:
    """Read the version string a bzImage carries in its setup header, if any."""
    try:
        with image.open("rb") as f:
            head = f.read(0x4000)
            if head[0x202:0x206] != b"HdrS":
                return None
            offset = int.from_bytes(head[0x20E:0x210], "little") + 0x200
            f.seek(offset)
            m = _VERSION_RE.match(f.read(256))
    except OSError:
        return None
    return m.group(1).decode() if m else None


def find_kernel(kernel: str | Path | None = None, modules_root: Path = Path("/lib/modules")) -> Kernel:
    """The kernel to boot: `kernel` if given, else the newest /boot/vmlinuz-* with modules."""
    if kernel is not None:
        image = Path(kernel)
        if not image.is_file():
            raise UsageError(f"kernel {image} does not exist; pass a bzImage path to --kernel")
        version = bzimage_version(image)
        if version is None and image.name.startswith("vmlinuz-"):
            version = image.name.removeprefix("vmlinuz-")
        if version is None:
            raise UsageError(f"cannot tell the version of kernel {image}; name it vmlinuz-VERSION")
        mdir = modules_root / version
        if not mdir.is_dir():
            raise UsageError(
                f"kernel {image} is version {version} but {mdir} is missing; "
                "install that kernel's modules or pick another --kernel"
            )
        return Kernel(image, version, mdir)
    candidates = []
    for image in Path("/boot").glob("vmlinuz-*"):
        version = image.name.removeprefix("vmlinuz-")
        if (modules_root / version).is_dir():
            candidates.append((_version_key(version), image, version))
    if not candidates:
        raise ToolMissing(
            "no /boot/vmlinuz-* with matching /lib/modules found for the lab guest; "
            "run: apt-get install linux-image-amd64 (or pass --kernel)"
        )
    _, image, version = max(candidates)
    return Kernel(image, version, modules_root / version)


def _version_key(version: str) -> tuple[int | str, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.\-+]", version))


def _modinfo(kernel: Kernel, name: str) -> dict[str, list[str]]:
    modinfo = shutil.which("modinfo") or "/usr/sbin/modinfo"
    if not Path(modinfo).exists() and shutil.which("modinfo") is None:
        raise ToolMissing("modinfo is missing; run: apt-get install kmod")
    basedir = kernel.modules_dir.parents[2]  # /lib/modules/V -> /
    args = [modinfo, "-k", kernel.version]
    if basedir != Path("/"):
        args += ["-b", str(basedir)]
    proc = subprocess.run([*args, name], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {}
    fields: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), []).append(value.strip())
    return fields


def resolve_modules(kernel: Kernel, wanted: tuple[str, ...] | None = None) -> list[Module]:
    """The modules to load, dependencies first (hard `depends` and `softdep pre:`).

    Built-in modules are skipped. A wanted module that does not exist at all is an
    error; a soft dependency that cannot be found is skipped.
    """
    order: list[Module] = []
    seen: set[str] = set()

    def visit(name: str, required: bool, stack: tuple[str, ...]) -> None:
        key = name.replace("-", "_")
        if key in seen or key in stack:
            return
        info = _modinfo(kernel, name)
        filename = (info.get("filename") or [""])[0]
        if not filename:
            if required:
                raise ToolMissing(
                    f"kernel module {name} not found for kernel {kernel.version}; "
                    f"run: apt-get install linux-image-{kernel.version} (or pass --kernel)"
                )
            return
        if filename == "(builtin)":
            seen.add(key)
            return
        real = Path(filename).name.split(".ko")[0].replace("-", "_")
        if real in seen:
            seen.add(key)
            return
        for dep in ",".join(info.get("depends", [])).split(","):
            if dep.strip():
                visit(dep.strip(), True, (*stack, key))
        for soft in info.get("softdep", []):
            pre = soft.split("post:")[0].removeprefix("pre:").strip()
            for dep in pre.split():
                visit(dep, False, (*stack, key))
        seen.update({key, real})
        order.append(Module(real, Path(filename)))

    for name in wanted_modules() if wanted is None else wanted:
        visit(name, True, ())
    return order
