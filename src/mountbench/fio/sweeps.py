"""Sweeps: one workload run at several values of an option, as study S3's
``for bs in 1k 2k … 16M; do dd …; done`` loop did, but measured properly.

- ``parse_sweep``: ``bs=4k,64k,1M`` (a list) or ``bs=1k..16M`` (every power of two
  from 1k to 16M) into a SweepAxis; bad input is a one-line UsageError.
- ``grid``: the points of one or more axes (several ``--sweep`` make a grid), with the
  name, title and group every generated workload carries, so that reports recognise
  a sweep from how it was made and never have to guess.
- ``detect``: in a hand-written job file, the sections that differ in one sweepable
  option alone (and agree on everything else) form a detected sweep.

Pure functions; the fio kind (kinds/fio.py) applies them to its jobs.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from mountbench.analysis.sweeps import PLACEMENT_OPTIONS, SIZE_OPTIONS, label
from mountbench.errors import UsageError
from mountbench.model import SWEEP_OPTIONS, SweepAxis, SweepPoint, SweepValue
from mountbench.units import parse_size

MAX_POINTS_PER_AXIS = 64
MAX_GRID_POINTS = 1024  # per swept workload
MIN_DETECTED_POINTS = 3  # fewer sections are not worth calling a curve
COUNT_LIMITS = {"iodepth": 65536, "numjobs": 4096}
# block sizes a sample can use: below 512 bytes O_DIRECT fails, above 256 MiB one block outgrows any
# working set a run lays out (each point would fail, or measure nothing but the block's own allocation)
BS_LIMITS = (512, 256 << 20)
EXAMPLE = "e.g. --sweep bs=4k,64k,1M or --sweep bs=1k..16M"
# fio's defaults, so a section that leaves an option out still lines up with the others
DEFAULTS = {"bs": "4k", "iodepth": "1", "numjobs": "1"}


# --- parsing ----------------------------------------------------------------------------------


def parse_sweep(text: str) -> SweepAxis:
    """``OPTION=VALUES``: a comma-separated list, or ``LOW..HIGH`` doubling from LOW to HIGH."""
    option, sep, values = (part.strip() for part in text.partition("="))
    option = option.lower()
    if not sep or not option or not values:
        raise UsageError(f"--sweep {text!r}: give OPTION=VALUES, {EXAMPLE}")
    if option == "blocksize":
        option = "bs"
    if option not in SWEEP_OPTIONS:
        raise UsageError(f"--sweep {text!r}: cannot sweep {option!r}; choose one of {', '.join(SWEEP_OPTIONS)}")
    if ".." in values:
        numbers = _range(text, option, values)
    else:
        numbers = [_number(text, option, item.strip()) for item in values.split(",")]
    seen: set[int] = set()
    for number in numbers:
        if number in seen:
            raise UsageError(f"--sweep {text!r}: {label(option, number)} is given twice; give each value once")
        seen.add(number)
    if len(numbers) > MAX_POINTS_PER_AXIS:
        raise UsageError(f"--sweep {text!r}: {len(numbers)} values; give at most {MAX_POINTS_PER_AXIS}")
    return SweepAxis(option, tuple(label(option, n) for n in numbers), tuple(float(n) for n in numbers), text.strip())


def _range(text: str, option: str, values: str) -> list[int]:
    low_text, _, high_text = values.partition("..")
    low, high = _number(text, option, low_text.strip()), _number(text, option, high_text.strip())
    if high < low:
        raise UsageError(
            f"--sweep {text!r}: a range runs from the smaller value to the larger, "
            f"e.g. {option}={label(option, high)}..{label(option, low)}"
        )
    if high % low or (high // low) & (high // low - 1):
        raise UsageError(
            f"--sweep {text!r}: {label(option, high)} is not {label(option, low)} times a power of two; "
            f"a range doubles from its start, e.g. {option}={label(option, low)}..{label(option, low * 8)}"
        )
    count = (high // low).bit_length()
    if count > MAX_POINTS_PER_AXIS:
        raise UsageError(f"--sweep {text!r}: {count} values; give at most {MAX_POINTS_PER_AXIS}")
    return [low << k for k in range(count)]


def _number(text: str, option: str, item: str) -> int:
    if not item:
        raise UsageError(f"--sweep {text!r}: an empty value; {EXAMPLE}")
    if option in SIZE_OPTIONS:
        try:
            number = parse_size(item)
        except UsageError:
            raise UsageError(f"--sweep {text!r}: {item!r} is not a size; use e.g. 4k, 64k, 1M") from None
        if number <= 0:
            raise UsageError(f"--sweep {text!r}: {item!r} is not a positive size; use e.g. 4k, 64k, 1M")
        low, high = BS_LIMITS
        if option == "bs" and not low <= number <= high:
            raise UsageError(
                f"--sweep {text!r}: a block size of {item} cannot be measured; give block sizes from "
                f"{label(option, low)} to {label(option, high)}, e.g. bs=4k..16M"
            )
        return number
    try:
        number = int(item)
    except ValueError:
        raise UsageError(f"--sweep {text!r}: {item!r} is not a whole number; use e.g. {option}=1,8,32") from None
    limit = COUNT_LIMITS[option]
    if not 1 <= number <= limit:
        raise UsageError(f"--sweep {text!r}: {option} must be between 1 and {limit}, not {number}")
    return number


def merge_axes(declared: Sequence[SweepAxis], given: Sequence[SweepAxis]) -> tuple[SweepAxis, ...]:
    """A preset's own sweep, with the command line's: a given option replaces the
    preset's axis for that option in place; other given options extend the grid."""
    given_by_option = {axis.option: axis for axis in given}
    merged = [given_by_option.pop(axis.option, axis) for axis in declared]
    return (*merged, *(axis for axis in given if axis.option in given_by_option))


