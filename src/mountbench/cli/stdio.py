"""Standard output that cannot be written is bad input of a kind, not an internal error: closed
(`mountbench list >&-`), on a full device (`> /dev/full`), on a disk that filled. The guard turns
the write's OSError into one line naming standard output and the cause; a broken pipe (`| head`)
is left to end the command quietly, as it always did."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from mountbench.errors import MountbenchError


class OutputFailed(MountbenchError):
    """Standard output is closed or cannot be written."""


class GuardedStdout:
    """``sys.stdout`` whose writes and flushes that fail raise :class:`OutputFailed`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _failed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _failed(exc: OSError) -> OutputFailed:
    _discard_pending()
    return OutputFailed(f"cannot write to standard output ({exc.strerror or exc}); free space there or send the "
                        "output elsewhere (> file)")  # fmt: skip


def _discard_pending() -> None:
    """What could not be written is dropped: standard output goes to /dev/null from here on, so the
    interpreter's last flush at exit neither fails again nor prints a second error."""
    stream = sys.__stdout__
    if stream is None:
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except OSError:
        pass


def guard_stdout() -> None:
    """Refuse a closed standard output at once; guard an open one (see :class:`GuardedStdout`)."""
    if sys.stdout is None:
        raise OutputFailed("standard output is closed; run mountbench with it open (e.g. > out.txt or > /dev/null)")
    if not isinstance(sys.stdout, GuardedStdout):
        sys.stdout = GuardedStdout(sys.stdout)  # type: ignore[assignment]


def flush_stdout() -> None:
    """Write out what is buffered while errors can still be reported as one line."""
    if sys.stdout is not None:
        sys.stdout.flush()
