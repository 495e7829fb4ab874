"""Whether this process runs in a container, and what each mount is there.

Inside a container one directory tree hides very different storage: a bind mount is a host
directory (on Docker Desktop, Podman machine, Colima, Lima or OrbStack a host directory that
crosses into the engine's VM through virtiofs, 9p, gRPC FUSE or sshfs), a named volume is a
directory in the engine's own storage, the root is the container's writable layer (overlayfs
over the image, whose data goes with the container), and a tmpfs is memory. The mount table
(``/proc/self/mountinfo``) tells them apart: a bind mount's *root* field is the directory of
its source filesystem it shows (``/home/me/project``), a volume's lies in the engine's volume
store (``.../volumes/NAME/_data``), the writable layer is the mount at ``/``.

Which engine made the container is read from what each leaves behind: ``/.dockerenv``
(Docker), ``/run/.containerenv`` and ``container=podman`` (Podman), ``/proc/1/cgroup``
(Docker, Podman, Kubernetes, LXC), a Kubernetes service account. Outside a container nothing
here describes a mount (a bind mount on a host is the host's own business; the facts show its
source and options as for any target).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

# files an engine leaves in every container it starts: path -> engine
ENGINE_FILES = (("/.dockerenv", "Docker"), ("/run/.containerenv", "Podman"))
# the ``container`` variable of an init or of the environment (systemd's convention), value -> engine
ENGINE_VARIABLE = {"podman": "Podman", "docker": "Docker", "lxc": "LXC", "lxc-libvirt": "LXC",
                   "systemd-nspawn": "systemd-nspawn"}  # fmt: skip
# words in /proc/1/cgroup's paths, in the order they decide
CGROUP_WORDS = (("kubepods", "Kubernetes"), ("libpod", "Podman"), ("docker", "Docker"),
                ("containerd", "containerd"), ("lxc", "LXC"))  # fmt: skip
KUBERNETES_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"

# filesystems that carry a host directory into a VM (the engine's, on macOS and Windows): the
# name said for each. A bind mount of one of them crosses the VM boundary on every operation.
VM_SHARES = {
    "virtiofs": "virtiofs",
    "fakeowner": "virtiofs (Docker Desktop's fakeowner layer over it)",
    "9p": "9p",
    "fuse.grpcfuse": "gRPC FUSE (Docker Desktop)",
    "fuse.osxfs": "osxfs (Docker Desktop's first file sharing)",
    "fuse.sshfs": "sshfs (reverse sshfs: Lima, Colima)",
    "vboxsf": "VirtualBox shared folders",
    "prl_fs": "Parallels shared folders",
    "vmhgfs": "VMware shared folders",
    "fuse.vmhgfs-fuse": "VMware shared folders",
}
MEMORY = ("tmpfs", "ramfs")
_VOLUME = re.compile(r"/volumes/([^/]+)/_data(?:/|$)")  # Docker's and Podman's volume store
_KUBE_VOLUME = re.compile(r"/volumes/kubernetes\.io~([^/]+)/([^/]+)")


class Mount(Protocol):
    """A line of the mount table, as host/targets.MountEntry reads it."""

    mount_point: str
    fstype: str
    source: str
    root: str


@dataclass(frozen=True)
class Container:
    """The container this process runs in, and what showed it."""

    engine: str  # "Docker", "Podman", "Kubernetes", ... or "a container" when only its traces say so
    evidence: tuple[str, ...]  # what showed it: "/run/.containerenv", "container=podman", "/proc/1/cgroup"

    def said(self) -> str:
        """'Podman (/run/.containerenv, container=podman)': the host fact."""
        return f"{self.engine} ({', '.join(self.evidence)})"


@dataclass(frozen=True)
class MountKind:
    """What a target's mount is in a container: ``kind`` for a label (bind, volume, layer, tmpfs,
    overlay, mount) and ``said``, one phrase for the facts."""

    kind: str
    said: str
    through: str = ""  # the VM share a bind mount crosses ("" when it crosses none)


def detect(
    root: Path = Path("/"), environ: Mapping[str, str] | None = None, mountinfo: str | None = None
) -> Container | None:
    """The container this process runs in; None on a host (or in a VM: a guest is not a
    container). ``root``, ``environ`` and ``mountinfo`` are read as given (the tests' recorded
    machines); by default this machine's.

    What an engine sets as it starts the container (the ``container`` variable, the cgroup, a
    Kubernetes service account) is believed alone. The files it leaves (``/.dockerenv``,
    ``/run/.containerenv``) are believed only when ``/`` looks like a container's root: an
    image's overlay, or a directory of another filesystem (the vfs and btrfs drivers, LXC's
    directory backend). A VM or a machine made from a container image keeps those files in its
    own disk's root filesystem (this project's CI machines do), and is no container."""
    environ = os.environ if environ is None else environ
    table = mountinfo if mountinfo is not None else _read(root / "proc/self/mountinfo")
    engine, evidence = "", []
    variable = environ.get("container", "") or _init_variable(root)
    if variable:  # any value says a container (systemd's convention); some name their engine
        engine = ENGINE_VARIABLE.get(variable, "")
        evidence.append(f"container={variable}")
    cgroup_engine = _cgroup_engine(_read(root / "proc/1/cgroup"))
    if cgroup_engine:
        engine = engine or cgroup_engine
        evidence.append("/proc/1/cgroup")
    if (root / KUBERNETES_ACCOUNT.lstrip("/")).is_dir():
        engine = engine or "Kubernetes"
        evidence.append(KUBERNETES_ACCOUNT)
    contained_root = _root_is_a_containers(table)
    files = [(path, name) for path, name in ENGINE_FILES if (root / path.lstrip("/")).exists()]
    if files and (evidence or contained_root):
        engine = files[0][1]  # the engine's own file names it best
        evidence[:0] = [path for path, _name in files]
    if not evidence:
        layer = _layer_engine(table)
        if not layer:
            return None
        engine = layer  # an image's overlay at / alone: a container whose engine left no trace
        evidence.append("an overlay root in /proc/self/mountinfo")
    return Container(engine or "a container", tuple(evidence))


@cache
def here() -> Container | None:
    """This process's container (read once)."""
    return detect()


