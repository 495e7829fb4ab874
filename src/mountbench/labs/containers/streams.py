"""A child's output as the container lab follows it: stdout and stderr read apart, each split
into lines as bytes and each line decoded as UTF-8 on its own.

One pipe for both (``stderr=STDOUT``) mixes them where the writes fall, not where the lines end:
the child's stdout is block-buffered (its tables leave in 8 KiB chunks, cut anywhere, even inside
a character) while its stderr is written line by line, so a stderr line landed inside a table
border, and the cut character decoded as U+FFFD ("container: ┏━━…━�run … complete", issue 49).
Podman relays a container's two streams the same way. Read apart, every line is whole.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from typing import IO


def decoded(raw: bytes) -> str:
    """One line of a child's output: UTF-8, any byte that is not shown as U+FFFD (a line is whole
    here, so only bytes that were never UTF-8 are), without its line ending."""
    return raw.rstrip(b"\r\n").decode("utf-8", errors="replace")


def follow(proc: subprocess.Popen[bytes], on_line: Callable[[str], None]) -> None:
    """Every line of ``proc``'s stdout and stderr (both pipes, binary) to ``on_line``, one at a time,
    until both end. A line is never split or mixed with the other stream's."""
    lock = threading.Lock()
    failed: list[BaseException] = []

    def pump(stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            with lock:
                on_line(decoded(raw))

    def pump_aside(stream: IO[bytes]) -> None:
        try:
            pump(stream)
        except BaseException as exc:  # raised in the caller's thread below
            failed.append(exc)

    streams = [s for s in (proc.stdout, proc.stderr) if s is not None]
    aside = [threading.Thread(target=pump_aside, args=(s,), daemon=True, name="child-output") for s in streams[1:]]
    for thread in aside:
        thread.start()
    if streams:
        # in this thread: a KeyboardInterrupt or an on_line that raises ends the wait at once (the caller
        # then stops the child, and the other stream's reader ends with it)
        pump(streams[0])
    for thread in aside:
        thread.join()
    if failed:
        raise failed[0]
