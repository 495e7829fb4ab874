"""Reading the user's input files with bounds: a file that never ends (``/dev/zero``), one far
larger than any mountbench wrote, or JSON nested deeper than any mountbench wrote is refused
with one line instead of exhausting memory or the interpreter's recursion limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mountbench.errors import UsageError

MiB = 1 << 20
DOCUMENT_LIMIT = 512 * MiB  # an export with fio's raw JSON of a long run is tens of MiB
JSON_DEPTH_LIMIT = 64  # mountbench's own documents nest about 8 deep


def read_bounded(path: Path, limit: int, what: str, fix: str) -> bytes:
    """The bytes of ``path``, refusing (UsageError) more than ``limit`` of them. Reads at most
    ``limit`` + 1 bytes whatever the file is (a device, a FIFO, a growing file)."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(limit + 1)
    except FileNotFoundError:
        raise UsageError(f"{what} {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory; {fix}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path} ({exc.strerror or exc}); {fix}") from None
    if len(data) > limit:
        raise UsageError(f"{what} {path} is larger than {limit // MiB} MiB (or never ends); {fix}")
    return data


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
