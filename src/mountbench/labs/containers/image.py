"""The lab's image, built here with no registry: the host's own fio, the tools the tree
workloads run, and every library they link (as ``ldd`` lists them), imported with
``podman import``. Python and mountbench are not in it: the container gets the host's,
read-only, at the paths the host has them (lab.py), and the image holds what they link.

The image's ID and digest go into the run's facts, with the tools it holds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import mountbench
from mountbench.errors import ToolMissing
from mountbench.labfacts import ContainerImage
from mountbench.labs.containers.podman import Podman

# what the workloads run inside the container: fio, the tree workloads' tools, a shell, and what
# keeps the container up between rounds (sleep)
TOOLS = ("fio", "sh", "tar", "cp", "rm", "find", "cat", "dd", "mkdir", "sleep", "sync")
OPTIONAL_TOOLS = ("git", "rsync")  # the tree preset's git and rsync workloads, where the host has them
LAYER_DIR = "/layer"  # the target on the container's writable layer: a directory of the image
_LDD_PATH = re.compile(r"(/\S+)")


@dataclass(frozen=True)
class Image:
    name: str
    image_id: str
    digest: str
    tools: tuple[str, ...]

    def facts(self) -> ContainerImage:
        return ContainerImage(self.name, self.image_id, self.digest, self.tools)


def tool_paths() -> dict[str, str]:
    """Each tool's path on this host; ToolMissing for a required one that is missing."""
    found = {}
    for tool in TOOLS + OPTIONAL_TOOLS:
        path = shutil.which(tool)
        if path is None and tool in TOOLS:
            raise ToolMissing(f"{tool} is missing on this host (the container's image is built from the host's own)")
        if path is not None:
            found[tool] = str(Path(path).resolve())
    return found


def libraries(binaries: Iterable[str], strict: Iterable[str] = ()) -> set[str]:
    """Every shared library the binaries link, by the paths ldd resolves (the loader too),
    from one ldd call. A library ldd cannot find is refused for the ``strict`` binaries (the
    tools) and left to the loader for the rest (a wheel's own libraries, found beside it)."""
    files = list(dict.fromkeys(binaries))
    must = set(strict)
    found: set[str] = set()
    done = subprocess.run(["ldd", *files], capture_output=True, text=True, timeout=120)
    current = files[0] if len(files) == 1 else ""
    for line in done.stdout.splitlines():
        if not line.startswith(("\t", " ")) and line.endswith(":"):
            current = line[:-1]
            continue
        if "=>" in line and "not found" in line:
            if current in must:
                raise ToolMissing(f"{current} links a library this host lacks ({line.strip()}); reinstall it")
            continue
        match = _LDD_PATH.search(line.split("=>")[-1])
        if match:
            found.add(match.group(1))
    return found


def python_extensions() -> list[str]:
    """The compiled modules of the Python that will run in the container (its standard
    library's and the virtualenv's): what they link from the system goes into the image."""
    roots = {Path(os.__file__).parent, Path(sys.prefix) / "lib"}
    found = [str(p) for root in roots if root.is_dir() for p in root.rglob("*.so") if p.is_file()]
    return [str(Path(sys.executable).resolve()), *found]


def python_paths() -> list[str]:
    """What the host's mountbench needs to run in the container, each mounted read-only at
    its own path: the virtualenv, the standard library, the package, and every step of the
    interpreter's symlink chain (each a file: a directory such as /usr/bin would hide the
    image's own)."""
    paths = {
        str(Path(os.__file__).parent),  # the standard library, lib-dynload included
        sys.prefix,
        str(Path(mountbench.__file__).resolve().parent.parent),
    }
    hop = Path(sys.executable)
    for _ in range(10):
        paths.add(str(hop))
        if not hop.is_symlink():
            break
        hop = hop.parent / hop.readlink()
    # the outermost paths only: a path inside another is mounted with it
    return sorted(p for p in paths if not any(p != q and p.startswith(q + "/") for q in paths))


def build_rootfs(tools: dict[str, str], out: Path) -> Path:
    """A tarball of the image's files: each tool at /usr/bin/NAME, each library at its own
    path, an empty /tmp and /root, and the writable layer's target."""
    mounted = python_paths()
    libs = {
        lib
        for lib in libraries([*tools.values(), *python_extensions()], strict=tools.values())
        if not any(lib.startswith(path + "/") for path in mounted)  # those come with the mounts
    }
    archive = out / "rootfs.tar"
    with tarfile.open(archive, "w") as tar:
        for name in ("usr", "usr/bin", "tmp", "root", "etc", "mnt", LAYER_DIR.strip("/")):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
            tar.addfile(info)
        for link, target in (("bin", "usr/bin"), ("sbin", "usr/bin")):
            info = tarfile.TarInfo(link)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        for name, path in tools.items():
            tar.add(path, arcname=f"usr/bin/{name}")
        for lib in sorted(libs):
            tar.add(str(Path(lib).resolve()), arcname=lib.lstrip("/"))
        passwd = out / "passwd"
        passwd.write_text("root:x:0:0:root:/root:/bin/sh\n")
        tar.add(str(passwd), arcname="etc/passwd")
    return archive


def build_image(podman: Podman, name: str, label: str, workdir: Path) -> Image:
    """Build the rootfs from the host's tools and import it as ``name``."""
    tools = tool_paths()
    archive = build_rootfs(tools, workdir)
    # in a view of its own: podman import keeps a blob-info cache under /var/lib/containers whatever its
    # configuration says (containers/image's default for root): the lab's own directory takes its place
    podman.run(["import", "--quiet", "--change", f"LABEL {label.replace('=', '=', 1)}", str(archive), name],
               timeout=300, private_view=True)  # fmt: skip
    archive.unlink(missing_ok=True)
    fields = podman.run(["image", "inspect", "--format", "{{.Id}} {{.Digest}}", name]).split()
    image_id, digest = ([*fields, "", ""])[:2]
    versions = {name: path for name, path in tools.items()}
    return Image(name, image_id, digest, tuple(f"{tool}={path}" for tool, path in versions.items()))