def classify(mount: Mount, in_container: bool) -> MountKind | None:
    """What ``mount`` is to a container (None outside one)."""
    if not in_container:
        return None
    point, fstype, root = mount.mount_point, mount.fstype, mount.root or "/"
    of = f"{root} of {mount.source}"
    if point == "/":
        return MountKind("layer", f"the container's writable layer ({fstype} over the image; its data goes with "
                                  "the container)")  # fmt: skip
    if fstype in MEMORY:
        return MountKind("tmpfs", f"{fstype} made for the container (memory; goes with it)")
    if fstype in VM_SHARES:
        through = VM_SHARES[fstype]
        return MountKind("bind", f"bind mount of a host directory shared into the engine's VM over {through}: "
                                 f"{of}", through=through)  # fmt: skip
    volume = _VOLUME.search(root)
    if volume:
        return MountKind("volume", f"named volume {volume.group(1)} (a directory in the engine's storage: {of})")
    kube = _KUBE_VOLUME.search(root)
    if kube:
        return MountKind("volume", f"Kubernetes {kube.group(1)} volume {kube.group(2)} ({of})")
    if root != "/":
        return MountKind("bind", f"bind mount: {of}")
    if fstype == "overlay" or fstype.endswith("overlayfs"):
        return MountKind("overlay", f"an overlay mount (as podman's :O: the container's changes stay in it; "
                                    f"{mount.source})")  # fmt: skip
    return MountKind("mount", f"a whole {fstype} filesystem mounted into the container ({mount.source})")


def label_type(mount: Mount, in_container: bool) -> str:
    """What an automatic label says in brackets: the filesystem, and in a container the kind of
    mount before it ('bind, ext4', 'volume, ext4', 'layer, overlay'; 'tmpfs' alone)."""
    kind = classify(mount, in_container)
    if kind is None or kind.kind == mount.fstype or kind.kind == "mount":
        return mount.fstype
    return f"{kind.kind}, {mount.fstype}"


def outlives_container(mount: Mount, in_container: bool) -> bool:
    """Whether what is written on ``mount`` stays when the container is removed (outside a
    container: always)."""
    kind = classify(mount, in_container)
    return kind is None or kind.kind not in ("layer", "tmpfs", "overlay")


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _init_variable(root: Path) -> str:
    """The ``container`` variable of PID 1 (readable as root, or as its owner)."""
    try:
        environ = (root / "proc/1/environ").read_bytes()
    except OSError:
        return ""
    for entry in environ.split(b"\0"):
        if entry.startswith(b"container="):
            return entry.partition(b"=")[2].decode(errors="replace")
    return ""


def _cgroup_engine(text: str) -> str:
    paths = [line.split(":", 2)[-1] for line in text.splitlines() if line.count(":") >= 2]
    for word, engine in CGROUP_WORDS:
        if any(word in path for path in paths):
            return engine
    return ""


def _root_mount(mountinfo: str) -> tuple[list[str], list[str]] | None:
    """The fields of the mount at / (the last one mounted there), split at ' - '."""
    found = None
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) > 4 and fields[4] == "/" and tail:
            found = (fields, tail)
    return found


def _root_is_a_containers(mountinfo: str) -> bool:
    """Whether / looks like a container's root: an overlay (or fuse-overlayfs), or a directory
    of another filesystem rather than a filesystem's own root."""
    root = _root_mount(mountinfo)
    if root is None:
        return not mountinfo  # no mount table to read: the engine's files decide
    fields, tail = root
    return "overlay" in tail[0] or fields[3] != "/"


def _layer_engine(mountinfo: str) -> str:
    """The engine whose image store holds the overlay at / ('' when / is no container's layer)."""
    root = _root_mount(mountinfo)
    if root is None or "overlay" not in root[1][0]:
        return ""
    options = root[1][2] if len(root[1]) > 2 else ""
    for word, engine in (("/docker/", "Docker"), ("containers/storage", "Podman"), ("io.containerd", "containerd")):
        if word in options:
            return engine
    return ""
