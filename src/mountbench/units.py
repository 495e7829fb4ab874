"""Parsing and formatting of sizes, durations and rates. Pure functions."""

from __future__ import annotations

import math
import re

from mountbench.errors import UsageError

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size(text: str | int) -> int:
    """Parse a size the way fio does by default (kb_base=1024): ``4k``, ``1G``, ``256MiB``.

    A bare number is bytes. Suffixes are powers of 1024, as in fio's default.
    """
    if isinstance(text, int):
        return text
    match = _SIZE_RE.match(str(text))
    if not match:
        raise UsageError(f"cannot read size {text!r}: use a number with an optional k/M/G/T suffix, e.g. 512M")
    number, prefix, _i, _b = match.groups()
    value = float(number) * 1024 ** _POWERS[prefix.lower()]
    if not math.isfinite(value) or value > SIZE_LIMIT:
        raise UsageError(f"size {str(text).strip()[:40]!r} is larger than any storage holds (at most 8 EiB); give a "
                         "smaller one, e.g. 512M")  # fmt: skip
    return int(value)


SIZE_LIMIT = 2**63 - 1  # what fio (and every filesystem) counts in


_SECONDS = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "": 1.0, "s": 1.0, "sec": 1.0, "m": 60.0,
            "min": 60.0, "h": 3600.0, "d": 86400.0}  # fmt: skip
_SECONDS_RE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*")


def parse_seconds(text: str) -> float | None:
    """A duration as fio and every duration option take it: a bare number is seconds; ``500ms``,
    ``2.5s``, ``2m``, ``1h``, ``250us``. None when it is not one. The one duration parser:
    --runtime, --budget and fio's own time options read durations alike."""
    match = _SECONDS_RE.fullmatch(str(text).lower())
    if not match or match.group(2) not in _SECONDS:
        return None
    return float(match.group(1)) * _SECONDS[match.group(2)]


UNITLESS_MINIMUM = 1 << 20


def parse_working_set(text: str, option: str = "--size") -> int:
    """A working-set size given on the command line: as :func:`parse_size`, but a number
    without a unit below 1 MiB is refused (``--size 1`` meant 1 GiB or 1 MiB, never 1 byte)."""
    size = parse_size(text)
    match = _SIZE_RE.match(str(text))
    if match and not match.group(2) and not match.group(4) and size < UNITLESS_MINIMUM:
        raise UsageError(f"{option} {str(text).strip()}: a size without a unit is bytes, far too small for a "
                         "working set; give a unit, e.g. 64M or 1G")  # fmt: skip
    return size


def format_bytes(value: float) -> str:
    """Binary units, 3 significant figures: ``1.50 GiB``; ``1.00 MiB`` for 1023.9 KiB."""
    return _stepped(value, 1024.0, ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"), " ")


def format_rate(bytes_per_s: float) -> str:
    """Bandwidth in decimal kB/s to PB/s, as storage people quote it: ``1.23 GB/s``."""
    if math.isfinite(bytes_per_s) and abs(bytes_per_s) < 1e3:
        return f"{_sig3(bytes_per_s / 1e3)} kB/s"  # never "B/s": storage is quoted from kB/s up
    return _stepped(bytes_per_s, 1000.0, ("B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"), " ")


def format_count(value: float) -> str:
    """``950``, ``12.3k``, ``1.23M``, ``4.56G``, ``7.89T``, ``1.00P`` (3 significant figures)."""
    return _stepped(value, 1000.0, ("", "k", "M", "G", "T", "P", "E"), "")


def _stepped(value: float, step: float, units: tuple[str, ...], space: str) -> str:
    """``value`` in the largest unit that keeps it under ``step`` once rounded to 3 significant
    figures (999.7k is ``1.00M``, not ``1000k``); the last unit takes whatever is left."""
    if not math.isfinite(value):
        return f"{_sig3(value)}{space}{units[0]}"
    for power, unit in enumerate(units):
        text = _sig3(value / step**power)
        if power == len(units) - 1 or "1/" in text or (_is_plain(text) and abs(float(text)) < step):
            return f"{text}{space}{unit}"
    raise AssertionError("unreachable")


def _is_plain(text: str) -> bool:
    """Digits alone (not sig3's 1.00M, 1/25600 or 1.57×10²¹)."""
    return bool(re.fullmatch(r"-?[\d.]+", text))


def format_seconds(seconds: float) -> str:
    """A duration from nanoseconds to hours: ``850 ns``, ``12.3 µs``, ``4.56 ms``, ``2.10 s``."""
    if seconds < 1e-6:
        return f"{_sig3(seconds * 1e9)} ns"
    if seconds < 1e-3:
        return f"{_sig3(seconds * 1e6)} µs"
    if seconds < 1:
        return f"{_sig3(seconds * 1e3)} ms"
    if seconds < 600:
        return f"{_sig3(seconds)} s"
    if seconds >= 48 * 3600:  # never '277777777h46m': days, and sig3 keeps even those short
        return f"{sig3(seconds / 86400)} days"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _sig3(value: float) -> str:
    """Three significant figures without scientific notation (0.9996 is ``1.00``, not ``1.000``);
    never a long string of digits (sig3's forms past a million and below 0.0001)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if not SIG3_SMALL <= abs(value) < SIG3_LARGE:
        return sig3(value)
    magnitude = math.floor(math.log10(abs(value)))
    text = f"{value:.{max(0, 2 - magnitude)}f}"
    if abs(float(text)) >= 10 ** (magnitude + 1):  # rounded up to the next power of ten: one digit fewer
        text = f"{value:.{max(0, 1 - magnitude)}f}"
    return text


SIG3_LARGE = 1e6  # from here sig3 counts in M, G, T, P, E: never a string of digits (issue 48)
SIG3_SMALL = 1e-4  # below this sig3 says 1/N: 0.0000000169 is 1/59.2M
_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sig3(value: float) -> str:
    """Three significant digits for people, never scientific notation and never a long string of
    digits: 0.0391, 6.20, 25.6, 201, 1240, 125000; from a million on counted in M, G, T, P, E
    (59.0M, as format_count counts); below 0.0001 as one over that (1/59.2M); past 10²¹ as a
    power of ten (6.36×10³⁶). At most 11 characters, whatever the value."""
    if not math.isfinite(value):
        return "?"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + sig3(-value)
    if value < SIG3_SMALL:
        return "1/" + sig3(1 / value)
    text = _plain(value)
    return _large(value) if value >= SIG3_LARGE or float(text) >= SIG3_LARGE else text


def _plain(value: float) -> str:
    """sig3's digits for a positive finite value, however large or small."""
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 2:
        return f"{round(value, 2 - magnitude):.0f}"
    text = f"{value:.{2 - magnitude}f}"
    if abs(float(text)) >= 10 ** (magnitude + 1):  # 9.996 rounds up to 10.00: one digit too many
        return _plain(float(text))
    return text


def _large(value: float) -> str:
    """sig3 from a million on: 1.00M … 999E, then 1.00×10²¹ (a power of ten)."""
    if value < 999.5e18:
        for power, suffix in ((6, "M"), (9, "G"), (12, "T"), (15, "P"), (18, "E")):
            text = _plain(value / 10**power)
            if float(text) < 1000:  # 999.6M rounds to 1000M: one step up
                return text + suffix
    exponent = math.floor(math.log10(value))
    mantissa = _plain(value / 10**exponent)
    if float(mantissa) >= 10:
        exponent, mantissa = exponent + 1, _plain(value / 10 ** (exponent + 1))
    return f"{mantissa}×10{str(exponent).translate(_SUPERSCRIPTS)}"
