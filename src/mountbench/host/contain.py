"""Containment of every child that touches a target: it can write only beneath the directories
it is given (the target's scratch directory, the run's own work folder), by the kernel's word,
whatever a job file, a tarball or a stored command asks.

Reads stay allowed everywhere (fio reads its job file, tar its archive, git its config); what
is fenced is every way of changing the filesystem: writing or truncating a file, making or
removing a file, directory, device node, FIFO, socket or link, renaming across directories,
and ioctl on a device. ``/dev/null`` stays writable.

Mechanisms, best first (:func:`containment` says which this process uses):

- ``landlock``: the Landlock LSM (Linux 6.2 or newer: ABI 3, which fences truncation too).
- ``mount-namespace``: as root where Landlock is missing: a private mount namespace in which
  every mount is read-only but the writable directories (each bound onto itself first).
- ``none``: neither; the run says so before its first sample and records it.

How a restriction reaches a child without code between fork and exec (``preexec_fn`` is unsafe
beside threads, and mountbench has a few): Landlock, no_new_privs and a mount namespace are
properties of a *thread*, and a child inherits those of the thread that forked it. So each
fence has a thread of its own (a "spawner") that restricts itself once and then only starts
children (:func:`popen`), which are born inside the fence. A spawner lives while a child it
started may need it (``PR_SET_PDEATHSIG`` is tied to the forking thread) and ends when idle.

``MOUNTBENCH_CONTAIN`` (for tests only): ``off`` forces ``none`` (the fuzz test proves it finds
escapes without containment), ``namespace`` forces the mount-namespace fallback.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mountbench.host.libc import libc as load_libc

ENV = "MOUNTBENCH_CONTAIN"
LANDLOCK = "landlock"
NAMESPACE = "mount-namespace"
NONE = "none"
FACT = "containment"  # the run's host facts: how its children were contained

# x86_64 and aarch64 share these numbers (they were added after the tables were unified)
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
_LANDLOCK_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
MIN_LANDLOCK_ABI = 3  # ABI 3 (Linux 6.2) fences truncate(2); ABI 2 adds cross-directory renames

# Landlock's filesystem rights (include/uapi/linux/landlock.h) and the ABI that brought each
_WRITE_FILE = 1 << 1
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_IOCTL_DEV = 1 << 15  # ABI 5
_WRITES_ABI1 = (
    _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_CHAR | _MAKE_DIR | _MAKE_REG | _MAKE_SOCK | _MAKE_FIFO
    | _MAKE_BLOCK | _MAKE_SYM
)  # fmt: skip
_FILE_RIGHTS = _WRITE_FILE | _TRUNCATE | _IOCTL_DEV  # the rights a rule on a file (not a directory) may hold

DEVICES = ("/dev/null",)  # files every child may write (fio needs nothing else: strace, fio 3.33)

# mount(2) and unshare(2)
_CLONE_NEWNS = 0x00020000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RELATIME = 1 << 21
_ST_TO_MS = (
    (os.ST_NOSUID, _MS_NOSUID), (os.ST_NODEV, _MS_NODEV), (os.ST_NOEXEC, _MS_NOEXEC),
    (os.ST_NOATIME, _MS_NOATIME), (os.ST_NODIRATIME, _MS_NODIRATIME), (os.ST_RELATIME, _MS_RELATIME),
) if sys.platform.startswith("linux") else ()  # fmt: skip

SPAWNER_IDLE_S = 30.0


class ContainmentError(OSError):
    """A fence could not be put up: the child is not started."""


@dataclass(frozen=True)
class Containment:
    """How children are contained on this machine: the mechanism and what to know about it."""

    mechanism: str  # LANDLOCK, NAMESPACE or NONE
    detail: str  # "Landlock ABI 7", or why there is none

    @property
    def contained(self) -> bool:
        return self.mechanism != NONE

    def fact(self) -> str:
        """One line for the run's facts and doctor."""
        if self.mechanism == LANDLOCK:
            return f"landlock ({self.detail}): what a run starts can write only its scratch directories and outputs"
        if self.mechanism == NAMESPACE:
            return (
                f"mount-namespace ({self.detail}): what a run starts sees every mount read-only but its scratch "
                "directories and outputs"
            )
        return f"none ({self.detail}): what a run starts is not fenced by the kernel; only the job checks guard"

    def to_json(self) -> dict[str, str]:
        return {"mechanism": self.mechanism, "detail": self.detail}


