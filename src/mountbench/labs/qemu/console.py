"""The guest's serial console: read in a thread, logged, handed over as timed lines.

Guest init speaks in marker lines (`MB-LAB <event> <args...>`); everything else
is kernel or command output. A marker may follow unterminated command output on
the same line, so markers are searched for, not only matched at the start.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mountbench.host import process as procs

if TYPE_CHECKING:
    import subprocess

MARKER_RE = re.compile(r"MB-LAB ([a-z0-9-]+)(?: (.*))?$")


@dataclass(frozen=True)
class ConsoleLine:
    """One console line, when it arrived (time.monotonic()), and its marker if any."""

    t: float
    text: str  # output before the marker (the whole line when there is none)
    event: str | None = None
    args: str = ""


def parse_line(t: float, raw: str) -> ConsoleLine:
    """Split a marker off a console line."""
    m = MARKER_RE.search(raw)
    if m is None:
        return ConsoleLine(t, raw)
    return ConsoleLine(t, raw[: m.start()], m.group(1), m.group(2) or "")


class Console:
    """Reads QEMU's stdout (a pipe: the guest's console); keeps a log file and the last lines for
    error messages."""

    def __init__(self, qemu: subprocess.Popen[bytes], log_path: Path, tail: int = 60) -> None:
        self.lines: queue.Queue[ConsoleLine | None] = queue.Queue()
        self.log_path = log_path
        self._tail: deque[str] = deque(maxlen=tail)
        self._qemu = qemu
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="mountbench-lab-console", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with self.log_path.open("a", encoding="utf-8", errors="replace") as log:

            def take(line: str) -> None:
                text, t = line.replace("\r", ""), time.monotonic()
                log.write(text + "\n")
                log.flush()
                with self._lock:
                    self._tail.append(text)
                self.lines.put(parse_line(t, text))

            try:
                procs.stream(self._qemu, take)
            except (OSError, ValueError):
                pass
            finally:
                self.lines.put(None)  # end of console: QEMU has exited

    def tail(self, n: int = 25) -> list[str]:
        """The last `n` console lines, for error messages."""
        with self._lock:
            return list(self._tail)[-n:]

    def join(self, timeout: float = 5.0) -> None:
        self._thread.join(timeout)
