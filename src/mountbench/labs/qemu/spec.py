"""Mount specs: `KIND[:opt=val,...]` naming one way for a guest to reach storage.

A spec is parsed once, validated completely, and carries its effective options
(defaults filled in), so two specs that configure the same thing compare equal
and get the same label.
"""

from __future__ import annotations

from typing import Final

from mountbench.errors import UsageError
from mountbench.labs.qemu.mounts import KINDS
from mountbench.labs.qemu.mounts.base import MountSpec, Option, format_size
from mountbench.units import parse_size


def _fail(text: str, problem: str, fix: str) -> UsageError:
    return UsageError(f"mount spec {text!r}: {problem}; {fix}")


def _check_value(text: str, kind: str, name: str, opt: Option, value: str) -> str:
    if opt.type == "choice":
        if value not in opt.choices:
            return _raise(text, f"{kind} {name}={value} is not valid", f"use {name}={'|'.join(opt.choices)}")
        return value
    if opt.type == "int":
        if not value.isdigit():
            return _raise(text, f"{name}={value} is not a whole number", f"use e.g. {name}=4")
        n = int(value)
        number, size = str(n), False
    else:  # size
        try:
            n = parse_size(value)
        except UsageError:
            return _raise(text, f"{name}={value} is not a size", f"use e.g. {name}=4G or 512M")
        number, size = format_size(n), True
    lo, hi = opt.minimum, opt.maximum
    show = format_size if size else str
    if lo is not None and n < lo:
        return _raise(text, f"{name}={value} is too small", f"use at least {show(lo)}")
    if hi is not None and n > hi:
        return _raise(text, f"{name}={value} is too large", f"use at most {show(hi)}")
    return number


def _raise(text: str, problem: str, fix: str) -> str:
    raise _fail(text, problem, fix)


def parse_mount_spec(text: str) -> MountSpec:
    """Parse `KIND[:opt=val,opt=val]` into a validated MountSpec.

    Raises UsageError with a one-line message naming the problem and the fix.
    """
    raw = text.strip()
    kind, sep, rest = raw.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise _fail(text, f"unknown mount kind {kind!r}", f"use one of {', '.join(KINDS)}")
    definition = KINDS[kind]
    table = definition.options
    given: dict[str, str] = {}
    if sep and not rest.strip():
        raise _fail(text, "nothing after ':'", f"write {kind} alone or {kind}:opt=value")
    for item in rest.split(",") if rest.strip() else []:
        name, eq, value = (s.strip() for s in item.partition("="))
        name = name.lower().replace("-", "_")
        if not table:
            raise _fail(text, f"{kind} takes no options", f"write {kind} alone")
        if name not in table:
            raise _fail(text, f"unknown {kind} option {name!r}", f"use one of {', '.join(sorted(table))}")
        if not eq or not value:
            raise _fail(text, f"option {name!r} has no value", f"write {name}=VALUE")
        if name in given:
            raise _fail(text, f"option {name!r} given twice", "give each option once")
        given[name] = _check_value(text, kind, name, table[name], value)
    problem = definition.option_problem(given)
    if problem is not None:
        raise _fail(text, *problem)
    effective = definition.defaults(given)
    effective.update(given)
    # Options keep the table's order (most telling first), not the order given.
    return MountSpec(kind, tuple((n, effective[n]) for n in table if n in effective), definition)


DEFAULT_MOUNT_TEXTS: Final = ("9p", "9p:cache=loose", "virtiofs", "sshfs", "disk", "guest-tmpfs")
DEFAULT_MOUNTS: Final[tuple[MountSpec, ...]] = tuple(parse_mount_spec(t) for t in DEFAULT_MOUNT_TEXTS)
