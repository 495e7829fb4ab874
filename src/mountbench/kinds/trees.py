"""Deterministic, realistic source trees for the tree workloads, written as an
uncompressed tar archive; and the user's own tarballs, decompressed once.

Profiles reproduce shapes people care about:
- ``git``: git v2.39.0 as in study S0: 213 directories, 4,294 files, ~43 MB;
- ``node``: a node_modules-like tree: 2,800 directories, 30,000 small files, ~140 MB;
- ``tiny``: 12 directories, 120 files, ~600 KB, for tests.

File sizes are log-normal (many small text files, a few large ones) rescaled to
the profile's total; directories form a tree whose depth tails off like a real
source tree. Everything follows from the seed: same seed, same archive bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import math
import random
import shutil
import subprocess
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mountbench.errors import ToolMissing, UsageError
from mountbench.host.process import kill, spawn
from mountbench.units import format_bytes

GENERATOR_VERSION = 1
_MTIME = 1_670_000_000  # fixed, so archives are byte-identical for a seed


@dataclass(frozen=True)
class TreeProfile:
    name: str
    directories: int
    files: int
    total_bytes: int
    sigma: float  # spread of the log-normal file sizes
    max_depth: int
    description: str


PROFILES = {
    p.name: p
    for p in (
        TreeProfile(
            "git", 213, 4294, 43 * 1000 * 1000, 1.6, 6, "git v2.39.0 source (study S0): 213 dirs, 4,294 files, 43 MB"
        ),
        TreeProfile(
            "node", 2800, 30000, 140 * 1000 * 1000, 1.5, 9, "node_modules-like: 2,800 dirs, 30,000 files, 140 MB"
        ),
        TreeProfile("tiny", 12, 120, 600 * 1000, 1.2, 3, "tiny: 12 dirs, 120 files, 600 kB (tests)"),
    )
}


@dataclass(frozen=True)
class TreeArchive:
    """An uncompressed tar ready to extract, and what it holds."""

    path: Path
    files: int
    directories: int
    bytes: int  # sum of file sizes
    origin: str  # "profile git (seed 1)" or the user's tarball path
    root: str  # the single top-level directory inside, or "." when there are several
    not_kept: str = ""  # what of the user's tarball extraction leaves out (set-ID bits, owners), said

    @property
    def entries(self) -> int:
        return self.files + self.directories


def profile(name: str) -> TreeProfile:
    if name not in PROFILES:
        raise UsageError(f"unknown tree profile {name!r}; choose one of: {', '.join(PROFILES)}")
    return PROFILES[name]


def _directory_paths(rng: random.Random, p: TreeProfile) -> list[str]:
    """A rooted tree of directories: each new one hangs under an existing one,
    shallow parents preferred, so depth tails off as in real source trees."""
    dirs = [""]
    depth = {"": 0}
    for index in range(p.directories - 1):
        candidates = [d for d in dirs if depth[d] < p.max_depth]
        weights = [0.5 ** depth[d] for d in candidates]
        parent = rng.choices(candidates, weights)[0]
        name = f"{parent}/d{index:04d}" if parent else f"d{index:04d}"
        dirs.append(name)
        depth[name] = depth[parent] + 1
    return dirs[1:]


def _file_sizes(rng: random.Random, p: TreeProfile) -> list[int]:
    median = p.total_bytes / p.files / math.exp(p.sigma**2 / 2)
    raw = [rng.lognormvariate(math.log(median), p.sigma) for _ in range(p.files)]
    scale = p.total_bytes / sum(raw)
    sizes = [max(1, int(s * scale)) for s in raw]
    sizes[0] += p.total_bytes - sum(sizes)  # exact total
    return sizes


def generate(profile_name: str, seed: int, directory: Path) -> TreeArchive:
    """Write ``<directory>/tree-<profile>-<seed>.tar`` (reused when already there)."""
    p = profile(profile_name)
    path = directory / f"tree-{p.name}-s{seed}-v{GENERATOR_VERSION}.tar"
    origin = f"profile {p.name} (seed {seed})"
    if not path.exists():
        rng = random.Random(f"{p.name}:{seed}")
        dirs = _directory_paths(rng, p)
        sizes = _file_sizes(rng, p)
        # realistic-looking content: slices of a seeded block of text-like bytes
        alphabet = b"abcdefghijklmnopqrstuvwxyz     \n\t{}();=_0123456789"
        block = bytes(rng.choice(alphabet) for _ in range(1 << 16))
        block = block * (max(sizes) // len(block) + 2)
        root = f"{p.name}-tree"  # as in TreeArchive.root below
        weights = [1.0 / (i + 1) for i in range(len(dirs) + 1)]  # a few directories hold many files
        homes = rng.choices(["", *dirs], weights, k=len(sizes))
        tmp = path.with_suffix(".partial")
        with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as tar:
            for d in [root] + [f"{root}/{d}" for d in dirs]:
                info = tarfile.TarInfo(d)
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, _MTIME
                tar.addfile(info)
            for index, (size, home) in enumerate(zip(sizes, homes, strict=True)):
                ext = rng.choice((".c", ".h", ".txt", ".sh", ".perl", ".po", ".md", ".py"))
                name = f"{root}/{home}/f{index:05d}{ext}" if home else f"{root}/f{index:05d}{ext}"
                offset = rng.randrange(0, 1 << 16)
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = size, 0o644, _MTIME
                tar.addfile(info, io.BytesIO(block[offset : offset + size]))
        tmp.replace(path)
    return TreeArchive(path, p.files, p.directories, p.total_bytes, origin, f"{p.name}-tree")


_DECOMPRESSORS = {
    ".gz": ("gzip", gzip.open),
    ".tgz": ("gzip", gzip.open),
    ".xz": ("xz", lzma.open),
    ".txz": ("xz", lzma.open),
}


TARBALL_LIMIT = 16 << 30  # decompressed bytes: a tree that big is no source tree (or a decompression bomb)
TARBALL_ENTRY_LIMIT = 1_000_000


def _copy_bounded(src: Any, out: Any, tarball: Path) -> None:
    copied = 0
    while chunk := src.read(1 << 20):
        copied += len(chunk)
        if copied > TARBALL_LIMIT:
            raise UsageError(f"{tarball} decompresses to more than {format_bytes(TARBALL_LIMIT)}; give a smaller tree")
        out.write(chunk)


def _unzstd_bounded(tarball: Path, plain: Path) -> None:
    """zstd's output copied through the same bound as gzip's and xz's: a bomb is stopped at
    :data:`TARBALL_LIMIT` (zstd killed), not written until the disk is full."""
    with tempfile.TemporaryFile() as errors, open(plain, "wb") as out:
        proc = spawn(["zstd", "-dc", str(tarball)], session=False, death_signal=None, stdout=subprocess.PIPE,
                     stderr=errors)  # fmt: skip
        assert proc.stdout is not None
        try:
            _copy_bounded(proc.stdout, out, tarball)
        except BaseException:
            kill(proc)  # stopped early: zstd would block on a full pipe for ever
            raise
        finally:
            proc.stdout.close()
            proc.wait()
        if proc.returncode != 0:
            errors.seek(0)
            message = errors.read().decode(errors="replace").strip()
            raise UsageError(f"cannot decompress {tarball}: {message}")


def from_tarball(tarball: Path, directory: Path) -> TreeArchive:
    """The user's tree: decompressed once into ``directory`` (so CPU decompression
    is never what is timed), then listed to know its files, directories and size."""
    if not tarball.is_file():
        raise UsageError(f"tarball {tarball} does not exist or is not a file; check the --tarball path")
    digest = hashlib.sha256(str(tarball.resolve()).encode()).hexdigest()[:12]
    plain = directory / f"user-{digest}.tar"
    name = tarball.name.lower()
    try:
        if name.endswith(".tar"):
            shutil.copyfile(tarball, plain)
        elif name.endswith((".tar.zst", ".tzst")):
            if shutil.which("zstd") is None:
                raise ToolMissing(f"{tarball} is zstd-compressed but zstd is missing; apt-get install zstd")
            _unzstd_bounded(tarball, plain)
        else:
            suffix = next((s for s in _DECOMPRESSORS if name.endswith(".tar" + s) or name.endswith(s)), None)
            if suffix is None:
                raise UsageError(f"unsupported tarball {tarball.name}; give a .tar, .tar.gz, .tar.xz or .tar.zst file")
            opener = _DECOMPRESSORS[suffix][1]
            with opener(tarball, "rb") as src, open(plain, "wb") as out:
                _copy_bounded(src, out, tarball)
        files = directories = total = set_id = owned = 0
        tops: set[str] = set()
        with tarfile.open(plain, "r:") as tar:
            for count, member in enumerate(tar, 1):
                tar.members = []  # listed, not kept: a listing of millions of entries stays small
                if count > TARBALL_ENTRY_LIMIT:
                    raise UsageError(f"{tarball} holds more than {TARBALL_ENTRY_LIMIT:,} entries; give a smaller tree")
                if member.ischr() or member.isblk():
                    raise UsageError(
                        f"{tarball} holds a device node ({_shown(member.name)}); a source tree holds none, and "
                        "mountbench makes no device in a target: give a tarball without it"
                    )
                tops.add(member.name.removeprefix("./").split("/", 1)[0])
                set_id += bool(member.mode & 0o6000)
                owned += bool(member.uid or member.gid)
                if member.isdir():
                    directories += 1
                elif member.isfile():
                    files += 1
                    total += member.size
    except UsageError:
        plain.unlink(missing_ok=True)
        raise
    except (OSError, EOFError, lzma.LZMAError, zlib.error, tarfile.TarError) as exc:
        plain.unlink(missing_ok=True)
        raise UsageError(f"{tarball} is not a readable tar archive ({exc}); check the file") from None
    if files == 0:
        plain.unlink(missing_ok=True)
        raise UsageError(f"{tarball} holds no files; give a tarball of a source tree")
    root = tops.pop() if len(tops) == 1 else "."
    return TreeArchive(plain, files, directories, total, str(tarball), root, _not_kept(set_id, owned))


def _not_kept(set_id: int, owned: int) -> str:
    """What extraction (tar --no-same-owner --no-same-permissions) leaves out of the user's tarball."""
    parts = []
    if set_id:
        parts.append(f"the set-user-ID/set-group-ID bits of {set_id:,} entries")
    if owned:
        parts.append(f"the owners of {owned:,} entries")
    if not parts:
        return ""
    return (f"{' and '.join(parts)} in the tarball are not kept: extracted with tar --no-same-owner "
            "--no-same-permissions, every file is this user's, as a user without root extracts it")  # fmt: skip


def _shown(name: str) -> str:
    return repr(name if len(name) <= 80 else name[:77] + "...")
