"""Mount specs: `KIND[:opt=val,...]` naming one way for a guest to reach storage.

A spec is parsed once, validated completely, and carries its effective options
(defaults filled in), so two specs that configure the same thing compare equal
and get the same label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from mountbench.errors import UsageError
from mountbench.lab.mounts import KINDS, MountKind, Option
from mountbench.units import parse_size

_SIZE_MULT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def format_size(n: int) -> str:
    """Shortest exact binary form of a byte count: 4294967296 -> `4G`."""
    for suffix in ("T", "G", "M", "K"):
        mult = _SIZE_MULT[suffix]
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


@dataclass(frozen=True)
class MountSpec:
    """One mount under test, with its effective options (defaults filled in).

    `options` is a tuple of (name, value) in a fixed order, so the spec is hashable
    and two spellings of the same configuration compare equal.
    """

    kind: str
    options: tuple[tuple[str, str], ...] = ()

    @property
    def mount_kind(self) -> MountKind:
        """The kind's definition in the registry (lab/mounts)."""
        return KINDS[self.kind]

    def get(self, name: str, default: str | None = None) -> str | None:
        """The effective value of one option (None when unset and without default)."""
        return dict(self.options).get(name, default)

    @property
    def label(self) -> str:
        """Readable name with the full option set, e.g. `9p cache=loose msize=512000`.

        Core options always appear; the others only when they differ from the
        default, so equal specs have equal labels.
        """
        parts = [self.kind]
        table = self.mount_kind.options
        for name, value in self.options:
            opt = table[name]
            if opt.core or value != opt.default:
                parts.append(f"{name}={value}")
        return " ".join(parts)

    @property
    def slug(self) -> str:
        """Short path-safe name, used for /mnt/<slug> in the guest.

        Only options that differ from their default appear, so the default specs
        get the plain kind (`9p`, `disk`) and variants stay short (`9p-cache-loose`).
        """
        parts = [self.kind]
        table = self.mount_kind.options
        for name, value in self.options:
            if value != table[name].default:
                parts.append(f"{name}-{value}")
        return re.sub(r"[^A-Za-z0-9.-]+", "-", "-".join(parts)).strip("-").lower()

    @property
    def spec_text(self) -> str:
        """The canonical spec string that parses back to this spec."""
        if not self.options:
            return self.kind
        return self.kind + ":" + ",".join(f"{k}={v}" for k, v in self.options)

    @property
    def size_bytes(self) -> int | None:
        """The `size=` option in bytes, when the kind has one."""
        size = self.get("size")
        return parse_size(size) if size is not None else None

    def __str__(self) -> str:
        return self.label


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
    return MountSpec(kind, tuple((n, effective[n]) for n in table if n in effective))


DEFAULT_MOUNT_TEXTS: Final = ("9p", "9p:cache=loose", "virtiofs", "sshfs", "disk", "guest-tmpfs")
DEFAULT_MOUNTS: Final[tuple[MountSpec, ...]] = tuple(parse_mount_spec(t) for t in DEFAULT_MOUNT_TEXTS)
