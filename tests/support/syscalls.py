"""What processes wrote, from an strace log (``strace -f -y -o FILE``): every successful call that
makes, changes, renames or removes a file, with the absolute path(s) it touched. Used by the
containment tests as a second witness beside their canaries: the canaries see what changed in the
places they watch; the trace sees every place.

Paths are made absolute from the descriptor strace decorates (``-y``: ``AT_FDCWD</dir>``,
``3</dir>``) or, for the calls without one (``mkdir``, ``unlink``, ``rename``, ``open``), from the
process's working directory, followed through ``fork``/``clone`` (a child starts in its parent's)
and ``chdir``/``fchdir``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

# the calls strace must trace for ``writes`` to see everything (``-e trace=`` + ",".join(TRACED))
WRITING = (
    "open", "openat", "openat2", "creat", "truncate", "unlink", "unlinkat", "rename", "renameat",
    "renameat2", "mkdir", "mkdirat", "rmdir", "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat",
)  # fmt: skip
FOLLOWED = ("clone", "clone3", "fork", "vfork", "chdir", "fchdir")
TRACED = WRITING + FOLLOWED
OPEN_WRITES = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")

_LINE = re.compile(r"^(?P<pid>\d+) +(?P<call>\w+)\((?P<args>.*)\) += (?P<ret>-?\d+|\?)")
_RESUMED = re.compile(r"^(?P<pid>\d+) +<\.\.\. (?P<call>\w+) resumed>(?P<args>.*)\) += (?P<ret>-?\d+|\?)")
_UNFINISHED = re.compile(r"^(?P<pid>\d+) +(?P<call>\w+)\((?P<args>.*) <unfinished \.\.\.>$")
_STRING = r'"((?:[^"\\]|\\.)*)"'
_FD_PATH = re.compile(r"^(?:AT_FDCWD|\d+)<(?P<path>[^>]*)>$")


@dataclass(frozen=True)
class Write:
    pid: int
    call: str
    paths: tuple[str, ...]  # absolute

    def __str__(self) -> str:
        return f"{self.pid} {self.call} {' '.join(self.paths)}"


def _split_args(args: str) -> list[str]:
    """Top-level arguments of a traced call (strings and {...}/[...] kept whole)."""
    parts, depth, current, quoted, escaped = [], 0, [], False, False
    for char in args:
        if quoted:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
            continue
        if char == '"':
            quoted = True
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if current:
        parts.append("".join(current).strip())
    return parts


def _string(arg: str) -> str | None:
    match = re.fullmatch(_STRING + r"(?:\.\.\.)?", arg)
    if match is None:
        return None
    return match.group(1).encode().decode("unicode_escape")


def _at(dirfd: str, name: str | None, cwd: str) -> str | None:
    if name is None:
        return None
    if name.startswith("/"):
        return os.path.normpath(name)
    found = _FD_PATH.match(dirfd)
    base = found.group("path") if found else cwd
    return os.path.normpath(os.path.join(base, name))


def _plain(name: str | None, cwd: str) -> str | None:
    return None if name is None else os.path.normpath(os.path.join(cwd, name))


def _paths(call: str, args: list[str], cwd: str) -> tuple[str | None, ...] | None:
    """The paths a writing call touches, or None when it does not write (an open for reading)."""
    if call in ("open", "creat"):
        if call == "open" and not any(flag in (args[1] if len(args) > 1 else "") for flag in OPEN_WRITES):
            return None
        return (_plain(_string(args[0]), cwd),)
    if call in ("openat", "openat2"):
        flags = args[2] if len(args) > 2 else ""
        if not any(flag in flags for flag in OPEN_WRITES):
            return None
        return (_at(args[0], _string(args[1]), cwd),)
    if call in ("truncate", "unlink", "rmdir", "mkdir", "mknod"):
        return (_plain(_string(args[0]), cwd),)
    if call in ("unlinkat", "mkdirat", "mknodat"):
        return (_at(args[0], _string(args[1]), cwd),)
    if call in ("rename", "link"):
        return (_plain(_string(args[0]), cwd), _plain(_string(args[1]), cwd))
    if call in ("renameat", "renameat2", "linkat"):
        return (_at(args[0], _string(args[1]), cwd), _at(args[2], _string(args[3]), cwd))
    if call == "symlink":  # the link is made; its target is only text
        return (_plain(_string(args[1]), cwd),)
    if call == "symlinkat":
        return (_at(args[1], _string(args[2]), cwd),)
    return None


def writes(lines: Iterable[str], first_cwd: str) -> list[Write]:
    """Every successful writing call in an strace log, in order. ``first_cwd``: the working directory
    of the processes the log starts with."""
    cwd: dict[int, str] = {}
    pending: dict[int, tuple[str, str]] = {}  # pid -> (call, args before <unfinished ...>)
    found: list[Write] = []
    for raw in lines:
        line = raw.rstrip("\n")
        unfinished = _UNFINISHED.match(line)
        if unfinished:
            pending[int(unfinished["pid"])] = (unfinished["call"], unfinished["args"])
            continue
        match = _LINE.match(line)
        if match:
            pid, call, args, ret = int(match["pid"]), match["call"], match["args"], match["ret"]
        else:
            resumed = _RESUMED.match(line)
            if not resumed:
                continue
            pid, call, ret = int(resumed["pid"]), resumed["call"], resumed["ret"]
            before = pending.pop(pid, (call, ""))[1]
            args = before + resumed["args"]
        here = cwd.setdefault(pid, first_cwd)
        if ret == "?" or int(ret) < 0:
            continue
        if call in ("clone", "clone3", "fork", "vfork"):
            cwd[int(ret)] = here
            continue
        parts = _split_args(args)
        if call == "chdir":
            cwd[pid] = _plain(_string(parts[0]), here) or here
            continue
        if call == "fchdir":
            found_fd = _FD_PATH.match(parts[0])
            if found_fd:
                cwd[pid] = found_fd.group("path")
            continue
        touched = _paths(call, parts, here)
        if touched is not None:
            found.append(Write(pid, call, tuple(p for p in touched if p is not None)))
    return found


def outside(found: Iterable[Write], allowed: Iterable[str]) -> list[Write]:
    """The writes with a path under none of ``allowed`` (directories, or exact paths such as /dev/null)."""
    prefixes = [os.path.normpath(a) for a in allowed]

    def inside(path: str) -> bool:
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)

    return [w for w in found if not all(inside(p) for p in w.paths)]
