"""Scratch directories inside targets, for runs and probes alike, and runs' private temp folders.

mountbench writes only inside a scratch directory it created in each target:

- a run:   ``<target>/.mountbench-<run id>/``
- a probe: ``<target>/.mountbench-probe-<random>/``

Each carries a marker file (:data:`MARKER`) saying which run or probe made it and which
process owns it (pid, process start time, host, boot and pid namespace), so that

- nothing is ever deleted unless its marker says we made it (:func:`remove`);
- a parent directory is never created: a vanished target stays vanished (:func:`create`);
- a live owner is recognised (:func:`live_users`): a run holds an exclusive ``flock`` on its
  marker while it works (:func:`lock`); a probe's owner is checked by pid and start time;
- directories left by killed probes and runs can be removed safely (:func:`sweep_dead`, called
  by the next run or probe on the target);
- every deletion, rename or new file of mountbench's own inside one (:func:`unlink_beneath`,
  :func:`rmtree_beneath`, :func:`rename_beneath`, :func:`open_beneath`) is resolved beneath the
  scratch directory by descriptor (``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``,
  or a walk of ``O_NOFOLLOW`` directory descriptors), never through a joined path string: a name
  that climbs out (``..``), is absolute elsewhere or passes a symbolic link is refused
  (:class:`OutsideScratch`) and nothing is touched.

Scratch directories are private (0700). A resumed run's own directory is never swept; a killed
run whose directory was swept lays its files out again when resumed. A directory kept on purpose
(``run --keep``: :func:`mark_kept`) is never swept: its marker says so, and only the user deletes it.

A run's job files live outside the targets, in ``<tmp>/mountbench-<run id>-*/`` (0700); an owner
file written at creation (the run, its process, this boot) lets :func:`sweep_workdirs` remove
the folders it can prove are of killed runs: its own run named, this boot's, its process gone.

The functions here touch the filesystem directly. The probe calls them in a child process
(a hung mount must not hang the caller); runs call them in-process.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import fcntl
import json
import os
import re
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import psutil

from mountbench.host.libc import libc as load_libc

PREFIX = ".mountbench-"
PROBE_PREFIX = ".mountbench-probe-"
MARKER = ".mountbench-scratch"
LEGACY_PROBE_MARKER = ".mountbench-probe-marker"  # written by probes before markers were shared
WORKDIR_PREFIX = "mountbench-"
WORKDIR_OWNER = ".mountbench-owner"
# mountbench-<run id: YYYYMMDD-HHMMSS-hhhh>-<mkdtemp suffix>
_WORKDIR_NAME = re.compile(r"^mountbench-(\d{8}-\d{6}-[0-9a-f]{4})-[A-Za-z0-9_]{8}$")
REMOVE_ATTEMPTS = 3
REMOVE_RETRY_S = 0.1
START_TIME_SLACK_S = 1.0

Kind = Literal["run", "probe"]


# -- who owns a directory -------------------------------------------------------------------


def boot_id() -> str | None:
    """This boot's id (the kernel's random boot_id), None where it cannot be read."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


@dataclass(frozen=True)
class Owner:
    """A process, identified well enough to tell "gone" from "alive" (pids are reused)."""

    pid: int
    started: float  # the process's start time (psutil create_time, seconds since the epoch)
    host: str
    boot_id: str | None = None
    pid_ns: str | None = None

    @classmethod
    def current(cls) -> Owner:
        return cls.of(os.getpid())

    @classmethod
    def of(cls, pid: int) -> Owner:
        return cls(pid, psutil.Process(pid).create_time(), socket.gethostname(), boot_id(), _pid_namespace())

    def alive(self) -> bool | None:
        """True/False for a process of this machine's current boot and pid namespace;
        None when that cannot be told from here (another host or namespace)."""
        if self.host != socket.gethostname():
            return None
        here = boot_id()
        if self.boot_id and here and self.boot_id != here:
            return False  # a process of an earlier boot
        ns = _pid_namespace()
        if self.pid_ns and ns and self.pid_ns != ns:
            return None
        try:
            started = psutil.Process(self.pid).create_time()
        except psutil.NoSuchProcess:
            return False
        except psutil.Error:
            return True  # it exists; we may not look at it
        return abs(started - self.started) <= START_TIME_SLACK_S

    def to_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "started": self.started,
            "host": self.host,
            "boot_id": self.boot_id,
            "pid_ns": self.pid_ns,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Owner:
        return cls(
            pid=int(data["pid"]),
            started=float(data["started"]),
            host=str(data["host"]),
            boot_id=data.get("boot_id"),
            pid_ns=data.get("pid_ns"),
        )

    def __str__(self) -> str:
        return f"pid {self.pid} on {self.host}"


