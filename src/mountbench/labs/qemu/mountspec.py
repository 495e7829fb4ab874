"""Mount specs: `TYPE[:opt=val,...]` naming one way for a guest to reach storage.

A spec is parsed once, validated completely, and carries its effective options
(defaults filled in), so two specs that configure the same thing compare equal
and get the same label.
"""

from __future__ import annotations

from typing import Final

from mountbench.errors import UsageError
from mountbench.labs.qemu.mounts import MOUNT_TYPES
from mountbench.labs.qemu.mounts.guestmount import MountSpec, Option, format_size
from mountbench.units import parse_size


def _fail(text: str, problem: str, fix: str) -> UsageError:
    return UsageError(f"mount spec {text!r}: {problem}; {fix}")


def _check_value(text: str, type_name: str, name: str, opt: Option, value: str) -> str:
    if opt.type == "choice":
        if value not in opt.choices:
            return _raise(text, f"{type_name} {name}={value} is not valid", f"use {name}={'|'.join(opt.choices)}")
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
    """Parse `TYPE[:opt=val,opt=val]` into a validated MountSpec.

    Raises UsageError with a one-line message naming the problem and the fix.
    """
    raw = text.strip()
    type_name, sep, rest = raw.partition(":")
    type_name = type_name.strip().lower()
    if type_name not in MOUNT_TYPES:
        raise _fail(text, f"unknown mount type {type_name!r}", f"use one of {', '.join(MOUNT_TYPES)}")
    definition = MOUNT_TYPES[type_name]
    table = definition.options
    given: dict[str, str] = {}
    if sep and not rest.strip():
        raise _fail(text, "nothing after ':'", f"write {type_name} alone or {type_name}:opt=value")
    for item in rest.split(",") if rest.strip() else []:
        name, eq, value = (s.strip() for s in item.partition("="))
        name = name.lower().replace("-", "_")
        if not table:
            raise _fail(text, f"{type_name} takes no options", f"write {type_name} alone")
        if name not in table:
            raise _fail(text, f"unknown {type_name} option {name!r}", f"use one of {', '.join(sorted(table))}")
        if not eq or not value:
            raise _fail(text, f"option {name!r} has no value", f"write {name}=VALUE")
        if name in given:
            raise _fail(text, f"option {name!r} given twice", "give each option once")
        given[name] = _check_value(text, type_name, name, table[name], value)
    problem = definition.option_problem(given)
    if problem is not None:
        raise _fail(text, problem.what, problem.fix)
    effective = definition.defaults(given)
    effective.update(given)
    # Options keep the table's order (most telling first), not the order given.
    return MountSpec(type_name, tuple((n, effective[n]) for n in table if n in effective), definition)


DEFAULT_MOUNT_TEXTS: Final = ("9p", "9p:cache=loose", "virtiofs", "sshfs", "disk", "guest-tmpfs")
DEFAULT_MOUNTS: Final[tuple[MountSpec, ...]] = tuple(parse_mount_spec(t) for t in DEFAULT_MOUNT_TEXTS)
