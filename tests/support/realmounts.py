"""Real mounts for tests: created as root, always cleaned up.

Context managers (usable outside pytest too; each raises :class:`Unavailable` when it
cannot run here, i.e. not root or a tool is missing):

- ``tmpfs(size="64m")`` -> Path of a fresh tmpfs mount
- ``ext4_loop(size_mb=64)`` -> Path of a loop-mounted ext4 image
- ``sshd()`` -> :class:`SshServer` on 127.0.0.1:<free port>, generated host and user keys,
  a private sshd_config (the system's sshd and its config are never touched)
- ``sshfs(remote_dir, server, options=("cache=no",))`` -> :class:`FuseMount`
- ``bindfs(source, options=())`` -> :class:`FuseMount`
- ``fusefat(size_mb=32, image=None)`` -> :class:`FuseMount` of a fresh FAT16 image (``.source`` is the
  image), or of ``image`` again
- ``bind_mount(source)`` -> Path of a kernel bind mount of ``source`` (a coherent second view)
- ``host_dir(prefix)`` -> a temporary directory on the host's own filesystem

``tree_snapshot(root)`` records everything observable under a directory, to prove a
tool touched nothing it should not have (compare before/after with ``==``).

A :class:`FuseMount` knows its daemon's pid: ``freeze()``/``thaw()`` (SIGSTOP/SIGCONT)
make every request on the mount hang, to test timeouts. Cleanup thaws first.

Pytest fixtures (import them into a conftest.py: ``from support.realmounts import *`` with the
tests directory on sys.path, or ``pytest_plugins = ["realmounts"]`` in the root
conftest). Each skips with the reason when the mount cannot be made:

- ``ssh_server`` (session scope)
- ``tmpfs_dir``, ``ext4_dir``, ``bindfs_mount``, ``sshfs_mount``, ``sshfs_nocache_mount``,
  ``fusefat_mount`` (function scope; the sshfs ones expose the host side as ``.source``)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

__all__ = [
    "FuseMount",
    "SshServer",
    "Unavailable",
    "bind_mount",
    "bindfs",
    "bindfs_mount",
    "ext4_dir",
    "ext4_loop",
    "fusefat",
    "fusefat_mount",
    "host_dir",
    "is_mounted",
    "require_root",
    "require_tools",
    "requires_root",
    "ssh_server",
    "sshd",
    "sshfs",
    "sshfs_mount",
    "sshfs_nocache_mount",
    "tmpfs",
    "tmpfs_dir",
    "tree_snapshot",
]

MOUNT_TIMEOUT_S = 15.0
TMP_PREFIX = "mountbench-test-"


class Unavailable(Exception):
    """This mount cannot be made here (not root, a tool or kernel feature is missing)."""


def require_root() -> None:
    if os.geteuid() != 0:
        raise Unavailable("needs root to mount (run the tests as root)")


def require_tools(*names: str) -> dict[str, str]:
    """Absolute paths of the tools, or Unavailable naming the missing ones and their packages."""
    found = {n: shutil.which(n) or shutil.which(n, path="/usr/sbin:/sbin") for n in names}
    missing = [n for n, p in found.items() if not p]
    if missing:
        raise Unavailable(f"missing tool(s): {', '.join(missing)} ({_packages(missing)})")
    return {n: str(p) for n, p in found.items()}


def _packages(tools: Sequence[str]) -> str:
    pkg = {
        "sshd": "openssh-server",
        "ssh": "openssh-client",
        "ssh-keygen": "openssh-client",
        "sshfs": "sshfs",
        "bindfs": "bindfs",
        "mkfs.ext4": "e2fsprogs",
        "fusermount3": "fuse3",
        "fusefat": "fusefat",
        "mkfs.fat": "dosfstools",
    }
    return "apt-get install " + " ".join(sorted({pkg.get(t, t) for t in tools}))


requires_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount")


# -- mount table ---------------------------------------------------------------------------


def _mountinfo() -> list[tuple[str, str, str]]:
    """(mount point, major:minor, fstype) for every mount of this process."""
    rows = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        parts = line.split()
        sep = parts.index("-")
        mp = parts[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        rows.append((mp, parts[2], parts[sep + 1]))
    return rows


def is_mounted(path: Path | str) -> bool:
    """Is ``path`` a mount point? (from /proc/self/mountinfo: never blocks on a hung FUSE)"""
    p = os.path.abspath(path)
    return any(mp == p for mp, _, _ in _mountinfo())


def _mounts_under(path: Path | str) -> list[str]:
    p = os.path.abspath(path)
    return [mp for mp, _, _ in _mountinfo() if mp == p or mp.startswith(p + "/")]


def _run(cmd: Sequence[str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=False)


def _check(cmd: Sequence[str], timeout: float = 60.0) -> None:
    proc = _run(cmd, timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")


def _abort_fuse(mountpoint: str) -> None:
    """Abort the FUSE connection behind ``mountpoint`` (unblocks every hung request)."""
    for mp, devno, fstype in _mountinfo():
        if mp == mountpoint and fstype.startswith("fuse"):
            minor = devno.split(":")[1]
            abort = Path(f"/sys/fs/fuse/connections/{minor}/abort")
            with suppress(OSError):
                abort.write_text("1")


def _unmount(mountpoint: Path) -> None:
    """Unmount for sure: plain, then lazy, then (FUSE) abort the connection and lazy again."""
    mp = os.path.abspath(mountpoint)
    for cmd in (["umount", mp], ["umount", "-l", mp]):
        if not is_mounted(mp):
            return
        with suppress(subprocess.TimeoutExpired):
            _run(cmd, timeout=10)
    if is_mounted(mp):
        _abort_fuse(mp)
        _run(["umount", "-l", mp], timeout=10)
    if is_mounted(mp):
        raise RuntimeError(f"could not unmount {mp}")


@contextmanager
def _mountpoint(kind: str) -> Iterator[Path]:
    """An empty directory to mount on; removed afterwards only if nothing is mounted there."""
    mp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{kind}-"))
    try:
        yield mp
    finally:
        if not is_mounted(mp):
            with suppress(OSError):
                mp.rmdir()


@contextmanager
def host_dir(prefix: str = "host", parent: Path | None = None) -> Iterator[Path]:
    """A temporary directory on the host's own filesystem (or in ``parent``), removed afterwards."""
    d = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{prefix}-", dir=parent))
    try:
        yield d
    finally:
        # Never let rmtree descend into a mount left inside (it does not stop at st_dev).
        if not _mounts_under(d):
            shutil.rmtree(d, ignore_errors=True)