@dataclass(frozen=True)
class Marker:
    """What the marker file says: who made the directory (a run id, or a probe's token)."""

    kind: Kind
    id: str
    owner: Owner | None = None
    created: float | None = None
    kept: bool = False  # kept on purpose (run --keep): never swept, whoever owned it

    def to_text(self) -> str:
        data = {
            "tool": "mountbench",
            "kind": self.kind,
            "id": self.id,
            "owner": self.owner.to_dict() if self.owner else None,
            "created": self.created,
        }
        if self.kept:
            data["kept"] = True
        return json.dumps(data) + "\n"

    @classmethod
    def parse(cls, text: str) -> Marker | None:
        """The marker in ``text`` (a JSON line; earlier runs wrote the bare run id), or None."""
        first = text.split("\n", 1)[0].strip()
        if not first:
            return None
        if not first.startswith("{"):
            return cls("run", first)  # a run's marker before markers were shared
        try:
            data = json.loads(first)
            if data.get("tool") != "mountbench" or data.get("kind") not in ("run", "probe"):
                return None
            owner = Owner.from_dict(data["owner"]) if data.get("owner") else None
            return cls(data["kind"], str(data["id"]), owner, data.get("created"), data.get("kept") is True)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def _legacy_probe_marker(text: str) -> Marker | None:
    try:
        data = json.loads(text)
        return Marker("probe", str(data["token"])) if data.get("tool") == "mountbench probe" else None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def read_marker(directory: Path | str) -> Marker | None:
    """The marker of a scratch directory, or None if it has none we wrote."""
    d = Path(directory)
    try:
        return Marker.parse((d / MARKER).read_text(errors="replace"))
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        return _legacy_probe_marker((d / LEGACY_PROBE_MARKER).read_text(errors="replace"))
    except OSError:
        return None


def is_scratch_name(name: str) -> bool:
    return name.startswith(PREFIX) and name not in (MARKER, LEGACY_PROBE_MARKER)


# -- create, lock, remove ---------------------------------------------------------------------


def create(parent: Path | str, name: str, marker: Marker) -> Path:
    """Make ``<parent>/<name>/`` and its marker. Never creates ``parent`` itself.

    Raises FileExistsError if the directory exists, OSError if it cannot be made; a
    directory whose marker cannot be written is removed again before raising.
    """
    if not is_scratch_name(name) or "/" in name:
        raise ValueError(f"{name!r} is not a scratch directory name")
    directory = Path(parent) / name
    os.mkdir(directory, 0o700)
    with contextlib.suppress(OSError):  # whatever the umask; a filesystem without modes (FAT) keeps its own
        os.chmod(directory, 0o700)
    try:
        _write_new(directory / MARKER, marker.to_text())
    except BaseException:
        with contextlib.suppress(OSError):
            os.rmdir(directory)
        raise
    return directory


