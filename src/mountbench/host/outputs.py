"""Every file mountbench writes for the user (--json, --out, --events, charts and CSV files next
to a report) goes through here, so nothing a user owns is ever replaced by accident.

An output may be

- ``-``: standard output;
- a path that does not exist yet, in an existing writable directory;
- an existing *regular* file that is neither the results database (nor its journal) nor one of
  the command's inputs (job files, files read with --from, a tarball): it is rewritten.

Devices (``/dev/null``, ``/dev/full``), directories, FIFOs and sockets are refused with one
line naming the fix. A symbolic link is written through (its target gets the new content,
the link stays a link); a dangling or looping link is refused. Writing is atomic: a temp
file next to the real file, then a rename over it, so a reader never sees half a document.
Everything is checked once when the command starts (:func:`check`) and again just before
each write (the path may have changed meanwhile).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mountbench.errors import UsageError

STDOUT = "-"
_DB_COMPANIONS = ("", "-journal", "-wal", "-shm")


@dataclass(frozen=True)
class Protected:
    """A file an output must never be: ``what`` says what it is ('the results database')."""

    path: Path
    what: str


def database(path: Path | None) -> list[Protected]:
    """The results database and the files SQLite keeps next to it."""
    if path is None:
        return []
    base = Path(path).expanduser()
    return [Protected(Path(f"{base}{suffix}"), "the results database") for suffix in _DB_COMPANIONS]


def inputs(paths: Sequence[Path | str], what: str) -> list[Protected]:
    return [Protected(Path(p).expanduser(), what) for p in paths]


@dataclass(frozen=True)
class Output:
    """A checked output: ``real`` is where the bytes go (a symlink followed), None for stdout."""

    option: str
    given: str
    real: Path | None
    protected: tuple[Protected, ...] = field(default=())

    @property
    def is_stdout(self) -> bool:
        return self.real is None

    def __str__(self) -> str:
        return "standard output" if self.real is None else self.given

    def sibling(self, name: str) -> Output:
        """A file next to this one (a report's charts, the -samples.csv), checked the same way."""
        if self.real is None:
            raise UsageError(f"{self.option} - writes to standard output; give a file name to get {name} too")
        return check(Path(self.given).with_name(name), self.option, self.protected)

    def write_text(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))

    def write_bytes(self, data: bytes) -> None:
        if self.real is None:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
            return
        again = check(Path(self.given), self.option, self.protected)  # it may have changed since
        _atomic_write(again, data)


def check(path: Path | str, option: str, protect: Sequence[Protected] = ()) -> Output:
    """Refuse (UsageError, one line) an output path mountbench must not write; see the module doc."""
    given = str(path)
    if given == STDOUT:
        return Output(option, given, None, tuple(protect))
    place = Path(given).expanduser()
    real = _follow(place, option)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UsageError(f"{option} {given} cannot be examined ({exc.strerror}); choose another path") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{option} {given} is a directory; give a file name, e.g. {place / 'results.json'}")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(
                f"{option} {given} is {_kind(st.st_mode)}, not a regular file: mountbench writes only new files "
                "or regular ones; give a file name (or - for standard output)"
            )
    for other in protect:
        if _same(real, st, other.path):
            raise UsageError(f"{option} {given} is {other.what}; writing there would destroy it: choose another file")
    parent = real.parent
    if not parent.is_dir():
        raise UsageError(
            f"{option} {given}: cannot write there, directory {parent} does not exist; "
            "create it first or choose another path"
        )
    if not os.access(parent, os.W_OK | os.X_OK) or (st is not None and not os.access(real, os.W_OK)):
        raise UsageError(f"{option} {given} cannot be written (read-only or no permission); choose a writable path")
    return Output(option, given, real, tuple(protect))


def _follow(place: Path, option: str) -> Path:
    """The path the bytes go to: a symlink (chain) followed to its end, which must exist or be
    creatable in an existing directory; the link itself is never replaced."""
    if not os.path.islink(place):
        return Path(os.path.abspath(place))
    try:
        real = place.resolve(strict=True)
    except (OSError, RuntimeError):
        raise UsageError(
            f"{option} {place} is a symbolic link that leads nowhere (dangling or a loop); "
            "mountbench writes through a link only to an existing file: fix the link or choose another path"
        ) from None
    return real


def _same(real: Path, st: os.stat_result | None, other: Path) -> bool:
    try:
        theirs = os.stat(other)
    except OSError:
        theirs = None
    if st is not None and theirs is not None:
        return (st.st_dev, st.st_ino) == (theirs.st_dev, theirs.st_ino)
    with contextlib.suppress(OSError, RuntimeError):
        return real == other.resolve()
    return False


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _atomic_write(output: Output, data: bytes) -> None:
    real = output.real
    assert real is not None
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    except OSError:
        mode = 0o644
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as stream:
            os.fchmod(stream.fileno(), mode)
            stream.write(data)
        os.replace(tmp, real)
        tmp = None
    except OSError as exc:
        raise UsageError(f"cannot write {output.given} ({exc.strerror}); choose a writable path") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_files(
    place: Path | Callable[[str], Output], files: Iterable[tuple[str, bytes]], option: str = "--out"
) -> list[Path]:
    """Write each (name, bytes) into a directory, or where ``place`` puts the name (an
    Output's ``sibling``: a report's charts next to it); each file checked as any output."""
    if isinstance(place, Path):
        directory = place
        place = lambda name: check(directory / name, option)  # noqa: E731
    written = []
    for name, data in files:
        output = place(name)
        output.write_bytes(data)
        written.append(Path(output.given))
    return written