# -- kernel filesystems ------------------------------------------------------------------------


@contextmanager
def tmpfs(size: str = "64m") -> Iterator[Path]:
    require_root()
    with _mountpoint("tmpfs") as mp:
        _check(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "mountbench-test", str(mp)])
        try:
            yield mp
        finally:
            _unmount(mp)


@contextmanager
def ext4_loop(size_mb: int = 64, mkfs_options: Sequence[str] = (), in_ram: bool = False) -> Iterator[Path]:
    """A fresh ext4 image (in a temp directory) loop-mounted; image deleted afterwards.

    in_ram: the image lives on /dev/shm, so the host's own disk and its writeback (of the
    image's pages, dirtied through the loop device) do not shift the filesystem's speed; for
    tests that compare speeds within one ext4."""
    require_root()
    tools = require_tools("mkfs.ext4", "losetup")
    if not Path("/dev/loop-control").exists():
        raise Unavailable("no /dev/loop-control: loop devices unavailable")
    with host_dir("ext4img", Path("/dev/shm") if in_ram else None) as imgdir, _mountpoint("ext4") as mp:
        img = imgdir / "ext4.img"
        with open(img, "wb") as f:
            f.truncate(size_mb << 20)
        _check([tools["mkfs.ext4"], "-q", "-F", *mkfs_options, str(img)])
        # -o loop sets autoclear: the loop device goes away with the unmount.
        _check(["mount", "-t", "ext4", "-o", "loop", str(img), str(mp)])
        try:
            yield mp
        finally:
            _unmount(mp)


FROM_LOWER = "from-lower"  # a directory an overlay() mount shows from its lower layer, at its top


