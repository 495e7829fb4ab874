"""What a line may never break: a number and its unit ("91 %", "2.33 GB/s", "12 rounds"), an option and
its value ("--runtime 1", "--out report.html", "--until 5%"), a date and its time, an interval
("0.140–8.89×"). Issue 48: "100" and "%" on two lines of a phone, "e.g. --" / "runtime 1" in the warnings
box, "(0.140–8." / "89×)" in a terminal cell.

``spans(text)`` finds them; the terminal wraps with their spaces held (``hold``: U+00A0 while it wraps,
a plain space again in what it prints, so a command copied from it still works), and the page wraps each
in a span that does not break (``html``). Pure."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

_UNIT = r"(?:%|[kMGTPE]?i?B/s|[kMGTPE]?i?B|IOPS|ns|µs|ms|s|min|h|days?|rounds?|samples?|CPUs?|GiB|MiB|KiB)"
_VALUE = r"(?:\d[^\s;,)]*|[\w.-]+\.[a-z]{2,4}\b|[A-Z][A-Z0-9_]*\b|MB/s|IOPS|µs|auto|steady|fresh|per-round)"
WHOLE = re.compile(
    rf"(?<![\w.])\d[\d.,]*\s{_UNIT}(?![\w/])"  # 91 %, 2.33 GB/s, 12 rounds
    r"|\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?"  # 2026-11-29 10:01
    rf"|--[a-z][a-z0-9-]*(?:[ =]{_VALUE})?"  # --runtime 1, --out report.html, --detail
    rf"|[(≥±~]?\d[\d.]*[kMGTPE]?–\d[\d.]*[kMGTPE]?(?:×\)?|\)|\s{_UNIT}(?![\w/]))?"  # (0.140–8.89×), 9–14 rounds
)
HELD = "\u00a0"  # what a held space is while the terminal wraps


def spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` has something no line may break."""
    return [match.span() for match in WHOLE.finditer(text)]


def hold(text: str) -> str:
    """``text`` with the spaces inside what may not break held (U+00A0): textwrap and the terminal's own
    wrapping break at plain spaces only. ``release`` turns them back."""
    return WHOLE.sub(lambda match: match.group(0).replace(" ", HELD), text)


def release(text: str) -> str:
    return text.replace(HELD, " ")


def html(text: str) -> Markup:
    """``text`` escaped for the page, each thing no line may break in a span that keeps it on one line
    (the page's CSS: ``span.nw { white-space: nowrap }``)."""
    out: list[str] = []
    last = 0
    for start, end in spans(text):
        out.append(str(escape(text[last:start])))
        out.append(f'<span class="nw">{escape(text[start:end])}</span>')
        last = end
    out.append(str(escape(text[last:])))
    return Markup("".join(out))
