"""A record as plain JSON values and back, read off its fields and their types: what the
``to_dict``/``from_dict`` of every record in probefacts.py (what a probe found) and labfacts.py
(what a lab made and found) is. On the ground floor: it imports nothing of mountbench.

Written: each field under its own name; a tuple as a list; a nested record as its ``to_dict()``.
Read: each value turned into its field's type (``float | None`` stays None or becomes a float,
``tuple[str, ...]`` a tuple of str, a record its ``from_dict``); a union of several types
(``int | float | str | None``) and ``Any`` are kept as stored. A missing key takes the field's
default, or its type's empty value (None, (), {}, "", 0, False, a record read from {}): a stored
probe may predate a field. Keys that are not fields are ignored.

Only the standard library: the probe agent imports this inside the lab's guest.
"""

from __future__ import annotations

import types
from dataclasses import MISSING, fields, is_dataclass
from functools import cache
from typing import Any, Literal, Self, TypeVar, Union, get_args, get_origin, get_type_hints

R = TypeVar("R")
SCALARS: tuple[type, ...] = (str, int, float, bool)


def to_plain(record: Any) -> dict[str, Any]:
    """The record's fields as JSON values."""
    return {f.name: _plain(getattr(record, f.name)) for f in fields(record)}


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return value.to_dict()  # type: ignore[attr-defined]
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def from_plain(cls: type[R], data: dict[str, Any]) -> R:
    """The record of type ``cls`` that ``data`` (what :func:`to_plain` wrote) holds."""
    hints = _hints(cls)
    values = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            values[f.name] = _typed(hints[f.name], data[f.name])
        elif f.default is MISSING and f.default_factory is MISSING:
            values[f.name] = _empty(hints[f.name])
    return cls(**values)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _arms(hint: Any) -> tuple[Any, ...] | None:
    """A union's members other than None (None: not a union)."""
    if get_origin(hint) in (Union, types.UnionType):
        return tuple(a for a in get_args(hint) if a is not type(None))
    return None


def _typed(hint: Any, value: Any) -> Any:
    arms = _arms(hint)
    if arms is not None:
        if value is None or len(arms) > 1:
            return value
        return _typed(arms[0], value)
    origin = get_origin(hint)
    if origin is tuple:
        return tuple(_typed(get_args(hint)[0], v) for v in value or ())
    if origin is dict:
        key, item = get_args(hint)
        return {_typed(key, k): _typed(item, v) for k, v in (value or {}).items()}
    if is_dataclass(hint):
        return hint.from_dict(value or {})  # type: ignore[attr-defined]
    if hint in SCALARS:
        return hint(value)
    return value  # Any, a Literal: as stored


def _empty(hint: Any) -> Any:
    if _arms(hint) is not None:
        return None
    origin = get_origin(hint)
    if origin is tuple:
        return ()
    if origin is dict:
        return {}
    if is_dataclass(hint):
        return hint.from_dict({})  # type: ignore[attr-defined]
    if origin is Literal:
        return ""
    return hint() if hint in SCALARS else None


class PlainRecord:
    """A frozen dataclass stored as plain JSON values: ``to_dict`` and ``from_dict`` are
    :func:`to_plain` and :func:`from_plain`."""

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return from_plain(cls, data)
