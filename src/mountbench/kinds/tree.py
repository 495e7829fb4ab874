"""Tree workloads: what people feel on a mount (study S0: extracting 4,294 files
took 32 s on 9p, 5.5 s on virtiofs, 2 s natively, while fio IOPS barely differed;
study S3: rsync onto the 9p share was catastrophically slow).

Each action runs one real command (tar, find, cat, cp, git, rm, rsync) timed as a
whole process: wall clock, and user/sys from its rusage. Setup and teardown
(fresh trees, warming) are done around it with real commands, untimed.

rsync copies from a source tree outside the target (extracted once into the
runner's private temporary directory and read into the page cache before every
sample), so only the target is measured.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from mountbench.errors import ToolMissing, UsageError
from mountbench.host import contain
from mountbench.host.contain import Fence
from mountbench.host.process import last_lines, run_timed
from mountbench.host.scratch import OutsideScratch, mkdir_beneath, open_beneath, rmtree_beneath
from mountbench.kinds.base import Adjustments, KindOption, RunnerSetup, generic_description, new_workload
from mountbench.kinds.runner import RunnerDefaults
from mountbench.kinds.trees import PROFILES, TreeArchive, from_tarball, generate
from mountbench.model import (
    TARBALL_STRIPPED,
    Caveat,
    Description,
    Flag,
    KindOptions,
    Outcome,
    Prepared,
    RunSettings,
    SweepAxis,
    TargetContext,
    Workload,
    WorkloadFailed,
)

GIT = [
    "git",
    "-c",
    "user.name=mountbench",
    "-c",
    "user.email=mountbench@localhost",
    "-c",
    "gc.auto=0",
    "-c",
    "safe.directory=*",
    "-c",
    "init.defaultBranch=main",
]


METHOD = "Tree workloads time one real command (tar, find, cp, git, rm, rsync) as a whole process."


@dataclass(frozen=True)
class Action:
    title: str
    cold: bool  # caches dropped before it (when allowed)
    tools: tuple[str, ...]
    rate: str  # "files_per_s", "entries_per_s" or ""
    moves_bytes: bool = False  # also reports bytes_per_s (the bytes of the files it handles)


ACTIONS = {
    "extract": Action("extract tree (tar -x)", False, ("tar",), "files_per_s"),
    "walk-cold": Action("stat every entry, cold (find)", True, ("find",), "entries_per_s"),
    "walk-warm": Action("stat every entry, warm (find)", False, ("find",), "entries_per_s"),
    "read-cold": Action("read every file, cold (cat)", True, ("find", "cat"), "files_per_s"),
    "copy": Action("copy tree (cp -a)", False, ("cp",), "files_per_s"),
    "git-commit": Action("git init + add + commit", False, ("git", "sh"), "files_per_s"),
    "git-status": Action("git status, warm", False, ("git",), "entries_per_s"),
    "delete": Action("delete tree (rm -rf)", False, ("rm",), "files_per_s"),
    "rsync": Action("copy tree onto the target (rsync -a)", False, ("rsync", "find", "cat"), "files_per_s", True),
    "rsync-update": Action(
        "update 10% of the files (rsync -a, delta transfer)", False, ("rsync", "find", "cat"), "files_per_s", True
    ),
}
SPACE_FACTOR = 5  # canonical tree + git repo (tree + .git) + one transient copy
# rsync -a without owner and group, as extraction uses --no-same-owner: chown fails on 9p and sshfs
RSYNC = ["rsync", "-a", "--no-owner", "--no-group"]
UPDATE_EVERY = 10  # rsync-update touches every 10th file (10%), sorted by path


# what an action stands for in views across workloads (the report's pick two reads "tree copy",
# else "tree sync", as its tree measure)
ROLES = {"extract": "tree copy", "rsync": "tree sync"}


def tree_workload(action: str, tree: dict, source: str) -> Workload:
    if action not in ACTIONS:
        raise UsageError(f"unknown tree action {action!r}; choose one of: {', '.join(ACTIONS)}")
    spec = {"action": action, "tree": tree, "headline": ["wall"]}
    return new_workload(KIND, action, ACTIONS[action].title, source, spec)


@dataclass(frozen=True)
class TreeChoice:
    """The tree that tree workloads use (--tree, --tarball): a generated profile, or the user's tarball."""

    profile: str | None = None
    seed: int = 1
    tarball: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON form a tree workload's spec carries, and a stored config."""
        if self.tarball:
            return {"tarball": self.tarball}
        return {"profile": self.profile, "seed": self.seed}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> TreeChoice | None:
        if not data:
            return None
        if data.get("tarball"):
            return cls(tarball=str(data["tarball"]))
        return cls(profile=str(data.get("profile") or "git"), seed=int(data.get("seed", 1)))

    def fact(self) -> str | None:
        return None  # each tree workload's description names its tree

    def inputs(self) -> tuple[str, ...]:
        return (self.tarball,) if self.tarball else ()