@contextmanager
def overlay(redirect_dir: str = "off") -> Iterator[Path]:
    """An overlay mount over directories of the host's (lower, upper, work), its lower layer holding a
    directory ``FROM_LOWER`` with a file in it: a directory the mount did not create. ``redirect_dir``
    decides whether it can be renamed (off: EXDEV, as Podman's layers on this kernel)."""
    require_root()
    with host_dir("overlay") as base, _mountpoint("overlay") as mp:
        for sub in ("lower", "upper", "work"):
            (base / sub).mkdir()
        (base / "lower" / FROM_LOWER).mkdir()
        (base / "lower" / FROM_LOWER / "seed").write_bytes(b"a file of the lower layer\n")
        options = (
            f"lowerdir={base / 'lower'},upperdir={base / 'upper'},workdir={base / 'work'},redirect_dir={redirect_dir}"
        )
        _check(["mount", "-t", "overlay", "overlay", "-o", options, str(mp)])
        try:
            yield mp
        finally:
            _unmount(mp)


@contextmanager
def bind_mount(source: Path) -> Iterator[Path]:
    """``mount --bind source`` elsewhere: a second view of the same filesystem (coherent)."""
    require_root()
    with _mountpoint("bind") as mp:
        _check(["mount", "--bind", str(source), str(mp)])
        try:
            yield mp
        finally:
            _unmount(mp)


# -- sshd and sshfs -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SshServer:
    """An sshd of our own on 127.0.0.1 accepting ``user`` with the generated ``key``."""

    host: str
    port: int
    user: str
    key: Path
    known_hosts: Path
    workdir: Path
    proc: subprocess.Popen[bytes] = field(repr=False)

    def ssh_options(self) -> list[str]:
        """``-o``-style options (without the ``-o``) that make ssh/sshfs use this server only."""
        return [
            f"IdentityFile={self.key}",
            "IdentitiesOnly=yes",
            f"UserKnownHostsFile={self.known_hosts}",
            "StrictHostKeyChecking=yes",
            "BatchMode=yes",
            "ConnectTimeout=10",
        ]

    def log(self) -> str:
        try:
            return (self.workdir / "sshd.log").read_text()
        except OSError:
            return ""


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on 127.0.0.1:{port} within {timeout:g} s")


