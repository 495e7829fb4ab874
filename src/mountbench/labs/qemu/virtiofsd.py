"""Finding a virtiofsd and building its command line.

Two implementations exist: QEMU's C daemon (shipped by Debian 12 at
/usr/lib/qemu/virtiofsd, no read-only mode) and the Rust one (`virtiofsd` on
PATH or /usr/libexec, has --readonly). Their flags differ; this module hides that.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from mountbench.errors import ToolMissing

Flavour = Literal["rust", "qemu"]

QEMU_VIRTIOFSD: Final = Path("/usr/lib/qemu/virtiofsd")
_RUST_PLACES: Final = (Path("/usr/libexec/virtiofsd"), Path("/usr/lib/virtiofsd"))


@dataclass(frozen=True)
class Virtiofsd:
    """One virtiofsd binary and what kind it is."""

    path: Path
    flavour: Flavour
    version: str

    @property
    def description(self) -> str:
        """E.g. `rust virtiofsd 1.14.0 (/root/.cargo/bin/virtiofsd)`."""
        return f"{self.flavour} virtiofsd {self.version} ({self.path})"

    def argv(
        self,
        socket_path: Path,
        shared_dir: Path,
        *,
        cache: str = "auto",
        thread_pool_size: int | None = None,
        direct_io: bool = False,
        readonly: bool = False,
        sandbox: str | None = None,
        announce_submounts: bool | None = None,
    ) -> list[str]:
        """The command line serving `shared_dir` on `socket_path`.

        `cache` uses the spec's words (never|auto|always); the C daemon calls
        never "none". `readonly` needs the Rust daemon. `announce_submounts` None
        keeps the daemon's default.
        """
        if self.flavour == "rust":
            args = [
                str(self.path),
                f"--socket-path={socket_path}",
                f"--shared-dir={shared_dir}",
                f"--cache={cache}",
            ]
            if thread_pool_size is not None:
                args.append(f"--thread-pool-size={thread_pool_size}")
            if direct_io:
                args.append("--allow-direct-io")
            if readonly:
                args.append("--readonly")
            if sandbox:
                args.append(f"--sandbox={sandbox}")
            if announce_submounts is False:
                args.append("--no-announce-submounts")
            return args
        if readonly:
            raise ToolMissing(
                f"{self.path} (QEMU's C virtiofsd) has no read-only mode; "
                "run: cargo install virtiofsd (or share the root over 9p)"
            )
        args = [
            str(self.path),
            f"--socket-path={socket_path}",
            "-o",
            f"source={shared_dir}",
            "-o",
            f"cache={'none' if cache == 'never' else cache}",
        ]
        if thread_pool_size is not None:
            args.append(f"--thread-pool-size={thread_pool_size}")
        if direct_io:
            args += ["-o", "allow_direct_io"]
        if sandbox:
            args += ["-o", f"sandbox={sandbox}"]
        if announce_submounts is True:
            args += ["-o", "announce_submounts"]
        return args


def identify(path: Path) -> Virtiofsd | None:
    """Run `path --version` and tell the C daemon from the Rust one."""
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout + out.stderr).strip()
    first = text.splitlines()[0] if text else ""
    words = first.split()
    if first.startswith("virtiofsd version"):  # C: "virtiofsd version 7.2.22 (Debian ...)"
        return Virtiofsd(path, "qemu", words[2] if len(words) > 2 else "?")
    if first.startswith("virtiofsd ") and len(words) >= 2:  # Rust: "virtiofsd 1.14.0"
        return Virtiofsd(path, "rust", words[1])
    return None


def find_virtiofsd(prefer: str = "auto") -> Virtiofsd | None:
    """The virtiofsd to use: `rust`, `qemu`, or `auto` (Rust when present, else C).

    `prefer` may also be a path to a virtiofsd binary.
    """
    if prefer not in ("auto", "rust", "qemu"):
        found = identify(Path(prefer))
        if found is None:
            raise ToolMissing(f"{prefer} is not a virtiofsd; pass a virtiofsd binary")
        return found
    rust: Virtiofsd | None = None
    on_path = shutil.which("virtiofsd")
    for cand in [Path(on_path)] if on_path else []:
        rust = rust or _only(identify(cand), "rust")
    for cand in _RUST_PLACES:
        if rust is None and cand.is_file():
            rust = _only(identify(cand), "rust")
    c_daemon = _only(identify(QEMU_VIRTIOFSD), "qemu") if QEMU_VIRTIOFSD.is_file() else None
    if prefer == "rust":
        return rust
    if prefer == "qemu":
        return c_daemon
    return rust or c_daemon


def _only(found: Virtiofsd | None, flavour: Flavour) -> Virtiofsd | None:
    return found if found is not None and found.flavour == flavour else None
