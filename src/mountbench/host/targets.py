"""Inspect target directories and manage a run's scratch directory inside each.

mountbench writes only inside ``<target>/.mountbench-<run id>/`` and deletes a
directory only when it carries the marker file it wrote there. The scratch directory
itself (marker, lock, removal) is :mod:`mountbench.host.scratch`, shared with the probe;
O_DIRECT is probed by :mod:`mountbench.host.odirect`.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from mountbench.errors import TargetError, UsageError
from mountbench.host import container, fsinstance, odirect
from mountbench.host import scratch as scratch_mod
from mountbench.model import Target, TargetContext, TargetInfo

SCRATCH_PREFIX = scratch_mod.PREFIX
MARKER = scratch_mod.MARKER


@dataclass(frozen=True)
class MountEntry:
    mount_point: str
    fstype: str
    source: str
    options: str
    root: str = "/"  # the directory of the source filesystem mounted here (a bind mount's is not "/")


def parse_target_arg(text: str) -> tuple[str | None, str]:
    """``label=path`` or ``path``. A label never contains '/', so paths with '=' still work."""
    label, sep, path = text.partition("=")
    if sep and label and "/" not in label:
        return label, path
    return None, text


LABEL_MAX = 64


def label_problem(label: str, *, longest: int = LABEL_MAX, slash: bool = False) -> str:
    """Why ``label`` cannot name a target ('' when it can): printable, one line, at most
    ``longest`` characters, no '/' unless ``slash`` (a default label holds its path)."""
    if not label:
        return "a label cannot be empty"
    if len(label) > longest:
        return f"a label has at most {longest} characters, this one {len(label)}"
    bad = next((c for c in label if not c.isprintable()), None)
    if bad is not None:
        return f"a label is printable text on one line, this one holds {bad!r}"
    if "/" in label and not slash:
        return "a label cannot contain '/'"
    return ""


# filesystems that show the kernel's state, not stored data: nothing there is a target
PSEUDO_FILESYSTEMS = frozenset({"proc", "sysfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs",
                                "bpf", "pstore", "configfs", "efivarfs", "fusectl", "mqueue", "binfmt_misc",
                                "hugetlbfs", "autofs", "devtmpfs", "rpc_pipefs", "nsfs"})  # fmt: skip


def resolve_path(text: str) -> Path:
    """Check a target path exists and is a directory; return it resolved."""
    if not text.strip():
        raise TargetError("a target has an empty path; write label=/some/dir")
    bad = next((c for c in text if not c.isprintable() and c != " "), None)
    if bad is not None:  # it would be printed in every table and page; and an escape sequence is obeyed
        raise TargetError(f"target {text!r} holds a control character ({bad!r}); rename the directory and try again")
    path = Path(text).expanduser()
    if not path.exists():
        raise TargetError(f"target {text} does not exist; create it or check the path")
    if not path.is_dir():
        raise TargetError(f"target {text} is not a directory; give the directory the file lives in")
    resolved = path.resolve()
    if ":" in str(resolved):
        raise TargetError(
            f"target {text} has ':' in its path, which fio reads as a list of directories (directory=a:b), so "
            "every sample would go elsewhere or fail; rename it or give another directory"
        )
    fstype = find_mount(resolved).fstype
    if fstype in PSEUDO_FILESYSTEMS:
        raise TargetError(f"target {text} is on {fstype}, which shows the kernel's state and stores nothing; "
                          "give a directory on a filesystem that stores files")  # fmt: skip
    return resolved


def pseudo_filesystem(path: Path) -> str:
    """The pseudo filesystem (proc, sysfs, ...) ``path`` or its nearest existing parent is on, or ''."""
    place = next((p for p in (path, *path.parents) if p.exists()), Path("/"))
    fstype = find_mount(place.resolve()).fstype
    return fstype if fstype in PSEUDO_FILESYSTEMS else ""


def writable_problem(path: Path) -> str:
    """Why a run could not make its scratch directory in ``path`` ('' when it could): asked of the
    kernel (access(2), which answers EROFS for a read-only mount), nothing written."""
    if os.access(path, os.W_OK | os.X_OK):
        return ""
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    why = "EROFS: a read-only filesystem" if read_only else "EACCES: no permission to write there"
    return f"target {path} is not writable ({why}); choose a directory you can write to"


def resolve_targets(args: list[str]) -> list[Target]:
    """Turn command-line target arguments into labelled targets; refuse duplicates, also one
    directory reached twice (a bind mount, a symlink, another spelling)."""
    parsed = [parse_target_arg(arg) for arg in args]
    for label, _ in parsed:
        if label is not None and label_problem(label):
            shown = label if len(label) <= 40 else label[:37] + "..."
            raise UsageError(f"target label {shown!r}: {label_problem(label)}; write label=/some/dir with a short name")
    paths = [resolve_path(path_text) for _, path_text in parsed]
    unlabelled = [path for (label, _), path in zip(parsed, paths, strict=True) if label is None]
    given = {label for label, _ in parsed if label is not None}
    automatic = dict(zip(unlabelled, default_labels(unlabelled, taken=given), strict=True))
    targets: list[Target] = []
    seen: dict[tuple[int, int], str] = {}
    for (label, _), path in zip(parsed, paths, strict=True):
        if label is None:
            label = automatic[path]
        for other in targets:
            if other.path == str(path):
                raise UsageError(f"target {path} is given twice; give each directory once")
            if other.label == label:
                raise UsageError(f"two targets are labelled {label!r}; label them apart, e.g. fast={path}")
        st = os.stat(path)
        first = seen.get((st.st_dev, st.st_ino))
        if first is not None:
            raise UsageError(
                f"targets {first} and {path} are the same directory (reached twice, e.g. through a bind mount or a "
                "symlink): its numbers would be compared with themselves; give each directory once"
            )
        seen[(st.st_dev, st.st_ino)] = str(path)
        targets.append(Target(label=label, path=str(path)))
    return targets


def default_labels(paths: list[Path], taken: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Automatic labels for ``paths``: ``name (fstype)``, with as many parent directories as it
    takes to tell two apart (``x/data (ext4)``, ``y/data (ext4)``) or from a ``taken`` label;
    characters that are not printable become '?'. In a container the kind of mount comes first
    (``host (bind, ext4)``, ``vol (volume, ext4)``, ``tmp (layer, overlay)``: host/container.py)."""
    inside = container.here() is not None
    return distinct_labels(paths, [container.label_type(find_mount(path), inside) for path in paths], taken)


