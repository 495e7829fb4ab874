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
from mountbench.units import parse_size

KINDS: Final = ("9p", "virtiofs", "sshfs", "disk", "guest-tmpfs")

_SIZE_MULT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def format_size(n: int) -> str:
    """Shortest exact binary form of a byte count: 4294967296 -> `4G`."""
    for suffix in ("T", "G", "M", "K"):
        mult = _SIZE_MULT[suffix]
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


@dataclass(frozen=True)
class _Opt:
    """One option of a kind: its allowed values (or a type), default, and whether
    the label always shows it (`core`) or only when it differs from the default."""

    choices: tuple[str, ...] = ()
    kind: str = "choice"  # choice | int | size
    default: str | None = None
    core: bool = False
    minimum: int | None = None
    maximum: int | None = None
    doc: str = ""


_OPTIONS: Final[dict[str, dict[str, _Opt]]] = {
    "9p": {
        "cache": _Opt(("none", "loose", "mmap", "fscache"), default="none", core=True),
        "msize": _Opt(kind="int", default="512000", core=True, minimum=4096, maximum=4 << 20),
        "security_model": _Opt(("mapped-xattr", "mapped-file", "passthrough", "none"), default="mapped-xattr"),
    },
    "virtiofs": {
        "cache": _Opt(("never", "auto", "always"), default="auto", core=True),
        "thread_pool_size": _Opt(kind="int", minimum=0, maximum=1024),
        "direct_io": _Opt(("off", "on"), default="off"),
        "daemon": _Opt(("auto", "qemu", "rust"), default="auto"),
    },
    "sshfs": {},
    "disk": {
        "format": _Opt(("raw", "qcow2"), default="raw", core=True),
        "cache": _Opt(
            ("none", "writeback", "writethrough", "directsync", "unsafe"),
            default="none",
            core=True,
        ),
        "preallocation": _Opt(("off", "metadata", "full"), default="off"),
        "size": _Opt(kind="size", default="4G", core=True, minimum=64 << 20),
    },
    "guest-tmpfs": {
        "size": _Opt(kind="size", minimum=1 << 20),
    },
}


@dataclass(frozen=True)
class MountSpec:
    """One mount under test, with its effective options (defaults filled in).

    `options` is a tuple of (name, value) in a fixed order, so the spec is hashable
    and two spellings of the same configuration compare equal.
    """

    kind: str
    options: tuple[tuple[str, str], ...] = ()

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
        table = _OPTIONS[self.kind]
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
        table = _OPTIONS[self.kind]
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


def _check_value(text: str, kind: str, name: str, opt: _Opt, value: str) -> str:
    if opt.kind == "choice":
        if value not in opt.choices:
            return _raise(text, f"{kind} {name}={value} is not valid", f"use {name}={'|'.join(opt.choices)}")
        return value
    if opt.kind == "int":
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
    if kind not in _OPTIONS:
        raise _fail(text, f"unknown mount kind {kind!r}", f"use one of {', '.join(KINDS)}")
    table = _OPTIONS[kind]
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
    if kind == "disk" and "preallocation" in given and given.get("format", "raw") != "qcow2":
        raise _fail(text, "preallocation= applies to qcow2 images only", "add format=qcow2 or drop it")
    effective = {n: o.default for n, o in table.items() if o.default is not None}
    if kind == "disk" and given.get("format") != "qcow2":
        del effective["preallocation"]  # a raw image has no allocation mode here
    effective.update(given)
    # Options keep the table's order (most telling first), not the order given.
    return MountSpec(kind, tuple((n, effective[n]) for n in table if n in effective))


DEFAULT_MOUNT_TEXTS: Final = ("9p", "9p:cache=loose", "virtiofs", "sshfs", "disk", "guest-tmpfs")
DEFAULT_MOUNTS: Final[tuple[MountSpec, ...]] = tuple(parse_mount_spec(t) for t in DEFAULT_MOUNT_TEXTS)
