"""Reading the user's input files with bounds: only regular files (a FIFO would block, a device
may never end: both are refused at once), nothing far larger than any mountbench wrote, and no
JSON nested deeper than any mountbench wrote: one line instead of a hang, exhausted memory or the
interpreter's recursion limit."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from mountbench.errors import UsageError

MiB = 1 << 20
DOCUMENT_LIMIT = 512 * MiB  # an export with fio's raw JSON of a long run is tens of MiB
JSON_DEPTH_LIMIT = 64  # mountbench's own documents nest about 8 deep


def read_bounded(path: Path, limit: int, what: str, fix: str) -> bytes:
    """The bytes of the regular file ``path``, refusing (UsageError) anything else (a device, a
    FIFO, a socket: opened without blocking, then refused) and more than ``limit`` bytes (at most
    ``limit`` + 1 are read, whatever the file does meanwhile)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UsageError(f"{what} {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory; {fix}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path} ({exc.strerror or exc}); {fix}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise UsageError(f"{what} {path} is a directory; {fix}")
        if not stat.S_ISREG(mode):
            raise UsageError(f"{what} {path} is not a regular file (a {_file_kind(mode)}); {fix}")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path} ({exc.strerror or exc}); {fix}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UsageError(f"{what} {path} is larger than {limit // MiB} MiB; {fix}")
    return data


def check_regular(path: Path, what: str, fix: str) -> None:
    """Refuse (UsageError) a ``path`` that exists and is not a regular file, without opening it:
    a FIFO would block whoever opens it until something writes."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreadable: the reader says so
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise UsageError(f"{what} {path} is not a regular file (a {_file_kind(mode)}); {fix}")


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
             (stat.S_ISSOCK, "socket"))  # fmt: skip
    return next((name for test, name in kinds if test(mode)), "special file")


def load_json(data: bytes | str, origin: str, fix: str) -> Any:
    """Parse JSON, refusing what no mountbench document is: invalid text, numbers too long to
    read, nesting deeper than :data:`JSON_DEPTH_LIMIT`."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise UsageError(f"{origin} is nested too deeply to be a mountbench document; {fix}") from None
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, an integer of more than 4300 digits
        raise UsageError(f"{origin} is not a readable JSON file ({_short(exc)}); {fix}") from None
    depth = nesting_depth(value)
    if depth > JSON_DEPTH_LIMIT:
        raise UsageError(f"{origin} nests {depth} levels deep, more than any mountbench document; {fix}")
    return value


def nesting_depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (without recursion)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > JSON_DEPTH_LIMIT:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."