@dataclass(frozen=True)
class Fence:
    """What a child may write: everything beneath ``writable`` (directories) and the files of
    ``writable`` that are files; plus DEVICES. The identity of each path (device, inode) is part
    of the fence, so a directory made anew at the same path gets a fence of its own."""

    writable: tuple[str, ...]
    identities: tuple[tuple[int, int] | None, ...] = ()

    @classmethod
    def of(cls, paths: Iterable[Path | str | None]) -> Fence:
        chosen = tuple(dict.fromkeys(os.path.abspath(p) for p in paths if p is not None))
        return cls(chosen, tuple(_identity(p) for p in chosen))

    def describe(self) -> str:
        return ", ".join(self.writable) or "nothing"


NOTHING = Fence(())  # a child that must write nothing (fio --parse-only)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


# --- what this machine offers --------------------------------------------------------------


def landlock_abi() -> int:
    """The Landlock ABI this kernel offers (0: none, or Landlock disabled at boot)."""
    libc = load_libc()
    if libc is None:
        return 0
    abi = libc.syscall(
        ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
        ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION),
    )  # fmt: skip
    return int(abi) if abi > 0 else 0


def containment() -> Containment:
    """What this process uses (decided once; ``MOUNTBENCH_CONTAIN`` read each time, for tests)."""
    return _decide(os.environ.get(ENV, "").strip().lower())


@functools.cache
def _decide(forced: str) -> Containment:
    if forced == "off":
        return Containment(NONE, f"turned off by {ENV}=off (tests only)")
    if not sys.platform.startswith("linux"):
        return Containment(NONE, f"no Landlock or mount namespaces on {sys.platform}")
    abi = landlock_abi()
    if forced != "namespace" and abi >= MIN_LANDLOCK_ABI:
        return Containment(LANDLOCK, f"Landlock ABI {abi}")
    why = (
        f"forced by {ENV}=namespace (tests only)"
        if forced == "namespace"
        else f"Landlock ABI {abi} is older than {MIN_LANDLOCK_ABI} (Linux 6.2)"
        if abi
        else "no Landlock in this kernel"
    )
    if os.geteuid() != 0:
        return Containment(NONE, f"{why}, and a private mount namespace needs root")
    try:
        _trial(_namespace_fence)
    except OSError as exc:
        return Containment(NONE, f"{why}, and a private mount namespace failed: {exc.strerror or exc}")
    return Containment(NAMESPACE, f"{why}; root")


def _trial(confine: Callable[[Fence], None]) -> None:
    """Put up a fence of nothing in a throwaway thread: raises what it raised."""
    failure: list[BaseException] = []

    def attempt() -> None:
        try:
            confine(NOTHING)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=attempt, name="mountbench-contain-trial", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