def distinct_labels(
    paths: Sequence[PurePath], types: Sequence[str], taken: set[str] | frozenset[str] = frozenset()
) -> list[str]:
    """default_labels with each path's filesystem type given: the one way run, doctor and probe name a
    target (issue 48: doctor named two directories both 'nr-newcomer (ext4)', probe cut one short)."""
    depths = [1] * len(paths)
    longest = max((len(p.parts) for p in paths), default=1)
    while True:
        labels = [_printable(f"{_tail(p, d)} ({t})") for p, d, t in zip(paths, depths, types, strict=True)]
        clashing = [i for i, label in enumerate(labels) if labels.count(label) > 1 or label in taken]
        if not clashing or all(depths[i] > longest for i in clashing):
            return labels
        for i in clashing:
            depths[i] += 1


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _tail(path: PurePath, depth: int) -> str:
    """The last ``depth`` parts of ``path`` ('/' for the root; the whole path when it has no more)."""
    parts = [p for p in path.parts if p != "/"]
    if not parts:
        return "/"
    if depth >= len(parts):
        return str(path)
    return "/".join(parts[-depth:])


def find_mount(path: Path) -> MountEntry:
    """The mount that holds ``path``: the longest mount point that prefixes it."""
    return mount_of(str(path), read_mounts()) or MountEntry("/", "unknown", "unknown", "")


def mount_of(path: str, entries: list[MountEntry]) -> MountEntry | None:
    """The entry whose mount point is the longest prefix of ``path`` (the last mounted wins a tie)."""
    best: MountEntry | None = None
    for entry in entries:
        mp = entry.mount_point.rstrip("/") or "/"
        if (path == mp or path.startswith(mp.rstrip("/") + "/")) and (
            best is None or len(mp) >= len(best.mount_point.rstrip("/") or "/")
        ):
            best = entry
    return best