def _write_new(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        data = text.encode()
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


class Locked(Exception):
    """Another process holds the scratch directory's lock."""


def lock(directory: Path | str, *, attempts: int = 5, wait_s: float = 0.02) -> int | None:
    """Take an exclusive ``flock`` on the marker and return its fd (close it to release).

    Retries briefly (another process may be looking at the lock for a moment, see
    :func:`lock_state`), then raises :class:`Locked`. Returns None where the filesystem
    has no working flock.
    """
    try:
        fd = os.open(Path(directory) / MARKER, os.O_RDWR)
    except PermissionError:  # another user's marker (a run resumed as someone else): lock only
        fd = os.open(Path(directory) / MARKER, os.O_RDONLY)
    for attempt in range(attempts):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if attempt == attempts - 1:
                os.close(fd)
                raise Locked(str(directory)) from None
            time.sleep(wait_s)
        except OSError:  # no flock on this filesystem
            os.close(fd)
            return None
    raise AssertionError("unreachable")


def claim(fd: int, marker: Marker) -> None:
    """Rewrite a locked marker in place to name its new owner (a resumed run).

    The JSON is one line: a reader ignores whatever follows the first newline, so the
    marker stays readable even if this process dies between the write and the truncate.
    """
    data = marker.to_text().encode()
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    except OSError:  # opened read-only, or the filesystem refuses: the lock still guards the run
        pass


def mark_kept(directory: Path | str, fd: int | None = None) -> bool:
    """Mark a scratch directory as kept on purpose, so that no later sweep removes it: its marker
    is rewritten in place (through ``fd``, the held lock, when there is one). False when the
    marker cannot be read or written (it is then swept like any other once its owner is gone)."""
    marker = read_marker(directory)
    if marker is None:
        return False
    data = dataclasses.replace(marker, kept=True).to_text().encode()
    try:
        own = fd is None
        if own:
            fd = os.open(Path(directory) / MARKER, os.O_WRONLY)
        assert fd is not None
        try:
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
        finally:
            if own:
                os.close(fd)
    except OSError:
        return False
    return read_marker(directory) == dataclasses.replace(marker, kept=True)


def lock_state(directory: Path | str) -> Literal["held", "free", "unknown"]:
    """Is the marker's flock held by some process? ("unknown": no marker or no flock)"""
    try:
        fd = os.open(Path(directory) / MARKER, os.O_RDONLY)
    except OSError:
        return "unknown"
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return "held"
    except OSError:
        return "unknown"
    finally:
        os.close(fd)  # closing drops the shared lock we may have taken
    return "free"


class NotOurs(PermissionError):
    """The directory's marker is missing or names someone else: it is left alone."""


def remove(directory: Path | str, accept: Callable[[Marker], bool]) -> str:
    """Delete a scratch directory whose marker ``accept`` approves; say what was done.

    Contents go first and the marker last, so an interrupted removal can be finished
    later. Symbolic links are removed, never followed. FUSE filesystems may briefly
    hold ``.fuse_hidden*`` files for files still open: removal is retried a few times.
    Returns "removed" or "absent"; raises :class:`NotOurs` if the marker is not approved
    (or missing and the directory is not empty), OSError if something stays.
    """
    d = Path(directory)
    if not os.path.lexists(d):
        return "absent"
    if not is_scratch_name(d.name):
        raise NotOurs(errno.EPERM, "not a mountbench scratch directory name", str(d))
    marker = read_marker(d)
    if marker is None:
        os.rmdir(d)  # only an empty directory (creation stopped before the marker); else ENOTEMPTY
        return "removed"
    if not accept(marker):
        raise NotOurs(errno.EPERM, "its marker names another run or probe; not ours", str(d))
    for attempt in range(REMOVE_ATTEMPTS):
        try:
            _remove_contents(d)
            for name in (MARKER, LEGACY_PROBE_MARKER):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(d / name)
            os.rmdir(d)
            return "removed"
        except OSError:
            if not os.path.lexists(d):
                return "removed"
            if attempt == REMOVE_ATTEMPTS - 1:
                raise
            time.sleep(REMOVE_RETRY_S)
    raise AssertionError("unreachable")


def _remove_contents(d: Path) -> None:
    """Everything in ``d`` but its marker, by descriptor: symbolic links are removed, never followed."""
    fd = os.open(d, _DIR_FLAGS)
    try:
        for entry in os.scandir(fd):
            if entry.name in (MARKER, LEGACY_PROBE_MARKER):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.name, dir_fd=fd)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=fd)
    finally:
        os.close(fd)


# -- mountbench's own changes inside a scratch directory, by descriptor ------------------------------

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = 437  # x86_64 and aarch64 alike


class OutsideScratch(PermissionError):
    """A path that does not lead beneath the scratch directory (``..``, another absolute path, a
    symbolic link on the way): mountbench deletes, renames and makes nothing there."""

    def __init__(self, scratch: Path | str, path: Path | str, why: str) -> None:
        super().__init__(errno.EPERM, f"{path} is not beneath the scratch directory {scratch} ({why}); left alone")