def _tree_given(raw: Mapping[str, Any]) -> TreeChoice | None:
    if raw["tarball"] and raw["tree_profile"]:
        raise UsageError("give either --tree or --tarball, not both")
    if raw["tarball"]:
        return TreeChoice(tarball=str(Path(raw["tarball"]).expanduser().resolve()))
    return TreeChoice(profile=raw["tree_profile"], seed=1) if raw["tree_profile"] else None


TREE = KindOption(
    "tree",
    (
        Flag("--tree", "tree for tree workloads (default git)", param="tree_profile", choices=tuple(sorted(PROFILES))),
        Flag("--tarball", "your own tree (.tar, .tar.gz, .tar.xz, .tar.zst)", param="tarball", path=True),
    ),
    read=_tree_given,
    from_json=TreeChoice.from_json,
)


def chosen_tree(options: KindOptions) -> TreeChoice | None:
    """--tree's or --tarball's tree, if given."""
    value = options.get(TREE.name)
    return value if isinstance(value, TreeChoice) else None


class TreeKind:
    name = "tree"
    takes_runtime = False  # --runtime does not shorten a tree action
    options = (TREE,)

    def from_preset(self, preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
        return tree_workload(entry["action"], dict(data["tree"]), f"preset:{preset}")

    def describe(self, workload: Workload) -> Description:
        """The spec as key=value (action and tree); wall time is the headline. Space is
        known only once the tree exists (TreeRunner.space_needed)."""
        generic = generic_description(workload)
        return Description(
            summary=generic.summary,
            options=generic.options,
            headline=generic.headline or ("wall",),
            role=ROLES.get(str(workload.spec.get("action")), ""),
            method=METHOD,
        )

    def adjust(self, workload: Workload, adjustments: Adjustments) -> Workload:
        tree = chosen_tree(adjustments.options)
        if tree is None:
            return workload
        spec = {**workload.spec, "tree": tree.to_json()}
        return new_workload(KIND, workload.name, workload.title, workload.source, spec)

    def declared_size(self, workload: Workload) -> int | None:
        return None  # --size does not shrink a tree: --tree tiny or --tarball does

    def with_size(self, workload: Workload, size: int) -> Workload:
        return workload

    def renamed(self, workload: Workload, name: str, title: str) -> Workload:
        return new_workload(KIND, name, title, workload.source, workload.spec)

    def sweep(self, workload: Workload, axes: Sequence[SweepAxis]) -> list[Workload] | None:
        return None  # block size, depth, jobs and size are fio's options

    def fsync_variant(self, workload: Workload) -> Workload | None:
        return None  # a tree action syncs as its commands do

    def preset_alone(self, adjustments: Adjustments) -> str | None:
        return "tree" if chosen_tree(adjustments.options) is not None else None

    def make_runner(self, setup: RunnerSetup) -> TreeRunner:
        return TreeRunner()


class TreeRunner(RunnerDefaults):
    kind = "tree"

    def shrink_hint(self, workloads: Sequence[Workload]) -> str:
        """What shrinks these workloads' trees; the smallest profile is never suggested again."""
        trees = [TreeChoice.from_json(w.spec.get("tree")) for w in workloads if w.kind == self.kind]
        if trees and all(t is not None and t.profile == "tiny" for t in trees):
            return "the smallest tree (--tree tiny) does not fit either: give a bigger target or a smaller --tarball"
        return "use --tree tiny or a smaller --tarball (--size does not shrink a tree)"

    def __init__(self) -> None:
        self._archives: dict[str, TreeArchive] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="mountbench-trees-")
        self._sources: dict[str, list[Path]] = {}  # archive path -> the files of its source tree (rsync)
        self._touches = 0  # rsync-update: each sample's touched files get a new, later mtime

    @cached_property
    def cache_dir(self) -> Path:
        import platformdirs

        path = Path(platformdirs.user_cache_dir("mountbench")) / "trees"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def archive(self, tree: dict) -> TreeArchive:
        """The tar for a tree spec: generated (cached across runs) or the user's, decompressed once."""
        key = repr(sorted(tree.items()))
        if key not in self._archives:
            if "tarball" in tree:
                self._archives[key] = from_tarball(Path(tree["tarball"]), Path(self._tmp.name))
            else:
                self._archives[key] = generate(tree["profile"], int(tree.get("seed", 1)), self.cache_dir)
        return self._archives[key]

    def check(self, workloads: list[Workload]) -> None:
        for workload in workloads:
            action = ACTIONS[workload.spec["action"]]
            for tool in action.tools:
                if shutil.which(tool) is None:
                    raise ToolMissing(
                        f"{tool} is needed by tree workload {workload.name}; install it (apt-get install {tool})"
                    )
            self.archive(workload.spec["tree"])

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        archive = self.archive(workload.spec["tree"])
        return "tree", SPACE_FACTOR * (archive.bytes + archive.entries * 4096)

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        archive = self.archive(workload.spec["tree"])
        action = workload.spec["action"]
        command = self._command(action, ctx.scratch, archive)
        touched = f", then touch every {UPDATE_EVERY}th file of the source" if action == "rsync-update" else ""
        if action.startswith("rsync"):
            command_text = f"# source: {archive.origin}, extracted once outside the target{touched}\n"
        else:
            command_text = ""
        return Prepared(
            workload=workload,
            target=ctx.target.label,
            text=f"# {ACTIONS[action].title} on {archive.origin}: {archive.files} files, {archive.directories} dirs\n"
            + command_text
            + shlex.join(command)
            + "\n",
            caveats=(Caveat(TARBALL_STRIPPED, archive.not_kept),) if archive.not_kept else (),
            buffered=ACTIONS[action].cold,
            estimate_s=max(1.0, archive.bytes / 50e6 + archive.entries / 2000),
            working_set=archive.bytes,
            payload={"archive": archive},
            uncached_why="a warm workload",
        )

    # --- the timed commands -------------------------------------------------------

    def _command(self, action: str, scratch: Path, archive: TreeArchive) -> list[str]:
        root = archive.root
        canonical = scratch / "tree" / root
        commands = {
            "extract": [*EXTRACT, "-f", str(archive.path), "-C", str(scratch / "extract")],
            "walk-cold": ["find", str(canonical), "-printf", "%s %T@\\n"],
            "walk-warm": ["find", str(canonical), "-printf", "%s %T@\\n"],
            "read-cold": ["find", str(canonical), "-type", "f", "-exec", "cat", "{}", "+"],
            "copy": ["cp", "-a", str(canonical), str(scratch / "copy")],
            "git-commit": [
                "sh",
                "-c",
                f"{shlex.join(GIT)} init -q && {shlex.join(GIT)} add -A && {shlex.join(GIT)} commit -q -m tree",
                "git-commit",
            ],
            "git-status": [*GIT, "status", "--porcelain"],
            "delete": ["rm", "-rf", str(scratch / "delete")],
            "rsync": [*RSYNC, f"{self._source_root(archive)}/", str(scratch / "rsync")],
            # locally rsync copies whole files; --no-whole-file takes the delta path a remote
            # update takes: read the old file on the target, write a new one, rename it
            "rsync-update": [
                *RSYNC,
                "--no-whole-file",
                f"{self._source_root(archive)}/",
                str(scratch / "rsync-update"),
            ],
        }
        return commands[action]

    def _source_root(self, archive: TreeArchive) -> Path:
        """Where rsync reads the tree from: the runner's private directory, outside every target."""
        digest = hashlib.sha256(str(archive.path).encode()).hexdigest()[:12]
        return Path(self._tmp.name) / f"source-{digest}" / archive.root

    def _ensure_source(self, archive: TreeArchive) -> Path:
        """The extracted source tree of an archive, made once per run (untimed), with the
        list of its files in path order (rsync-update touches every UPDATE_EVERY-th)."""
        root = self._source_root(archive)
        if str(archive.path) not in self._sources:
            top = root.parent if archive.root != "." else root
            top.mkdir(parents=True, exist_ok=True)
            _extract(archive, top, Fence.of([top]))
            self._sources[str(archive.path)] = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
        return root

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """Untimed: fresh trees, warm caches. Runs before caches are dropped for cold actions."""
        archive: TreeArchive = prepared.payload["archive"]
        action = prepared.workload.spec["action"]
        try:
            self._setup(action, ctx.scratch, archive)
            # no writeback backlog from the setup or the previous sample may slow this one
            _sync_filesystem(ctx.scratch)
        except (OSError, WorkloadFailed) as exc:
            self._teardown(action, ctx.scratch)
            raise _as_failure(exc, ctx) from None

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        archive: TreeArchive = prepared.payload["archive"]
        action = prepared.workload.spec["action"]
        scratch = ctx.scratch
        command = self._command(action, scratch, archive)
        try:
            timed = run_timed(
                command, fence=Fence.of([scratch]), cwd=self._cwd(action, scratch, archive),
                timeout=max(600.0, 50 * prepared.estimate_s),
            )  # fmt: skip
        except OSError as exc:  # e.g. the working directory vanished with the mount
            raise _as_failure(exc, ctx) from None
        finally:
            self._teardown(action, scratch)
        if timed.timed_out:
            raise WorkloadFailed(f"{command[0]} did not finish within the time limit (is the target hung?)")
        if timed.returncode != 0:
            message = last_lines(timed.stderr, 2, empty="") or f"exit {timed.returncode}"
            raise WorkloadFailed(f"{command[0]} failed (exit {timed.returncode}): {message}")
        metrics = {"wall": timed.wall_s, "user": timed.user_s, "sys": timed.sys_s}
        rate = ACTIONS[action].rate
        files, entries, moved = self._work(action, archive)
        if rate and timed.wall_s > 0:
            metrics[rate] = (entries if rate == "entries_per_s" else files) / timed.wall_s
        if ACTIONS[action].moves_bytes and timed.wall_s > 0:
            metrics["bytes_per_s"] = moved / timed.wall_s
        return Outcome(metrics, raw=shlex.join(command))

    @staticmethod
    def _cwd(action: str, scratch: Path, archive: TreeArchive) -> Path | None:
        """Where the timed command runs: inside the repository for the git actions."""
        if action == "git-commit":
            return scratch / "git" / archive.root
        if action == "git-status":
            return scratch / "git-status" / archive.root
        return None

    def _setup(self, action: str, scratch: Path, archive: TreeArchive) -> None:
        """Untimed preparation with real commands."""
        fence = Fence.of([scratch])
        if action == "extract":
            _fresh_dir(scratch, "extract")
            _warm(archive.path)
            return
        if action in {"walk-cold", "walk-warm", "read-cold", "copy"}:
            self._ensure_tree(scratch, "tree", archive)
            if action == "walk-warm":
                _check_run(self._command("walk-warm", scratch, archive), fence)
            if action == "copy":
                _remove(scratch, "copy")
            return
        if action == "git-commit":
            _fresh_dir(scratch, "git")
            _extract(archive, scratch / "git", fence)
            return
        if action == "git-status":
            repo = scratch / "git-status" / archive.root
            if not (scratch / "git-status.ok").exists():
                _fresh_dir(scratch, "git-status")
                _extract(archive, scratch / "git-status", fence)
                _check_run(
                    [
                        "sh",
                        "-c",
                        f"{shlex.join(GIT)} init -q && {shlex.join(GIT)} add -A && {shlex.join(GIT)} commit -q -m tree",
                    ],
                    fence,
                    cwd=repo,
                )
                os.close(open_beneath(scratch, "git-status.ok", os.O_WRONLY | os.O_CREAT, 0o600))
            _check_run([*GIT, "status", "--porcelain"], fence, cwd=repo)  # warm
            return
        if action == "delete":
            _fresh_dir(scratch, "delete")
            _extract(archive, scratch / "delete", fence)
            return
        if action == "rsync":
            _remove(scratch, "rsync")
            _warm_tree(self._ensure_source(archive))
            return
        if action == "rsync-update":
            source = self._ensure_source(archive)
            # the target's copy made equal to the source (untimed; the first time a full copy)
            _check_run([*RSYNC, f"{source}/", str(scratch / "rsync-update")], fence)
            self._touch(archive)
            _warm_tree(source)
            return
        raise AssertionError(action)

    def _touched(self, archive: TreeArchive) -> list[Path]:
        files = self._sources[str(archive.path)]
        return files[::UPDATE_EVERY]

    def _touch(self, archive: TreeArchive) -> None:
        """Give every UPDATE_EVERY-th source file a new mtime, later than any before, so that
        rsync's quick check picks exactly those files (content unchanged: the delta path)."""
        self._touches += 1
        stamp = int(time.time()) + self._touches
        for path in self._touched(archive):
            os.utime(path, (stamp, stamp))

    def _work(self, action: str, archive: TreeArchive) -> tuple[int, int, int]:
        """(files, entries, bytes) one sample of the action handles."""
        if action == "rsync-update":
            touched = self._touched(archive)
            return len(touched), len(touched), sum(p.stat().st_size for p in touched)
        return archive.files, archive.entries, archive.bytes

    def _ensure_tree(self, scratch: Path, name: str, archive: TreeArchive) -> None:
        marker = scratch / f"{name}.ok"
        if marker.exists():
            return
        _fresh_dir(scratch, name)
        _extract(archive, scratch / name, Fence.of([scratch]))
        os.close(open_beneath(scratch, marker, os.O_WRONLY | os.O_CREAT, 0o600))

    def _teardown(self, action: str, scratch: Path) -> None:
        """Free the space a sample used; a failed sample leaves no partial tree."""
        made = {
            "extract": ["extract"],
            "copy": ["copy"],
            "git-commit": ["git"],
            "delete": ["delete"],
            "rsync": ["rsync"],
        }
        for name in made.get(action, []):
            _remove(scratch, name)

    def cached_files(self, prepared: Prepared, ctx: TargetContext) -> list[Path] | None:
        """None: the cold actions (walk-cold, read-cold) read inodes and directory entries too,
        which no per-file eviction reaches; the machine's caches are dropped for them (as root)."""
        return None

    def cleanup(self, ctx: TargetContext) -> None:
        """Trees live in the scratch directory, removed with it."""