def read_mounts() -> list[MountEntry]:
    mountinfo = Path("/proc/self/mountinfo")
    if mountinfo.exists():
        return parse_mountinfo(mountinfo.read_text())
    return _mounts_from_mount_command()


def parse_mountinfo(text: str) -> list[MountEntry]:
    """Parse Linux's /proc/self/mountinfo (man 5 proc). Later lines shadow earlier ones."""
    entries = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields = left.split()
        rest = right.split()
        if len(fields) < 6 or len(rest) < 2:
            continue
        options = fields[5]
        super_options = rest[2] if len(rest) > 2 else ""
        merged = ",".join(dict.fromkeys(options.split(",") + [o for o in super_options.split(",") if o]))
        entries.append(MountEntry(_unescape(fields[4]), rest[0], _unescape(rest[1]), merged, _unescape(fields[3])))
    return entries


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _mounts_from_mount_command() -> list[MountEntry]:
    """macOS and BSD: ``/dev/disk1s1 on / (apfs, local, journaled)``."""
    try:
        out = subprocess.run(["mount"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    entries = []
    for line in out.splitlines():
        match = re.match(r"^(.*?) on (.*?) \((.*)\)$", line)
        if match:
            source, point, opts = match.groups()
            fstype, _, options = opts.partition(",")
            entries.append(MountEntry(point, fstype.strip(), source, options.strip().replace(" ", "")))
    return entries


def scratch_name(run_id: str) -> str:
    return f"{SCRATCH_PREFIX}{run_id}"


def _run_marker(run_id: str) -> scratch_mod.Marker:
    return scratch_mod.Marker("run", run_id, scratch_mod.Owner.current(), time.time())


def _refuse_if_in_use(target_dir: Path, run_id: str) -> None:
    """Refuse a target where another live mountbench run or probe is working."""
    others = scratch_mod.live_users(target_dir, exclude=scratch_name(run_id))
    if others:
        other = others[0]
        what = f"run {other.marker.id}" if other.marker.kind == "run" else "the mountbench probe there"
        raise TargetError(
            f"target {target_dir} is in use by {other.describe()}: two runs on one target spoil each "
            f"other's numbers; wait for {what} to finish or stop it, then try again"
        )


def create_scratch(target: Target, run_id: str) -> Path:
    """Create ``<target>/.mountbench-<run id>/`` with a marker; reuse ours on resume.

    Refuses (TargetError) a target in which another live run or probe is working.
    """
    parent = Path(target.path)
    scratch = parent / scratch_name(run_id)
    _refuse_if_in_use(parent, run_id)
    try:
        scratch_mod.create(parent, scratch.name, _run_marker(run_id))
    except FileExistsError:
        if not is_our_scratch(scratch, run_id):
            raise TargetError(f"{scratch} exists and was not made by mountbench run {run_id}; move it away") from None
        return scratch
    except OSError as exc:
        raise TargetError(
            f"target {target.path} is not writable ({_errno_text(exc)}); choose a directory you can write to"
        ) from None
    return scratch


def lock_scratch(scratch: Path, run_id: str) -> int | None:
    """Hold an exclusive lock on the marker for as long as this process works in the
    scratch directory, so a second `run --resume` of a live run, and any other run on the
    same target, is refused instead of spoiling this one. Returns the fd to close, or None
    where the filesystem has no working flock (the marker's owner pid is checked there).

    Once locked, the target is checked again for other live runs (two runs that start
    at the same moment both see the other and both refuse); a directory we then leave
    holds only its marker and is removed.
    """
    try:
        fd = scratch_mod.lock(scratch)
    except scratch_mod.Locked:
        raise TargetError(
            f"run {run_id} is still running in another process (it holds {scratch / MARKER}); "
            "let it finish or stop it first"
        ) from None
    if fd is not None:
        scratch_mod.claim(fd, _run_marker(run_id))  # a resumed run: this process owns it now
    try:
        _refuse_if_in_use(scratch.parent, run_id)
    except TargetError:
        if fd is not None:
            os.close(fd)
        if [p.name for p in scratch.iterdir()] == [MARKER]:
            remove_scratch(scratch, run_id)
        raise
    return fd


def is_our_scratch(scratch: Path, run_id: str) -> bool:
    marker = scratch_mod.read_marker(scratch)
    return marker is not None and marker.kind == "run" and marker.id == run_id


def remove_scratch(scratch: Path, run_id: str) -> bool:
    """Delete the scratch directory only if it carries our marker. Returns whether it did;
    raises OSError when something in it cannot be deleted."""
    if not is_our_scratch(scratch, run_id):
        return False
    try:
        scratch_mod.remove(scratch, lambda marker: marker.kind == "run" and marker.id == run_id)
    except scratch_mod.NotOurs:
        return False
    return not scratch.exists()


def probe_odirect(directory: Path) -> tuple[bool, str]:
    """Open a file with O_DIRECT (F_NOCACHE on macOS) and do one aligned write and read."""
    result = odirect.check(directory)
    return result.works, result.reason


def inspect_target(target: Target, scratch: Path) -> TargetInfo:
    odirect, detail = probe_odirect(scratch)
    info = target_info(Path(target.path), scratch, odirect, detail)
    return dataclasses.replace(info, scratch_inode=os.stat(scratch).st_ino)


def device_of(path: Path | str) -> str:
    """A directory's device as "major:minor" ('' when it cannot be read)."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return ""
    return f"{os.major(dev)}:{os.minor(dev)}"


def target_change(target: Target, recorded: TargetInfo | None, scratch: Path) -> str:
    """What makes ``target`` no longer the storage a run recorded ('' when nothing does): its
    device, filesystem type or mount source differ, or the run's scratch directory ``scratch``
    exists but is another directory, or the filesystem is another instance of it (a fresh tmpfs that
    got the old one's device number). Facts a run did not record (older versions) are not compared."""
    if recorded is None:
        return ""
    mount = find_mount(Path(target.path))
    now = {"device": device_of(target.path), "filesystem": mount.fstype, "mount source": mount.source}
    then = {"device": recorded.device, "filesystem": recorded.fstype, "mount source": recorded.mount_source}
    changes = [f"{name} {then[name]} → {now[name]}" for name in now if then[name] and then[name] != now[name]]
    other = fsinstance.differs(recorded.instance, fsinstance.instance(target.path))
    if other:
        changes.append(f"another instance of the filesystem ({other})")
    if recorded.scratch_inode:
        try:
            inode = os.stat(scratch).st_ino
        except OSError:
            inode = None
        if inode is not None and inode != recorded.scratch_inode:
            changes.append(f"scratch directory {scratch.name} is another directory (inode {recorded.scratch_inode} "
                           f"→ {inode})")  # fmt: skip
    return ", ".join(changes)


def _errno_text(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    return f"{name}: {exc.strerror}" if name else str(exc)


def default_targets() -> list[str]:
    """No target given: the current directory against a RAM baseline."""
    ram = "/dev/shm" if sys.platform.startswith("linux") and os.path.isdir("/dev/shm") else None
    cwd = str(Path.cwd())
    args = [cwd]
    if ram and Path(ram).resolve() != Path(cwd).resolve():
        args.insert(0, ram)
    return args


def target_info(path: Path, usage_path: Path, direct_ok: bool, odirect_detail: str) -> TargetInfo:
    """The one place a TargetInfo is made: the mount holding ``path``, the space free at
    ``usage_path``, and what the O_DIRECT probe found (or why it was not run)."""
    mount = find_mount(path)
    usage = shutil.disk_usage(usage_path)
    kind = container.classify(mount, container.here() is not None)
    return TargetInfo(
        device=device_of(path),
        instance=fsinstance.instance(path),
        fstype=mount.fstype,
        mount_point=mount.mount_point,
        mount_source=mount.source,
        mount_options=mount.options,
        free_bytes=usage.free,
        total_bytes=usage.total,
        odirect=direct_ok,
        odirect_detail=odirect_detail,
        mount_kind=kind.said if kind else "",
    )


def imagine_context(target: Target, run_id: str) -> TargetContext:
    """A target as a run would see it, without writing anything (--dry-run): O_DIRECT is
    not probed, so jobs are shown as they run where it is accepted."""
    path = Path(target.path)
    info = target_info(path, path, True, "not probed (dry run)")
    return TargetContext(target, info, path / scratch_name(run_id))
