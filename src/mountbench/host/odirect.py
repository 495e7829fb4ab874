"""The one O_DIRECT probe, used by runs (targets.inspect_target) and by ``mountbench probe``.

O_DIRECT is tried for real: open a file with it (F_NOCACHE on macOS), write one aligned
4 KiB block, read it back and compare, then try an unaligned 100-byte write. Each step
is named, so a caller can tell "open refused O_DIRECT" from "open accepted it but
aligned I/O then failed".
"""

from __future__ import annotations

import contextlib
import errno as errno_mod
import mmap
import os
from dataclasses import dataclass
from pathlib import Path

BLOCK = 4096
PROBE_FILE = ".odirect-probe"


@dataclass(frozen=True)
class ODirectCheck:
    """What happened. ``works``: an aligned write and read through the flag gave the data back.

    ``failed_step`` names the call that failed ("open with O_DIRECT", "aligned 4 KiB
    write", ...) with ``errno``/``message``; ``opened`` says whether the open itself
    accepted the flag. ``unaligned`` is "accepted" or "refused (EINVAL)" when measured.
    """

    mechanism: str  # "O_DIRECT" or "F_NOCACHE"
    opened: bool
    works: bool
    failed_step: str | None = None
    errno: str | None = None
    message: str = ""
    unaligned: str | None = None

    @property
    def reason(self) -> str:
        """ "EINVAL: Invalid argument" for a refused open; the step first for later failures."""
        if self.works:
            return "accepted" if self.mechanism == "O_DIRECT" else "F_NOCACHE"
        text = f"{self.errno}: {self.message}" if self.errno else self.message
        return text if not self.opened else f"{self.failed_step}: {text}"


def _name(code: int | None) -> str | None:
    return None if code is None else errno_mod.errorcode.get(code, str(code))


def check(directory: Path | str, name: str = PROBE_FILE) -> ODirectCheck:
    """Try O_DIRECT on a new file ``name`` in ``directory``; the file is removed afterwards."""
    path = Path(directory) / name
    mechanism = "O_DIRECT" if hasattr(os, "O_DIRECT") else "F_NOCACHE"
    step = f"open with {mechanism}"
    fd = -1
    wbuf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT needs
    rbuf = mmap.mmap(-1, BLOCK)
    try:
        try:
            if mechanism == "O_DIRECT":
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
            else:
                import fcntl

                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.fcntl(fd, getattr(fcntl, "F_NOCACHE", 48), 1)
        except OSError as err:
            return ODirectCheck(mechanism, False, False, step, _name(err.errno), err.strerror or str(err))
        wbuf.write(b"D" * BLOCK)
        step = f"aligned {BLOCK // 1024} KiB write"
        try:
            written = os.pwritev(fd, [wbuf], 0)
            step = f"aligned {BLOCK // 1024} KiB read"
            got = os.preadv(fd, [rbuf], 0)
        except OSError as err:
            return ODirectCheck(mechanism, True, False, step, _name(err.errno), err.strerror or str(err))
        if written != BLOCK or got != BLOCK or rbuf[:] != wbuf[:]:
            return ODirectCheck(
                mechanism, True, False, "read back", None, f"wrote {written} bytes, read {got} that differ"
            )
        try:
            os.pwrite(fd, b"u" * 100, 1)
            unaligned = "accepted"
        except OSError as err:
            unaligned = f"refused ({_name(err.errno)})"
        return ODirectCheck(mechanism, True, True, unaligned=unaligned)
    finally:
        if fd >= 0:
            os.close(fd)
        wbuf.close()
        rbuf.close()
        with contextlib.suppress(OSError):
            path.unlink()