def _parts(scratch: Path | str, path: Path | str) -> list[str]:
    """``path`` (absolute, or relative to ``scratch``) as names beneath ``scratch``; refused when it
    climbs out or lies elsewhere."""
    given = Path(path)
    if given.is_absolute():
        try:
            given = given.relative_to(scratch)
        except ValueError:
            raise OutsideScratch(scratch, path, "elsewhere") from None
    parts = [part for part in given.parts if part != "."]
    if not parts or ".." in parts:
        raise OutsideScratch(scratch, path, "it climbs out with '..'" if parts else "the directory itself")
    return parts


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _open_directory_beneath(root: int, names: list[str], scratch: Path | str, path: Path | str) -> int:
    """A descriptor of the directory ``names`` beneath the directory ``root`` (the caller closes it),
    by openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel has it, else one
    ``O_NOFOLLOW`` directory at a time; a symbolic link on the way is refused."""
    if not names:
        return os.dup(root)
    libc = load_libc()
    if libc is not None:
        how = _OpenHow(_DIR_FLAGS & ~os.O_NOFOLLOW, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
        fd = libc.syscall(
            ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(root), "/".join(names).encode(), ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )  # fmt: skip
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        if err in (errno.ELOOP, errno.EXDEV):
            raise OutsideScratch(scratch, path, "a symbolic link on the way")
        if err != errno.ENOSYS:
            raise OSError(err, os.strerror(err), str(path))
    fd = os.dup(root)
    try:
        for name in names:
            try:
                inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, name):
                    raise OutsideScratch(scratch, path, "a symbolic link on the way") from None
                raise
            os.close(fd)
            fd = inner
        return fd
    except BaseException:
        os.close(fd)
        raise


def _is_link(directory: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def _parent_of(scratch: Path | str, path: Path | str) -> Iterator[tuple[int, str]]:
    """(descriptor of the directory holding ``path``, its last name), beneath ``scratch``."""
    parts = _parts(scratch, path)
    root = os.open(scratch, _DIR_FLAGS)
    try:
        parent = _open_directory_beneath(root, parts[:-1], scratch, path)
    finally:
        os.close(root)
    try:
        yield parent, parts[-1]
    finally:
        os.close(parent)


def unlink_beneath(scratch: Path | str, path: Path | str) -> bool:
    """Remove the file (or symbolic link: never what it leads to) ``path`` beneath ``scratch``.
    True when removed, False when it was not there; :class:`OutsideScratch` when it is not beneath."""
    try:
        with _parent_of(scratch, path) as (parent, name):
            os.unlink(name, dir_fd=parent)
            return True
    except FileNotFoundError:
        return False


def rmtree_beneath(scratch: Path | str, path: Path | str) -> bool:
    """Remove ``path`` beneath ``scratch`` with everything in it (a directory by descriptor, links
    removed, never followed); a file or link is unlinked. True when removed, False when absent."""
    try:
        with _parent_of(scratch, path) as (parent, name):
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(name, dir_fd=parent)
            else:
                os.unlink(name, dir_fd=parent)
            return True
    except FileNotFoundError:
        return False


def rename_beneath(scratch: Path | str, source: Path | str, destination: Path | str) -> bool:
    """Rename ``source`` to ``destination``, both beneath ``scratch`` (an existing destination file
    is replaced). False when ``source`` is not there."""
    try:
        with _parent_of(scratch, source) as (src, src_name), _parent_of(scratch, destination) as (dst, dst_name):
            os.rename(src_name, dst_name, src_dir_fd=src, dst_dir_fd=dst)
            return True
    except FileNotFoundError:
        return False


def mkdir_beneath(scratch: Path | str, path: Path | str, mode: int = 0o700) -> None:
    """Make the directory ``path`` beneath ``scratch`` (its parent must exist: never made)."""
    with _parent_of(scratch, path) as (parent, name):
        os.mkdir(name, mode, dir_fd=parent)


def open_beneath(scratch: Path | str, path: Path | str, flags: int, mode: int = 0o600) -> int:
    """``os.open`` of ``path`` beneath ``scratch`` (the last name never followed if a link)."""
    with _parent_of(scratch, path) as (parent, name):
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)


# -- other users of a target --------------------------------------------------------------------


@dataclass(frozen=True)
class LiveUser:
    """Another live mountbench run or probe working in the same target."""

    path: str
    marker: Marker
    evidence: str  # "holds the lock on its marker", "pid 123 on host is alive"

    def describe(self) -> str:
        what = f"run {self.marker.id}" if self.marker.kind == "run" else "a mountbench probe"
        return f"{what} ({self.evidence})"


