"""Build (and cache) the guest's initramfs: busybox-static, the kernel modules, init.sh.

The archive is an uncompressed newc cpio: under TCG the kernel would spend
longer decompressing it than QEMU spends loading a few more megabytes.
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import os
import shutil
import stat
import subprocess
import tempfile
from importlib import resources
from pathlib import Path
from typing import BinaryIO

from platformdirs import user_cache_dir

from mountbench.errors import ToolMissing
from mountbench.labs.qemu.kernel import Kernel, Module, resolve_modules

BUILD_VERSION = "1"  # bump when the archive layout changes
BUSYBOX_CANDIDATES = ("/bin/busybox", "/usr/bin/busybox")


def lab_cache_dir() -> Path:
    """Where the lab keeps built initramfs images and the accel probe result."""
    return Path(user_cache_dir("mountbench")) / "lab"


def init_script() -> bytes:
    """The guest init script shipped as package data."""
    return resources.files("mountbench.labs.qemu").joinpath("init.sh").read_bytes()


def find_busybox() -> Path:
    """A statically linked busybox (the initramfs has no libc)."""
    for cand in BUSYBOX_CANDIDATES:
        path = Path(cand)
        if path.is_file() and _is_static(path):
            return path
    raise ToolMissing("no static busybox found; run: apt-get install busybox-static")


def _is_static(path: Path) -> bool:
    """True when the ELF file has no PT_INTERP program header (no dynamic loader)."""
    try:
        with path.open("rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit ELF only
                return False
            phoff = int.from_bytes(head[0x20:0x28], "little")
            phentsize = int.from_bytes(head[0x36:0x38], "little")
            phnum = int.from_bytes(head[0x38:0x3A], "little")
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return False
    pt_interp = 3
    types = (int.from_bytes(table[i * phentsize : i * phentsize + 4], "little") for i in range(phnum))
    return pt_interp not in types


def busybox_applets(busybox: Path) -> list[str]:
    """Applet names to link, without `busybox` itself (a self link breaks /init)."""
    out = subprocess.run([str(busybox), "--list"], capture_output=True, text=True, check=True)
    return sorted({a for a in out.stdout.split() if a and a != "busybox" and "/" not in a})


def module_bytes(path: Path) -> bytes:
    """A module's contents, decompressed: busybox insmod wants a plain .ko."""
    data = path.read_bytes()
    name = path.name
    if name.endswith(".xz"):
        return lzma.decompress(data)
    if name.endswith(".gz"):
        return gzip.decompress(data)
    if name.endswith(".zst"):
        zstd = shutil.which("zstd")
        if zstd is None:
            raise ToolMissing(f"{path} is zstd-compressed; run: apt-get install zstd")
        return subprocess.run([zstd, "-dc", str(path)], capture_output=True, check=True).stdout
    return data


class CpioWriter:
    """Minimal newc ("070701") cpio writer: directories, files, symlinks, device nodes."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._ino = 1000

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)) -> None:
        self._ino += 1
        namez = name.encode() + b"\0"
        fields = (
            self._ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(namez), 0,
        )  # fmt: skip
        header = b"070701" + b"".join(f"{v:08x}".encode() for v in fields)
        self._out.write(header + namez)
        self._pad(len(header) + len(namez))
        self._out.write(data)
        self._pad(len(data))

    def _pad(self, n: int) -> None:
        self._out.write(b"\0" * (-n % 4))

    def directory(self, name: str, perm: int = 0o755) -> None:
        self._entry(name, stat.S_IFDIR | perm)

    def file(self, name: str, data: bytes, perm: int = 0o644) -> None:
        self._entry(name, stat.S_IFREG | perm, data)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name: str, major: int, minor: int, perm: int = 0o600) -> None:
        self._entry(name, stat.S_IFCHR | perm, rdev=(major, minor))

    def finish(self) -> None:
        self._entry("TRAILER!!!", 0)


def _fingerprint(kernel: Kernel, modules: list[Module], busybox: Path) -> str:
    h = hashlib.sha256()
    h.update(BUILD_VERSION.encode())
    h.update(kernel.version.encode())
    h.update(init_script())
    for path in [busybox, *(m.path for m in modules)]:
        st = path.stat()
        h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def write_initramfs(out: BinaryIO, modules: list[Module], busybox: Path) -> None:
    """Write the whole archive to `out`."""
    cpio = CpioWriter(out)
    for d in ("bin", "dev", "proc", "sys", "tmp", "lib", "lib/mb", "lower", "upper", "newroot"):
        cpio.directory(d)
    cpio.chardev("dev/console", 5, 1)
    cpio.chardev("dev/null", 1, 3, 0o666)
    cpio.file("bin/busybox", busybox.read_bytes(), 0o755)
    for applet in busybox_applets(busybox):
        cpio.symlink(f"bin/{applet}", "busybox")
    cpio.symlink("sbin", "bin")
    for mod in modules:
        cpio.file(f"lib/mb/{mod.name}.ko", module_bytes(mod.path))
    cpio.file("lib/mb/order", "".join(f"{m.name}\n" for m in modules).encode())
    cpio.file("init", init_script(), 0o755)
    cpio.finish()


def build_initramfs(kernel: Kernel, cache_dir: Path | None = None) -> Path:
    """The initramfs for `kernel`, built once and reused while its inputs are unchanged."""
    busybox = find_busybox()
    modules = resolve_modules(kernel)
    cache = cache_dir or lab_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"initramfs-{kernel.version}-{_fingerprint(kernel, modules, busybox)}.cpio"
    if target.is_file():
        return target
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".initramfs-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            write_initramfs(out, modules, busybox)
        os.replace(tmp, target)  # atomic: a concurrent builder never sees half a file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for old in cache.glob(f"initramfs-{kernel.version}-*.cpio"):
        if old != target:
            old.unlink(missing_ok=True)
    return target
