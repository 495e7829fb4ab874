"""Every capability `mountbench probe` tries, in the order it tries them.

The basic ones (:mod:`mountbench.probe.capabilities`), then what developers' tools rely on
(:mod:`mountbench.probe.conformance`). A capability marked ``last`` may crash or hang the
mount (a deep path killed fusefat's daemon); :func:`mountbench.probe.target.probe_target`
runs those after all others.
"""

from __future__ import annotations

from mountbench.probe import conformance as c
from mountbench.probe import fileops as f
from mountbench.probe import filetimes as t
from mountbench.probe.capabilities import BASIC, Capability

CONFORMANCE: tuple[Capability, ...] = (
    Capability("other_uid", f"another user (uid {c.OTHER_UID}) kept to file modes", c.probe_other_uid, needs_root=True),
    Capability("ctime", "ctime updated by chmod, chown, link, rename", c.probe_ctime),
    Capability(
        "content_times", "mtime and ctime moved by write, O_TRUNC, truncate, fallocate, unlink", t.probe_content_times
    ),
    Capability("time_range", "times from epoch 0 to past 2106 kept", t.probe_time_range),
    Capability("utime_one", "atime or mtime set alone (UTIME_OMIT)", c.probe_utime_one),
    Capability("symlink_times", "a symlink's own times", c.probe_symlink_times),
    Capability("dir_rename_contents", "mv d e keeps d's files", c.probe_dir_rename_contents),
    Capability("unlink_open", "read after unlink of an open file", c.probe_unlink_open),
    Capability("append_one", "O_APPEND by one process", f.probe_append_one),
    Capability("truncate_grow", "growing a file with truncate", f.probe_truncate_grow),
    Capability("create_mode", "new files' mode under the umask", f.probe_create_mode),
    Capability("mknod", "device nodes (mknod)", f.probe_mknod, needs_root=True),
    Capability("hardlink_attrs", "attributes through another hard-link name", f.probe_hardlink_attrs),
    Capability("lower_dir_rename", "rename a directory from an overlay's lower layer", f.probe_lower_dir_rename),
    Capability("errno", "error codes (ENAMETOOLONG, ENOTEMPTY, EEXIST, EXDEV)", c.probe_errno),
    Capability("deep_paths", "deep paths: where the limit is", c.probe_deep_paths, last=True),
)

CAPABILITIES: tuple[Capability, ...] = (*BASIC, *CONFORMANCE)
CAPABILITY_IDS: tuple[str, ...] = tuple(cap.id for cap in CAPABILITIES)


def by_id(capability_id: str) -> Capability:
    for cap in CAPABILITIES:
        if cap.id == capability_id:
            return cap
    raise KeyError(capability_id)
