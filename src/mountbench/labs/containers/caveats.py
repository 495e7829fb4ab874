"""What a container mount puts on the numbers measured through it, as caveats."""

from __future__ import annotations

from mountbench.model import Caveat

COPY_UP = "container-copy-up"

_COPY_UP_TEXT = (
    "{kind} is overlayfs: these files were made in the container, so no copy-up is in these numbers; the first "
    "write to a file that came from {below} copies the whole file up first"
)


def mount_caveats(kind: str) -> tuple[Caveat, ...]:
    """The caveats every sample on this mount kind carries."""
    if kind == "layer":
        return (Caveat(COPY_UP, _COPY_UP_TEXT.format(kind="the writable layer", below="the image")),)
    if kind == "overlay":
        return (Caveat(COPY_UP, _COPY_UP_TEXT.format(kind="the :O mount", below="the host's lower directory")),)
    return ()