def _sync_filesystem(path: Path) -> None:
    """syncfs(2) on the filesystem holding ``path`` (untimed), falling back to sync(2)."""
    import ctypes
    import os

    fd = os.open(path, os.O_RDONLY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "syncfs") or libc.syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _fresh_dir(scratch: Path, name: str) -> None:
    """An empty directory ``name`` inside the scratch directory; never recreates a vanished parent
    (that would write to whatever filesystem is left under the mount point)."""
    _remove(scratch, name)
    mkdir_beneath(scratch, name, 0o755)


def _as_failure(exc: BaseException, ctx: TargetContext) -> WorkloadFailed:
    if isinstance(exc, WorkloadFailed):
        return exc
    if not ctx.scratch.is_dir():
        return WorkloadFailed(f"the scratch directory {ctx.scratch} is gone (target unmounted?)")
    return WorkloadFailed(f"preparing the tree failed: {exc}")


def _remove(scratch: Path, name: str) -> None:
    """What a sample made, removed beneath the scratch directory by descriptor (host/scratch.py)."""
    with contextlib.suppress(OutsideScratch):  # a link where a tree was: never followed, left for the scratch removal
        rmtree_beneath(scratch, name)


# tar keeps no owner, no set-user-ID or set-group-ID bit of the archive's (GNU tar drops them with
# --no-same-permissions, and applies the umask as for any user): the files are this user's
EXTRACT = ["tar", "-x", "--no-same-owner", "--no-same-permissions"]


def _extract(archive: TreeArchive, dest: Path, fence: Fence) -> None:
    _check_run([*EXTRACT, "-f", str(archive.path), "-C", str(dest)], fence)


def _warm_tree(root: Path) -> None:
    """Read every file of a tree once, so that the timed command reads it from the page cache."""
    proc = contain.run(
        ["find", str(root), "-type", "f", "-exec", "cat", "{}", "+"], contain.NOTHING, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    if proc.returncode != 0:
        raise WorkloadFailed(f"preparing: reading the source tree failed: {last_lines(proc.stderr.decode(), 2)}")


def _warm(path: Path) -> None:
    """Read the source archive once so extraction reads it from the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


def _check_run(argv: list[str], fence: Fence, cwd: Path | None = None) -> None:
    proc = contain.run(argv, fence, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise WorkloadFailed(f"preparing: {argv[0]} failed: {last_lines(proc.stderr, 2, empty='') or proc.returncode}")


KIND = TreeKind()