# --- putting a fence up (in the calling thread, for good) ----------------------------------


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise ContainmentError(err, f"{what}: {os.strerror(err)}")
    return result


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _handled_rights(abi: int) -> int:
    rights = _WRITES_ABI1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _landlock_fence(fence: Fence) -> None:
    """Restrict the calling thread (and every child it starts from now on) to ``fence``."""
    libc = load_libc()
    abi = landlock_abi()
    if libc is None or abi < MIN_LANDLOCK_ABI:
        raise ContainmentError(0, f"Landlock ABI {abi} is not enough")
    handled = _handled_rights(abi)
    attr = _RulesetAttr(handled)
    size = ctypes.c_size_t(ctypes.sizeof(attr))
    ruleset = _check(
        libc.syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(attr), size, ctypes.c_uint32(0)),
        "landlock_create_ruleset",
    )
    try:
        for path in (*fence.writable, *DEVICES):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # nothing there to write to (a child may not make it either)
            try:
                is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
                rule = _PathBeneathAttr(handled if is_dir else handled & _FILE_RIGHTS, fd)
                _check(
                    libc.syscall(ctypes.c_long(_SYS_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset),
                                 ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)),
                    f"landlock_add_rule {path}",
                )  # fmt: skip
            finally:
                os.close(fd)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(
            libc.syscall(ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
            "landlock_restrict_self",
        )
    finally:
        os.close(ruleset)


def _mount(source: str | None, target: str, flags: int) -> None:
    libc = load_libc()
    _check(
        libc.mount(source.encode() if source else None, target.encode(), None, ctypes.c_ulong(flags), None),
        f"mount {target}",
    )


def _mount_points() -> list[str]:
    """The mount points of the calling thread's mount namespace, parents first."""
    points = []
    with open("/proc/thread-self/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
        for line in info:
            fields = line.split(" ")
            if len(fields) > 4:
                points.append(_unescape(fields[4]))
    return points


def _unescape(text: str) -> str:
    """mountinfo's octal escapes (``\\040`` for a space) undone."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1 : i + 4].isdigit() and len(text[i + 1 : i + 4]) == 3:
            out.append(chr(int(text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _namespace_fence(fence: Fence) -> None:
    """Give the calling thread a private mount namespace in which every mount is read-only but
    the fence's directories (each bound onto itself first, so it is a mount of its own)."""
    libc = load_libc()
    if libc is None:
        raise ContainmentError(0, "no libc")
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", _MS_REC | _MS_PRIVATE)  # nothing done here reaches the machine's mounts
    kept = set()
    for path in fence.writable:
        if os.path.isdir(path):
            _mount(path, path, _MS_BIND)
            kept.add(path)
    for point in _mount_points():
        if point in kept:  # a remount of the path would reach the bind just made on top of it
            continue
        try:
            flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
            st = os.statvfs(point)
            for st_flag, ms_flag in _ST_TO_MS:
                if st.f_flag & st_flag:
                    flags |= ms_flag
            _mount(None, point, flags)
        except OSError as exc:
            if exc.errno in (2, 13, 20):  # ENOENT, EACCES, ENOTDIR: a mount point hidden from here
                continue
            raise
    for path in kept:  # each bind stayed writable (a mount below a fenced directory would be read-only)
        st = os.statvfs(path)
        if st.f_flag & os.ST_RDONLY:
            raise ContainmentError(30, f"{path} stayed read-only in the private mount namespace")


_CONFINE = {LANDLOCK: _landlock_fence, NAMESPACE: _namespace_fence}


# --- spawners ----------------------------------------------------------------------------------


@dataclass
class _Request:
    start: Callable[[], subprocess.Popen]
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    result: subprocess.Popen | None = None
    error: BaseException | None = None


class _Spawner:
    """A thread fenced once (``confine``, run in it), that then only starts children (see the module)."""

    def __init__(self, key: Any, fence: Fence, confine: Callable[[], None]) -> None:
        self.key = key
        self.fence = fence
        self.confine = confine
        self.held = [_hold(path) for path in fence.writable]  # what the fence was put up on
        self.requests: queue.Queue[_Request] = queue.Queue()
        self.children: list[subprocess.Popen] = []
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self.ended = False
        self.thread = threading.Thread(target=self._serve, name="mountbench-spawner", daemon=True)
        self.thread.start()
        self.ready.wait()

    def _serve(self) -> None:
        try:
            self.confine()
        except BaseException as exc:
            self.failure = exc
            self.ended = True
            self.ready.set()
            return
        self.ready.set()
        while True:
            try:
                request = self.requests.get(timeout=SPAWNER_IDLE_S)
            except queue.Empty:
                if self._may_end():
                    return
                continue
            try:
                request.result = request.start()
                self.children.append(request.result)
            except BaseException as exc:
                request.error = exc
            request.done.set()

    def _may_end(self) -> bool:
        """True (and no request is taken any more) when every child started here has been reaped."""
        with _LOCK:
            self.children = [child for child in self.children if child.returncode is None]
            if self.children or not self.requests.empty():
                return False
            self.ended = True
            if _SPAWNERS.get(self.key) is self:
                del _SPAWNERS[self.key]
            for fd in self.held:
                if fd is not None:
                    os.close(fd)
            self.held = []
            return True

    def stale(self) -> bool:
        """Was a directory of the fence removed (and perhaps made anew at its path, even with its
        inode number)? Its fence then holds the old one: a new spawner must be made."""
        for path, fd in zip(self.fence.writable, self.held, strict=False):
            if fd is None:
                continue
            try:
                held, now = os.fstat(fd), os.stat(path)
            except OSError:
                return True
            if held.st_nlink == 0 or (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
                return True
        return False

    def submit(self, start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
        request = _Request(start)
        self.requests.put(request)
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result


def _hold(path: str) -> int | None:
    try:
        return os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None


_LOCK = threading.Lock()
_SPAWNERS: dict[Any, _Spawner] = {}


def _spawner(key: Any, fence: Fence, confine: Callable[[], None], what: str) -> _Spawner:
    with _LOCK:
        spawner = _SPAWNERS.get(key)
        if spawner is None or spawner.ended or spawner.stale():
            spawner = _Spawner(key, fence, confine)
            if spawner.failure is not None:
                raise ContainmentError(
                    getattr(spawner.failure, "errno", 0) or 0, f"cannot start a child {what}: {spawner.failure}"
                )
            _SPAWNERS[key] = spawner
        return spawner


# --- starting children -------------------------------------------------------------------------


def popen(argv: Sequence[str], fence: Fence, **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen(argv, **kwargs)`` born inside ``fence`` (uncontained where
    :func:`containment` says ``none``)."""
    mechanism = containment().mechanism
    if mechanism == NONE:
        return subprocess.Popen(list(argv), **kwargs)
    confine = functools.partial(_CONFINE[mechanism], fence)
    spawner = _spawner((mechanism, fence), fence, confine, f"contained to {fence.describe()}")
    return spawner.submit(functools.partial(subprocess.Popen, list(argv), **kwargs))


# --- a private view of the machine (root): what a tool would change of the machine's, kept apart ----


def popen_in_view(argv: Sequence[str], binds: Sequence[tuple[str, str]], **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen(argv, **kwargs)`` born in a private mount namespace in which each
    ``(source, target)`` of ``binds`` is bound over ``target``: what the child writes there goes
    to ``source``, never to the machine's ``target`` (Podman's blob-info cache under
    /var/lib/containers, say). Root only; nothing else of the machine's view changes."""
    key = ("view", tuple(binds))
    spawner = _spawner(key, NOTHING, functools.partial(_private_view, tuple(binds)), f"with {_binds_said(binds)}")
    return spawner.submit(functools.partial(subprocess.Popen, list(argv), **kwargs))


def _binds_said(binds: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{source} over {target}" for source, target in binds)


def _private_view(binds: tuple[tuple[str, str], ...]) -> None:
    libc = load_libc()
    if libc is None:
        raise ContainmentError(0, "no libc")
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", _MS_REC | _MS_PRIVATE)
    for source, target in binds:
        _mount(source, target, _MS_BIND)


def run(
    argv: Sequence[str],
    fence: Fence,
    *,
    binds: Sequence[tuple[str, str]] = (),
    input: Any = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess:
    """``subprocess.run`` for a child born inside ``fence`` (or, with ``binds``, in a private view:
    :func:`popen_in_view`; the fence is then not put up)."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    started = popen_in_view(argv, binds, **kwargs) if binds else popen(argv, fence, **kwargs)
    with started as proc:
        try:
            stdout, stderr = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        except BaseException:
            proc.kill()
            raise
    done = subprocess.CompletedProcess(list(argv), proc.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done
