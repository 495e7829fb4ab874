"""Text that came from elsewhere, made safe to show: every character that could steer a terminal
or hide in a page (escape sequences, the bell, carriage returns, bidirectional overrides, lone
surrogates of undecodable bytes) is written out as a Python escape (``\\x1b``) instead.

Runs are read through here wherever they are loaded (records/codec.py: the store's rows and the
documents `import` and `report --from` read; the store's own run list): a host name, a command,
a target's path and mount facts, a workload's title, a sample's error, a caveat, whatever an
imported file or a target's name holds, is shown and never obeyed. Line breaks and tabs stay
(errors and caveats span lines). fio's raw output is left as it was: it is kept, never shown."""

from __future__ import annotations

from typing import Any

KEPT = frozenset("\n\t ")
NOT_SHOWN = frozenset({"raw"})  # fio's own output: stored and exported as it came, never printed


def escaped(text: str) -> str:
    """``text`` with every character that is not printable (line breaks and tabs aside) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in KEPT else _escape(c) for c in text)


def _escape(c: str) -> str:
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escaped_tree(value: Any) -> Any:
    """Every string in ``value`` (dict keys too, nested lists and dicts) escaped; other values as
    they are; the entries named in :data:`NOT_SHOWN` left alone."""
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, dict):
        return {
            escaped(k) if isinstance(k, str) else k: v if k in NOT_SHOWN else escaped_tree(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        if all(isinstance(item, int | float) for item in value):  # the usual series: nothing to look at
            return value
        return type(value)(escaped_tree(item) for item in value)
    return value