@contextmanager
def sshd() -> Iterator[SshServer]:
    require_root()
    tools = require_tools("sshd", "ssh", "ssh-keygen")
    run_sshd = Path("/run/sshd")  # privilege separation directory, required by sshd
    with host_dir("sshd") as wd:
        os.chmod(wd, 0o700)
        for name in ("host_key", "user_key"):
            _check([tools["ssh-keygen"], "-q", "-t", "ed25519", "-N", "", "-f", str(wd / name)])
        port = free_port()
        host_pub = (wd / "host_key.pub").read_text().split()
        (wd / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
        (wd / "authorized_keys").write_text((wd / "user_key.pub").read_text())
        sftp = "/usr/lib/openssh/sftp-server"
        (wd / "sshd_config").write_text(
            "\n".join(
                [
                    f"Port {port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {wd / 'host_key'}",
                    f"PidFile {wd / 'sshd.pid'}",
                    f"AuthorizedKeysFile {wd / 'authorized_keys'}",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    f"Subsystem sftp {sftp if os.path.exists(sftp) else 'internal-sftp'}",
                    "LogLevel ERROR",
                    "",
                ]
            )
        )
        run_sshd.mkdir(mode=0o755, exist_ok=True)
        log = open(wd / "sshd.log", "wb")  # noqa: SIM115 - closed in finally
        proc = subprocess.Popen(
            [tools["sshd"], "-D", "-e", "-f", str(wd / "sshd_config")],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        server = SshServer("127.0.0.1", port, "root", wd / "user_key", wd / "known_hosts", wd, proc)
        try:
            try:
                _wait_port(port, proc, MOUNT_TIMEOUT_S)
            except RuntimeError as exc:
                raise RuntimeError(f"{exc}; sshd log:\n{server.log()}") from exc
            yield server
        finally:
            _stop(proc)
            log.close()
            # /run/sshd stays: another sshd (the lab's, a parallel test's) may need it now


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGCONT)
            proc.terminate()
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        except ProcessLookupError:
            pass


@dataclass
class FuseMount:
    """A FUSE mount served by ``proc`` (run in the foreground, so we own its pid)."""

    mountpoint: Path
    source: Path
    proc: subprocess.Popen[bytes] = field(repr=False)
    log_path: Path = field(repr=False)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def freeze(self) -> None:
        """SIGSTOP the daemon: every request on the mount now blocks.

        Returns once every thread of the daemon is stopped (SIGSTOP is asynchronous: a
        thread could otherwise still pick up one more request).
        """
        os.kill(self.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not self._all_stopped():
            time.sleep(0.005)

    def _all_stopped(self) -> bool:
        try:
            for task in os.listdir(f"/proc/{self.pid}/task"):
                with open(f"/proc/{self.pid}/task/{task}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] not in ("T", "t"):
                        return False
        except (FileNotFoundError, ProcessLookupError):
            return True
        return True

    def thaw(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    @contextmanager
    def frozen(self) -> Iterator[None]:
        self.freeze()
        try:
            yield
        finally:
            self.thaw()

    def log(self) -> str:
        try:
            return self.log_path.read_text()
        except OSError:
            return ""

    def __fspath__(self) -> str:
        return str(self.mountpoint)


@contextmanager
def _fuse_daemon(kind: str, cmd_for: Callable[[Path], list[str]], source: Path) -> Iterator[FuseMount]:
    with ExitStack() as stack:
        mp = stack.enter_context(_mountpoint(kind))
        logdir = stack.enter_context(host_dir(f"{kind}-log"))
        log_path = logdir / f"{kind}.log"
        log = stack.enter_context(open(log_path, "wb"))
        proc = subprocess.Popen(cmd_for(mp), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        mount = FuseMount(mp, Path(source), proc, log_path)
        try:
            deadline = time.monotonic() + MOUNT_TIMEOUT_S
            while not is_mounted(mp):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{kind} did not mount {source} on {mp} (exit {proc.poll()}); log:\n{mount.log()}"
                    )
                time.sleep(0.02)
            yield mount
        finally:
            if proc.poll() is None:
                with suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGCONT)
            _unmount(mp)
            _stop(proc)


@contextmanager
def sshfs(remote_dir: Path, server: SshServer, options: Sequence[str] = ()) -> Iterator[FuseMount]:
    """Mount ``remote_dir`` of ``server`` with sshfs; ``options`` are extra ``-o`` options
    (e.g. ``("cache=no",)``)."""
    require_root()
    tools = require_tools("sshfs")
    if not Path("/dev/fuse").exists():
        raise Unavailable("no /dev/fuse")

    def cmd(mp: Path) -> list[str]:
        opts = [*server.ssh_options(), *options]
        args = [tools["sshfs"], "-f", "-F", "/dev/null", "-p", str(server.port)]
        for opt in opts:
            args += ["-o", opt]
        return [*args, f"{server.user}@{server.host}:{remote_dir}", str(mp)]

    with _fuse_daemon("sshfs", cmd, remote_dir) as mount:
        yield mount


@contextmanager
def bindfs(source: Path, options: Sequence[str] = ()) -> Iterator[FuseMount]:
    """Mount ``source`` again through bindfs (a FUSE passthrough); ``options`` are bindfs flags."""
    require_root()
    tools = require_tools("bindfs")
    if not Path("/dev/fuse").exists():
        raise Unavailable("no /dev/fuse")

    def cmd(mp: Path) -> list[str]:
        return [tools["bindfs"], "-f", *options, str(source), str(mp)]

    with _fuse_daemon("bindfs", cmd, source) as mount:
        yield mount


@contextmanager
def fusefat(size_mb: int = 32, image: Path | None = None) -> Iterator[FuseMount]:
    """A fresh FAT16 image mounted read-write with fusefat (FUSE: no vfat module needed), or
    ``image`` again (an image a mount before left: kept afterwards).

    FAT is the limited filesystem par excellence: no links, no permissions, no xattrs,
    mtimes in 2 s steps, case-insensitive names; fusefat adds its own limits (it refuses
    to extend a file from an unaligned end, and loses a directory's contents on rename).
    """
    require_root()
    tools = require_tools("fusefat", "mkfs.fat")
    if not Path("/dev/fuse").exists():
        raise Unavailable("no /dev/fuse: FUSE is unavailable here")

    def mount(img: Path) -> AbstractContextManager[FuseMount]:
        return _fuse_daemon("fusefat", lambda mp: [tools["fusefat"], "-f", "-o", "rw+", str(img), str(mp)], img)

    if image is not None:
        with mount(image) as again:
            yield again
        return
    with host_dir("fatimg") as imgdir:
        img = imgdir / "fat16.img"
        with open(img, "wb") as f:
            f.truncate(size_mb << 20)
        _check([tools["mkfs.fat"], "-F", "16", str(img)])
        with mount(img) as fresh:
            yield fresh


# -- "nothing else was touched" ---------------------------------------------------------------------


def tree_snapshot(root: Path, *, exclude: Callable[[str], bool] = lambda name: False) -> dict:
    """Everything observable about the tree under ``root``: type/mode, owner, size, mtime,
    content hash (files) or target (links), xattr names. Directory mtimes are left out (they
    change when anything is created and removed inside). Top-level names for which
    ``exclude(name)`` is true are skipped. Compare two snapshots with ``==``.
    """
    out: dict[str, tuple[object, ...]] = {}
    st = os.lstat(root)
    out["."] = (st.st_mode, st.st_uid, st.st_gid)
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == Path(root):
            dirnames[:] = [d for d in dirnames if not exclude(d)]
            filenames = [f for f in filenames if not exclude(f)]
        dirnames.sort()
        for name in dirnames + sorted(filenames):
            p = Path(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(p)
            else:
                digest = ""
            try:
                xattrs = tuple(sorted(os.listxattr(p, follow_symlinks=False)))
            except OSError:
                xattrs = ()
            out[str(p.relative_to(root))] = (
                st.st_mode,
                st.st_uid,
                st.st_gid,
                st.st_size,
                None if stat.S_ISDIR(st.st_mode) else st.st_mtime_ns,
                digest,
                xattrs,
            )
    return out


# -- pytest fixtures ----------------------------------------------------------------------------------


@contextmanager
def _or_skip(cm: AbstractContextManager[T]) -> Iterator[T]:
    """Enter ``cm``; turn :class:`Unavailable` into a pytest skip with its reason."""
    with ExitStack() as stack:
        try:
            value = stack.enter_context(cm)
        except Unavailable as exc:
            pytest.skip(str(exc))
        yield value


@pytest.fixture(scope="session")
def ssh_server() -> Iterator[SshServer]:
    with _or_skip(sshd()) as server:
        yield server


@pytest.fixture
def tmpfs_dir() -> Iterator[Path]:
    with _or_skip(tmpfs()) as mp:
        yield mp


@pytest.fixture
def ext4_dir() -> Iterator[Path]:
    with _or_skip(ext4_loop()) as mp:
        yield mp


@pytest.fixture
def bindfs_mount() -> Iterator[FuseMount]:
    with host_dir("bindfs-src") as src, _or_skip(bindfs(src)) as m:
        yield m


@pytest.fixture
def fusefat_mount() -> Iterator[FuseMount]:
    """A fresh FAT16 image mounted with fusefat (``.source`` is the image file)."""
    with _or_skip(fusefat()) as m:
        yield m


@pytest.fixture
def sshfs_mount(ssh_server: SshServer) -> Iterator[FuseMount]:
    """sshfs with its default caching, over a host directory (``.source``)."""
    with host_dir("sshfs-src") as src, _or_skip(sshfs(src, ssh_server)) as m:
        yield m


@pytest.fixture
def sshfs_nocache_mount(ssh_server: SshServer) -> Iterator[FuseMount]:
    """sshfs with ``-o cache=no``, over a host directory (``.source``)."""
    with host_dir("sshfs-src") as src, _or_skip(sshfs(src, ssh_server, ("cache=no",))) as m:
        yield m