def _marked(parent: Path | str, exclude: str | None = None) -> Iterator[tuple[os.DirEntry[str], Marker]]:
    """The scratch directories in ``parent`` (``exclude``'s name left out) with our marker, by name."""
    try:
        entries = sorted(os.scandir(parent), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == exclude or not is_scratch_name(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        marker = read_marker(entry.path)
        if marker is not None:
            yield entry, marker


def live_users(parent: Path | str, *, exclude: str | None = None) -> list[LiveUser]:
    """The live runs and probes with a scratch directory in ``parent`` (``exclude``: ours).

    A run is live while some process holds the flock on its marker; where the filesystem
    has no flock, and for probes (which take no lock), while the owner process recorded
    in the marker is alive. Directories without our marker are ignored.
    """
    found = []
    for entry, marker in _marked(parent, exclude):
        state = lock_state(entry.path) if marker.kind == "run" else "unknown"
        if state == "held":
            found.append(LiveUser(entry.path, marker, "it holds the lock on its marker"))
        elif state == "unknown" and marker.owner is not None and marker.owner.alive():
            found.append(LiveUser(entry.path, marker, f"{marker.owner} is alive"))
    return found


def sweep_dead(parent: Path | str, *, exclude: str | None = None) -> list[str]:
    """Remove every scratch directory in ``parent`` (a run's or a probe's) whose owner process
    is provably gone: its marker names an owner of this machine that is dead, and no process
    holds its lock. ``exclude`` (the name of a resumed run's own directory) stays. A killed
    run can still be resumed afterwards: it lays its files out again. Returns one line per
    directory removed; what cannot be removed is left as it is. A directory kept on purpose
    (:func:`mark_kept`) stays."""
    removed = []
    for entry, marker in _marked(parent, exclude):
        if marker.kept or marker.owner is None or marker.owner.alive() is not False:
            continue
        if marker.kind == "run" and lock_state(entry.path) == "held":
            continue
        try:
            remove(entry.path, lambda m, ours=marker: m == ours)
        except OSError:
            continue
        what = f"its run {marker.id}" if marker.kind == "run" else "its probe"
        removed.append(f"{entry.path} ({what}, {marker.owner}, is gone)")
    return removed


def leftovers(parent: Path | str, *, exclude: str | None = None) -> list[tuple[str, int]]:
    """mountbench's own scratch directories in ``parent`` (any owner, ``exclude`` aside) and
    the bytes each holds on disk."""
    return [(entry.path, _disk_bytes(entry.path)) for entry, _marker in _marked(parent, exclude)]


def _disk_bytes(directory: str) -> int:
    total = 0
    for root, _dirs, files in os.walk(directory):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


# -- runs' private temp folders ------------------------------------------------------------------


def create_workdir(run_id: str, *, tmp: Path | str | None = None) -> Path:
    """A private folder ``<tmp>/mountbench-<run id>-*/`` for a run's job files, with an owner file."""
    path = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{run_id}-", dir=tmp))
    _write_new(path / WORKDIR_OWNER, json.dumps({"run_id": run_id, "owner": Owner.current().to_dict()}) + "\n")
    return path


def sweep_workdirs(*, tmp: Path | str | None = None) -> list[Path]:
    """Remove ``mountbench-*`` folders in ``tmp`` that it can prove are left by killed runs.

    A folder is removed only when all of this holds: its name is a run's work folder, it and its
    owner file (a regular file, no link) belong to this user, the owner file names the run the
    folder's name names, a process of this boot (its boot id recorded), and that process is gone
    (no process of that pid, or one started at another time, or an earlier boot). Anything else
    (another run's record copied in, a live or unknown owner, no boot id) stays.
    """
    base = Path(tmp or tempfile.gettempdir())
    removed = []
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        # the name alone decides what is looked into: a stat inside anything else in /tmp (a hung
        # FUSE mount point of someone else's, say) could block this run for good
        match = _WORKDIR_NAME.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        owner = _dead_workdir_owner(entry, match.group(1))
        if owner is None:
            continue
        try:
            base_fd = os.open(base, _DIR_FLAGS)
        except OSError:
            continue
        try:
            shutil.rmtree(entry.name, dir_fd=base_fd, ignore_errors=True)
        finally:
            os.close(base_fd)
        if not os.path.lexists(entry.path):
            removed.append(Path(entry.path))
    return removed


def _dead_workdir_owner(entry: os.DirEntry[str], run_id: str) -> Owner | None:
    """The owner of a run's work folder when it is provably a dead process of this user's run (see
    :func:`sweep_workdirs`), else None."""
    owner_file = Path(entry.path) / WORKDIR_OWNER
    try:
        st = os.lstat(owner_file)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or entry.stat().st_uid != os.geteuid():
            return None
        record = json.loads(owner_file.read_text())
        owner = Owner.from_dict(record["owner"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if record.get("run_id") != run_id or not owner.boot_id or not boot_id():
        return None
    return owner if owner.alive() is False else None