def check_axes(axes: Sequence[SweepAxis]) -> None:
    options = [axis.option for axis in axes]
    for option in options:
        if options.count(option) > 1:
            raise UsageError(f"--sweep {option}= is given twice; give each option once (several options make a grid)")
    points = 1
    for axis in axes:
        points *= len(axis.values)
    if points > MAX_GRID_POINTS:
        raise UsageError(
            f"--sweep {' --sweep '.join(a.text for a in axes)} makes {points} points per workload; "
            f"narrow a range (at most {MAX_GRID_POINTS})"
        )


# --- generated points ----------------------------------------------------------------------------


def grid(axes: Sequence[SweepAxis]) -> list[tuple[SweepValue, ...]]:
    """Every point of the axes' product, first axis slowest."""
    per_axis = [
        [SweepValue(axis.option, value, number) for value, number in zip(axis.values, axis.numbers, strict=True)]
        for axis in axes
    ]
    return [tuple(point) for point in itertools.product(*per_axis)]


def point_name(base: str, coordinates: Sequence[SweepValue]) -> str:
    """``seqw@bs=4k``; ``seqw@bs=4k,iodepth=8`` in a grid."""
    return f"{base}@" + ",".join(f"{c.option}={c.value}" for c in coordinates)


def point_title(title: str, coordinates: Sequence[SweepValue]) -> str:
    return f"{title} (" + ", ".join(f"{c.option}={c.value}" for c in coordinates) + ")"


def group_name(source: str, base: str, axes: Sequence[SweepAxis]) -> str:
    """What the points of one generated sweep share: the workload they were made from."""
    return f"{source} {base} over {' × '.join(axis.option for axis in axes)}"


def generated_point(group: str, coordinates: Sequence[SweepValue]) -> SweepPoint:
    first, *rest = coordinates
    return SweepPoint(group, first.option, first.value, first.number, generated=True, grid=tuple(rest))


# --- detected in job files -----------------------------------------------------------------------


def detect(jobs: Sequence[tuple[str, Mapping[str, str]]], source: str) -> dict[str, SweepPoint]:
    """Section name -> its point, for sections that differ from at least two others in one
    sweepable option alone. ``jobs`` are (section, effective options: canonical name ->
    last value); options that only place files or order jobs are not compared. A section
    joins at most one detected sweep (the first option in SWEEP_OPTIONS order); for grids,
    use --sweep."""
    points: dict[str, SweepPoint] = {}
    for option in SWEEP_OPTIONS:
        groups: dict[tuple, list[tuple[str, str, int]]] = {}
        for section, options in jobs:
            if section in points:
                continue
            text = options.get(option, DEFAULTS.get(option))
            number = plain_number(option, text)
            if number is None:
                continue
            rest = tuple(sorted((k, v) for k, v in options.items() if k != option and k not in PLACEMENT_OPTIONS))
            groups.setdefault(rest, []).append((section, str(text), number))
        found = [members for members in groups.values() if _is_sweep(members)]
        for index, members in enumerate(found, 1):
            group = f"{source} sections differing in {option}" + (f" #{index}" if len(found) > 1 else "")
            for section, text, number in members:
                points[section] = SweepPoint(group, option, text, float(number), generated=False)
    return points


def _is_sweep(members: list[tuple[str, str, int]]) -> bool:
    numbers = [number for _, _, number in members]
    return len(numbers) >= MIN_DETECTED_POINTS and len(set(numbers)) == len(numbers)


def plain_number(option: str, text: str | None) -> int | None:
    """The value of a plain setting (no ranges, splits or variables); None otherwise."""
    if text is None or any(mark in text for mark in ",-:$*/+() "):
        return None
    try:
        return parse_size(text) if option in SIZE_OPTIONS else int(text)
    except (UsageError, ValueError):
        return None
