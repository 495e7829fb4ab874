"""What a run says once, before its first sample, about where it runs: what it cannot do here
(without root, or in a container), with what that changes in the figures; and, in a container,
a results database that would go with the container.

`run`, `show`, `report`, `probe` and `doctor` need no root on a directory the user owns. Root adds
two things: evicting the page cache before a sample (engine/eviction.py says whether it can be
done here), and what the labs and the mount tests do (mounts, network namespaces, rootful
Podman). The cells a missing eviction affects say so themselves ('caches not dropped'); this is
the one sentence up front that says why, and which workloads it touches.
"""

from __future__ import annotations

from pathlib import Path

from mountbench.engine.eviction import can_evict
from mountbench.host import container
from mountbench.host.facts import is_root
from mountbench.host.targets import find_mount

DIRECT_PRESETS = "quick, cdm, nine"  # every job direct I/O: the page cache is not in their numbers
BUFFERED_PRESETS = "s1, tree, http, latency"  # buffered or cold workloads: evicting matters


def privilege_note() -> str:
    """'' when nothing is missing here; else one note: what cannot be done and what it changes."""
    evict, why = can_evict()
    if evict:
        return ""
    figures = (
        f"the page cache cannot be evicted before a sample ({why}): direct-I/O workloads (presets "
        f"{DIRECT_PRESETS}) are unaffected; buffered and cold ones ({BUFFERED_PRESETS}) may be served from "
        "RAM, and their cells say 'caches not dropped'"
    )
    if is_root():
        return f"{figures}."
    return (
        f"running without root: run, show, report, probe and doctor need none; {figures}; the labs (lab, "
        "containers, cloudlab's network namespace) and mounting filesystems need root."
    )


def store_note(db_path: Path) -> str:
    """In a container, when the results database lies on the container's own layer or a tmpfs
    (it goes with the container): where to mount a directory instead. '' otherwise."""
    inside = container.here()
    if inside is None:
        return ""
    where = db_path.resolve().parent
    while not where.exists() and where != where.parent:
        where = where.parent
    mount = find_mount(where)
    if container.outlives_container(mount, True):
        return ""
    kind = container.classify(mount, True)
    short = {"layer": "the container's writable layer", "tmpfs": f"a {mount.fstype} (memory)"}
    said = short.get(kind.kind if kind else "", f"an overlay mount ({mount.source})")
    return (
        f"the results database {db_path} is on {said}: it goes with the container; mount a directory there "
        f'(docker or podman run -v "$PWD/results":{db_path.parent} ...) or set MOUNTBENCH_DB to a path on a mount'
    )


def notes(db_path: Path) -> list[str]:
    """The notes a run prints before its first sample (none when nothing needs saying)."""
    return [note for note in (privilege_note(), store_note(db_path)) if note]
