"""Inspect target directories and manage the scratch directory inside each.

mountbench writes only inside ``<target>/.mountbench-<run id>/`` and deletes a
directory only when it carries the marker file it wrote there.
"""

from __future__ import annotations

import errno
import mmap
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mountbench.errors import TargetError, UsageError
from mountbench.model import Target, TargetInfo
from mountbench.runners.base import TargetContext

SCRATCH_PREFIX = ".mountbench-"
MARKER = ".mountbench-scratch"


@dataclass(frozen=True)
class MountEntry:
    mount_point: str
    fstype: str
    source: str
    options: str


def parse_target_arg(text: str) -> tuple[str | None, str]:
    """``label=path`` or ``path``. A label never contains '/', so paths with '=' still work."""
    label, sep, path = text.partition("=")
    if sep and label and "/" not in label:
        return label, path
    return None, text


def resolve_path(text: str) -> Path:
    """Check a target path exists and is a directory; return it resolved."""
    if not text.strip():
        raise TargetError("a target has an empty path; write label=/some/dir")
    path = Path(text).expanduser()
    if not path.exists():
        raise TargetError(f"target {text} does not exist; create it or check the path")
    if not path.is_dir():
        raise TargetError(f"target {text} is not a directory; give the directory the file lives in")
    return path.resolve()


def resolve_targets(args: list[str]) -> list[Target]:
    """Turn command-line target arguments into labelled targets; refuse duplicates."""
    targets: list[Target] = []
    for arg in args:
        label, path_text = parse_target_arg(arg)
        path = resolve_path(path_text)
        if label is None:
            label = default_label(path)
        for other in targets:
            if other.path == str(path):
                raise UsageError(f"target {path} is given twice; give each directory once")
            if other.label == label:
                raise UsageError(f"two targets are labelled {label!r}; label them apart, e.g. fast={path}")
        targets.append(Target(label=label, path=str(path)))
    return targets


def default_label(path: Path) -> str:
    """Readable by default: the filesystem type and the path, e.g. ``tmpfs:/dev/shm``."""
    return f"{find_mount(path).fstype}:{path}"


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
        entries.append(MountEntry(_unescape(fields[4]), rest[0], _unescape(rest[1]), merged))
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


def create_scratch(target: Target, run_id: str) -> Path:
    """Create ``<target>/.mountbench-<run id>/`` with a marker; reuse ours on resume."""
    scratch = Path(target.path) / scratch_name(run_id)
    try:
        scratch.mkdir()
    except FileExistsError:
        if not is_our_scratch(scratch, run_id):
            raise TargetError(f"{scratch} exists and was not made by mountbench run {run_id}; move it away") from None
        return scratch
    except OSError as exc:
        raise TargetError(
            f"target {target.path} is not writable ({_errno_text(exc)}); choose a directory you can write to"
        ) from None
    try:
        (scratch / MARKER).write_text(run_id + "\n")
    except OSError as exc:
        scratch.rmdir()
        raise TargetError(
            f"cannot write in target {target.path} ({_errno_text(exc)}); choose a directory you can write to"
        ) from None
    return scratch


def lock_scratch(scratch: Path, run_id: str) -> int | None:
    """Hold an exclusive lock on the marker for as long as this process works in the
    scratch directory, so a second `run --resume` of a live run is refused instead of
    deleting the directory under it. Returns the fd to close, or None where the
    filesystem has no working flock."""
    import fcntl

    fd = os.open(scratch / MARKER, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise TargetError(
            f"run {run_id} is still running in another process (it holds {scratch / MARKER}); "
            "let it finish or stop it first"
        ) from None
    except OSError:  # no flock on this filesystem: go on without the guard
        os.close(fd)
        return None
    return fd


def is_our_scratch(scratch: Path, run_id: str) -> bool:
    try:
        return (scratch / MARKER).read_text().strip() == run_id
    except OSError:
        return False


def remove_scratch(scratch: Path, run_id: str) -> bool:
    """Delete the scratch directory only if it carries our marker. Returns whether it did."""
    if not is_our_scratch(scratch, run_id):
        return False
    # contents first and the marker last, so an interrupted removal can be finished later
    for entry in scratch.iterdir():
        if entry.name == MARKER:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
    if any(entry.name != MARKER for entry in scratch.iterdir()):
        return False
    (scratch / MARKER).unlink(missing_ok=True)
    scratch.rmdir()
    return True


def probe_odirect(directory: Path) -> tuple[bool, str]:
    """Open a file with O_DIRECT (F_NOCACHE on macOS) and do one aligned write and read."""
    path = directory / ".odirect-probe"
    buffer = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT needs
    buffer.write(b"m" * 4096)
    fd = -1
    try:
        if hasattr(os, "O_DIRECT"):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
        else:
            import fcntl

            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.fcntl(fd, getattr(fcntl, "F_NOCACHE", 48), 1)
        os.write(fd, buffer)
        os.lseek(fd, 0, os.SEEK_SET)
        if os.readv(fd, [buffer]) != 4096:
            return False, "short read"
        return True, "accepted" if hasattr(os, "O_DIRECT") else "F_NOCACHE"
    except OSError as exc:
        return False, _errno_text(exc)
    finally:
        if fd >= 0:
            os.close(fd)
        buffer.close()
        path.unlink(missing_ok=True)


def inspect_target(target: Target, scratch: Path) -> TargetInfo:
    odirect, detail = probe_odirect(scratch)
    return target_info(Path(target.path), scratch, odirect, detail)


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


def target_info(path: Path, usage_path: Path, odirect: bool, odirect_detail: str) -> TargetInfo:
    """The one place a TargetInfo is made: the mount holding ``path``, the space free at
    ``usage_path``, and what the O_DIRECT probe found (or why it was not run)."""
    mount = find_mount(path)
    usage = shutil.disk_usage(usage_path)
    return TargetInfo(
        fstype=mount.fstype,
        mount_point=mount.mount_point,
        mount_source=mount.source,
        mount_options=mount.options,
        free_bytes=usage.free,
        total_bytes=usage.total,
        odirect=odirect,
        odirect_detail=odirect_detail,
    )


def imagine_context(target: Target, run_id: str) -> TargetContext:
    """A target as a run would see it, without writing anything (--dry-run): O_DIRECT is
    not probed, so jobs are shown as they run where it is accepted."""
    path = Path(target.path)
    info = target_info(path, path, True, "not probed (dry run)")
    return TargetContext(target, info, path / scratch_name(run_id))
