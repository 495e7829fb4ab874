"""Every capability `mountbench probe` tries, in the order it tries them.

The basic ones (:mod:`mountbench.probe.capabilities`), then what developers' tools rely on
(:mod:`mountbench.probe.conformance`). A capability marked ``last`` may crash or hang the
mount (a deep path killed fusefat's daemon); :func:`mountbench.probe.target.probe_target`
runs those after all others.
"""

from __future__ import annotations

from mountbench.probe import conformance as c
from mountbench.probe.capabilities import BASIC, Capability

CONFORMANCE: tuple[Capability, ...] = (
    Capability("other_uid", f"another user (uid {c.OTHER_UID}) kept to file modes", c.probe_other_uid, needs_root=True),
    Capability("ctime", "ctime updated by chmod, chown, link, rename", c.probe_ctime),
    Capability("utime_one", "atime or mtime set alone (UTIME_OMIT)", c.probe_utime_one),
    Capability("symlink_times", "a symlink's own times", c.probe_symlink_times),
    Capability("dir_rename_contents", "mv d e keeps d's files", c.probe_dir_rename_contents),
    Capability("unlink_open", "read after unlink of an open file", c.probe_unlink_open),
    Capability("errno", "error codes (ENAMETOOLONG, ENOTEMPTY, EEXIST, EXDEV)", c.probe_errno),
    Capability("deep_paths", "deep paths against PATH_MAX", c.probe_deep_paths, last=True),
)

CAPABILITIES: tuple[Capability, ...] = (*BASIC, *CONFORMANCE)
CAPABILITY_IDS: tuple[str, ...] = tuple(cap.id for cap in CAPABILITIES)


def by_id(capability_id: str) -> Capability:
    for cap in CAPABILITIES:
        if cap.id == capability_id:
            return cap
    raise KeyError(capability_id)
