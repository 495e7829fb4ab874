"""The startup kind: how long an application takes to start when its code lives on the
target (study S1 timed a Spring Boot application's start-up from the mount).

A real, large module tree is copied onto the target once (untimed, with tar): by
default this Python's own standard library (about 1,200 files, 40 MB, without its
tests, GUI modules and site-packages), or the user's tree (``--app-tree``). The timed
part is a whole process, timed like the tree workloads (wall clock, user and sys):

- by default ``python3 -I -S -c "import sys; sys.path[:] = [<copy>]; import argparse,
  asyncio, ..."``: the interpreter imports a fixed list of 48 modules (about 230 with
  what they import) from the copy and nowhere else, which the first, untimed run
  checks (it also writes any missing bytecode);
- with ``--app-tree`` alone, the same interpreter imports every top-level module of
  that tree from the copy;
- with ``--startup-cmd``, the user's command, run inside the copy (``{tree}`` in it
  is replaced by the copy's path).

``cold`` drops the page cache first (as root; else a caveat); ``warm`` runs the
command once, untimed, right before the timed run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mountbench.errors import ToolMissing, UsageError
from mountbench.host import contain
from mountbench.host.contain import Fence
from mountbench.host.process import last_lines, run_timed
from mountbench.host.scratch import mkdir_beneath, rmtree_beneath
from mountbench.kinds.base import Adjustments, KindOption, RunnerSetup, new_workload
from mountbench.kinds.runner import RunnerDefaults
from mountbench.model import (
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
from mountbench.units import format_bytes

MODES = ("cold", "warm")
# What an application's start imports, from the standard library alone: 48 modules,
# about 230 with their own imports.
MODULES = (
    "argparse", "asyncio", "base64", "calendar", "csv", "dataclasses", "datetime", "decimal", "difflib",
    "email.message", "email.parser", "fractions", "gettext", "glob", "gzip", "hashlib", "http.client",
    "http.cookies", "http.server", "inspect", "ipaddress", "json", "logging", "logging.handlers", "pathlib",
    "pickle", "pprint", "random", "shutil", "socket", "sqlite3", "ssl", "statistics", "string", "subprocess",
    "tarfile", "tempfile", "textwrap", "threading", "tomllib", "typing", "unittest", "urllib.request", "uuid",
    "xml.dom.minidom", "xml.etree.ElementTree", "zipfile", "zoneinfo",
)  # fmt: skip
# Left out of the copied standard library: tests, GUI, bundled wheels, build files,
# third-party packages, and bytecode for -O/-OO (never read by python3 -I -S).
STDLIB_EXCLUDES = (
    "test", "tests", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages",
    "dist-packages", "config-*", "__phello__", "*.opt-1.pyc", "*.opt-2.pyc",
)  # fmt: skip
MARKER = "mountbench-startup"
TIMEOUT_S = 600.0


@dataclass(frozen=True)
class AppChoice:
    """What startup workloads copy onto each target and time (--app-tree, --startup-cmd);
    None fields keep the kind's default (this Python's standard library, importing a fixed list)."""

    tree: str | None = None  # absolute path of the tree to copy
    command: str | None = None  # run in the copy; {tree} is replaced by its path

    def to_json(self) -> dict[str, Any]:
        return {"tree": self.tree, "command": self.command}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> AppChoice | None:
        if not data or not (data.get("tree") or data.get("command")):
            return None
        return cls(tree=data.get("tree") or None, command=data.get("command") or None)

    def fact(self) -> str | None:
        return None  # each startup workload's description names its tree and command

    def inputs(self) -> tuple[str, ...]:
        return (self.tree,) if self.tree else ()


def _app_given(raw: Mapping[str, Any]) -> AppChoice | None:
    given_tree: Path | None = raw["app_tree"]
    command: str | None = raw["startup_cmd"]
    if given_tree is None and command is None:
        return None
    tree = Path(given_tree).expanduser().resolve() if given_tree is not None else None
    if tree is not None and not tree.is_dir():
        raise UsageError(f"--app-tree {tree}: not a directory; give the directory to copy onto each target")
    if command is not None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f"--startup-cmd {command!r}: {exc}; quote it as one shell word") from None
        if not argv:
            raise UsageError('--startup-cmd is empty; give the command to time, e.g. --startup-cmd "java -jar app.jar"')
    return AppChoice(tree=str(tree) if tree else None, command=command)


APP = KindOption(
    "app",
    (
        Flag("--app-tree", "startup workloads: copy this tree onto each target (default: this Python's standard "
             "library)", "DIR", "app_tree", path=True),
        Flag("--startup-cmd", "startup workloads: time this command, run inside the copied tree ({tree} is its "
             'path), e.g. --startup-cmd "java -jar app.jar"', "CMD", "startup_cmd"),
    ),
    read=_app_given,
    from_json=AppChoice.from_json,
    unused="--app-tree and --startup-cmd apply to startup workloads, and none is selected; add --preset startup "
    "(or s1)",
)  # fmt: skip


def chosen_app(options: KindOptions) -> AppChoice | None:
    """--app-tree's and --startup-cmd's choice, if given."""
    value = options.get(APP.name)
    return value if isinstance(value, AppChoice) else None


def startup_workload(mode: str, name: str, title: str, source: str, app: AppChoice | None = None) -> Workload:
    if mode not in MODES:
        raise UsageError(f"startup workload {name}: mode must be cold or warm, not {mode!r}")
    tree, command = (app.tree, app.command) if app else (None, None)
    # the fixed list is for the standard library; a user's tree imports its own top level
    modules = list(MODULES) if tree is None and command is None else []
    spec = {"mode": mode, "tree": tree, "command": command, "modules": modules, "headline": ["wall"]}
    return new_workload(KIND, name, title, source, spec)


def _title(spec: Mapping[str, Any]) -> str:
    mode = spec["mode"]
    if spec.get("command"):
        return f"start-up of {spec['command']}, {mode}"
    if spec.get("tree"):
        return f"Python start-up importing {Path(spec['tree']).name}, {mode}"
    return f"Python start-up importing {len(spec['modules'])} stdlib modules, {mode}"


METHOD = "Start-up workloads time one process started from a copy on the target, as a whole process."


class StartupKind:
    name = "startup"
    takes_runtime = False  # a start-up runs as long as it takes
    options = (APP,)

    def from_preset(self, preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
        mode = str(entry.get("mode", ""))
        workload = startup_workload(mode, entry["name"], "", f"preset:{preset}")
        title = entry.get("title") or _title(workload.spec)
        return new_workload(KIND, workload.name, title, workload.source, workload.spec)

    def describe(self, workload: Workload) -> Description:
        spec = workload.spec
        cold = "page cache dropped first" if spec["mode"] == "cold" else "after one untimed run"
        if spec.get("command"):
            what = f"run {spec['command']!r} inside the copy"
        elif spec.get("tree"):
            what = "python3 -I -S imports every top-level module of the copy"
        else:
            what = f"python3 -I -S imports {len(spec['modules'])} modules from the copy"
        tree = spec.get("tree") or "this Python's standard library"
        options = [f"mode={spec['mode']}", f"tree={tree}"]
        if spec.get("command"):
            options.append(f"command={spec['command']}")
        if spec.get("modules"):
            options.append("modules=" + ",".join(spec["modules"]))
        return Description(
            summary=f"{tree} copied to the target; {what} ({spec['mode']}: {cold})",
            options=tuple(options),
            headline=tuple(spec.get("headline") or ("wall",)),
            space_group=f"startup:{spec.get('tree') or 'stdlib'}",
            method=METHOD,
        )

    def adjust(self, workload: Workload, adjustments: Adjustments) -> Workload:
        app = chosen_app(adjustments.options)
        if app is None:
            return workload
        adjusted = startup_workload(workload.spec["mode"], workload.name, "", workload.source, app)
        return new_workload(KIND, workload.name, _title(adjusted.spec), workload.source, adjusted.spec)

    def declared_size(self, workload: Workload) -> int | None:
        return None  # the tree is what it is

    def with_size(self, workload: Workload, size: int) -> Workload:
        return workload

    def renamed(self, workload: Workload, name: str, title: str) -> Workload:
        return new_workload(KIND, name, title, workload.source, workload.spec)

    def sweep(self, workload: Workload, axes: Sequence[SweepAxis]) -> list[Workload] | None:
        return None  # a start-up has no fio options to sweep

    def fsync_variant(self, workload: Workload) -> Workload | None:
        return None  # a start-up only reads

    def preset_alone(self, adjustments: Adjustments) -> str | None:
        return "startup" if chosen_app(adjustments.options) is not None else None

    def make_runner(self, setup: RunnerSetup) -> StartupRunner:
        return StartupRunner()


KIND = StartupKind()


# --- the interpreter and the trees --------------------------------------------------------------


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: str
    stdlib: str
    dynload: str | None  # where its C extension modules are (None: built in)


@cache
def interpreter() -> Interpreter:
    """This Python (the one running mountbench), and where its standard library is."""
    path = os.path.realpath(sys.executable)
    code = (
        "import json, sys, sysconfig; print(json.dumps({'version': sys.version.split()[0], "
        "'stdlib': sysconfig.get_path('stdlib'), "
        "'dynload': next((p for p in sys.path if p.endswith('lib-dynload')), None)}))"
    )
    out = subprocess.run([path, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise ToolMissing(f"{path} -I -S does not start ({out.stderr.strip()[-200:]})")
    facts = json.loads(out.stdout)
    return Interpreter(path, facts["version"], facts["stdlib"], facts["dynload"])


@dataclass(frozen=True)
class TreeSource:
    """What is copied: directories (source, name inside the copy) and the tar excludes."""

    parts: tuple[tuple[str, str], ...]
    excludes: tuple[str, ...]
    files: int
    bytes: int

    @property
    def key(self) -> str:
        return hashlib.sha256(repr((self.parts, self.excludes)).encode()).hexdigest()[:8]


def _measure(parts: tuple[tuple[str, str], ...], excludes: tuple[str, ...]) -> TreeSource:
    """Count what tar will copy (for the space check and the dry run)."""
    import fnmatch

    files = size = 0
    for source, _ in parts:
        for dirpath, dirnames, filenames in os.walk(source):
            dirnames[:] = [d for d in dirnames if not any(fnmatch.fnmatch(d, p) for p in excludes)]
            for name in filenames:
                if any(fnmatch.fnmatch(name, p) for p in excludes):
                    continue
                try:
                    size += os.lstat(os.path.join(dirpath, name)).st_size
                except OSError:
                    continue
                files += 1
    return TreeSource(parts, excludes, files, size)


@cache
def tree_source(tree: str | None) -> TreeSource:
    if tree is not None:
        if not Path(tree).is_dir():
            raise UsageError(f"--app-tree {tree}: not a directory (any more); give the directory to copy")
        return _measure(((tree, "."),), ())
    python = interpreter()
    parts = [(python.stdlib, ".")]
    if python.dynload and not Path(python.dynload).is_relative_to(python.stdlib):
        parts.append((python.dynload, "lib-dynload"))
    return _measure(tuple(parts), STDLIB_EXCLUDES)


def top_level_modules(tree: str) -> list[str]:
    """Importable names at the top of a tree: packages (with __init__.py), .py files and
    extension modules, sorted."""
    names = set()
    for entry in os.scandir(tree):
        stem = entry.name.split(".")[0]
        if not stem.isidentifier():
            continue
        if entry.is_dir() and os.path.exists(os.path.join(entry.path, "__init__.py")):
            names.add(entry.name)
        elif entry.is_file() and (
            entry.name.endswith(".py") or ".cpython-" in entry.name or entry.name.endswith(".so")
        ):
            names.add(stem)
    return sorted(names)


def import_code(copy: Path, modules: list[str], *, strict: bool, extra_path: list[str]) -> str:
    """The -c program: import ``modules`` with sys.path pointing into the copy, then print how
    many modules came from the copy and which, if any, from elsewhere. ``strict``: every
    module imported must come from the copy (the standard library); otherwise only the
    listed ones (an application tree uses the interpreter's own standard library)."""
    root = json.dumps(str(copy) + os.sep)
    path = json.dumps([str(copy), str(copy / "lib-dynload"), *extra_path])
    return "; ".join(
        [
            "import sys",
            f"sys.path[:] = {path}",
            "before = set(sys.modules)",
            "import " + ", ".join(modules),
            "new = set(sys.modules) - before" if strict else f"new = {json.dumps(modules)}",
            'origins = [getattr(getattr(sys.modules.get(m), "__spec__", None), "origin", None) for m in new]',
            'files = [o for o in origins if o and o not in ("built-in", "frozen")]',
            f"outside = [o for o in files if not o.startswith({root})]",
            f'print("{MARKER}", len(files) - len(outside), len(outside), *outside[:3])',
        ]
    )


# --- running -------------------------------------------------------------------------------------


class StartupRunner(RunnerDefaults):
    kind = "startup"

    def check(self, workloads: list[Workload]) -> None:
        for workload in workloads:
            spec = workload.spec
            for tool in ("tar",):
                if shutil.which(tool) is None:
                    raise ToolMissing(f"{tool} is needed by startup workload {workload.name}; apt-get install {tool}")
            source = tree_source(spec.get("tree"))
            if source.files == 0:
                raise UsageError(f"startup workload {workload.name}: the tree {source.parts[0][0]} has no files")
            command = spec.get("command")
            if command:
                argv0 = shlex.split(command)[0]
                if "/" not in argv0 and "{tree}" not in argv0 and shutil.which(argv0) is None:
                    raise UsageError(f"--startup-cmd: {argv0} is not on PATH; give its full path or install it")
            elif spec.get("tree") and not top_level_modules(spec["tree"]):
                raise UsageError(
                    f"--app-tree {spec['tree']} has no Python modules at its top level; "
                    'say what to time with --startup-cmd, e.g. --startup-cmd "java -jar app.jar"'
                )

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        source = tree_source(workload.spec.get("tree"))
        # bytecode the first run may add, and a block per file
        return workload.description.space_group, int(source.bytes * 1.2) + source.files * 4096

    def command(self, spec: Mapping[str, Any], copy: Path) -> list[str]:
        if spec.get("command"):
            return [part.replace("{tree}", str(copy)) for part in shlex.split(spec["command"])]
        python = interpreter()
        if spec.get("tree"):
            modules = top_level_modules(spec["tree"])
            paths = [p for p in (python.stdlib, python.dynload) if p]
            code = import_code(copy, modules, strict=False, extra_path=paths)
        else:
            code = import_code(copy, list(spec["modules"]), strict=True, extra_path=[])
        return [python.path, "-I", "-S", "-c", code]

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        spec = workload.spec
        source = tree_source(spec.get("tree"))
        copy = ctx.scratch / f"app-{source.key}"
        parts = ", ".join(src for src, _ in source.parts)
        text = (
            f"# copy {parts} ({source.files} files, {format_bytes(source.bytes)}) to {copy} with tar (untimed)\n"
            f"# timed, in {copy}:\n{shlex.join(self.command(spec, copy))}\n"
        )
        return Prepared(
            workload=workload,
            target=ctx.target.label,
            text=text,
            caveats=(),
            buffered=spec["mode"] == "cold",
            estimate_s=max(1.0, source.bytes / 200e6),
            working_set=source.bytes,
            payload={"copy": copy, "source": source},
            uncached_why="a warm workload",
        )

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """Untimed: the copy (once per target, then one checked run), and for warm one more run."""
        spec = prepared.workload.spec
        copy: Path = prepared.payload["copy"]
        marker = copy.with_name(copy.name + ".ok")
        try:
            fence = Fence.of([ctx.scratch])
            if not marker.exists():
                _copy_tree(prepared.payload["source"], ctx.scratch, copy)
                self._checked_run(spec, copy, fence)
                os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
            elif spec["mode"] == "warm":
                self._checked_run(spec, copy, fence)
        except OSError as exc:
            if not ctx.scratch.is_dir():
                raise WorkloadFailed(f"the scratch directory {ctx.scratch} is gone (target unmounted?)") from None
            raise WorkloadFailed(f"copying the tree failed: {exc}") from None

    def _checked_run(self, spec: Mapping[str, Any], copy: Path, fence: Fence) -> None:
        """Run the command once: it must succeed and, for Python imports, load its modules
        from the copy (this also writes bytecode that is missing or stale in the copy)."""
        argv = self.command(spec, copy)
        try:
            out = contain.run(
                argv, fence, cwd=copy, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise WorkloadFailed(f"the start-up command did not finish within {TIMEOUT_S:.0f} s") from None
        if out.returncode != 0:
            raise WorkloadFailed(f"the start-up command failed (exit {out.returncode}): {last_lines(out.stderr)}")
        if spec.get("command"):
            return
        counts = [line.split() for line in out.stdout.splitlines() if line.startswith(MARKER)]
        if not counts:
            raise WorkloadFailed("the import check printed nothing")
        inside, outside = int(counts[-1][1]), int(counts[-1][2])
        if outside or not inside:
            raise WorkloadFailed(
                f"{outside} module(s) were imported from outside the copy on the target "
                f"({' '.join(counts[-1][3:])}): the timing would not measure the target"
            )

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        copy: Path = prepared.payload["copy"]
        argv = self.command(prepared.workload.spec, copy)
        try:
            timed = run_timed(argv, fence=Fence.of([ctx.scratch]), cwd=copy, timeout=TIMEOUT_S)
        except OSError as exc:
            if not copy.is_dir():
                raise WorkloadFailed(f"the copied tree {copy} is gone (target unmounted?)") from None
            raise WorkloadFailed(f"the start-up command could not run: {exc}") from None
        if timed.timed_out:
            raise WorkloadFailed(f"the start-up command did not finish within {TIMEOUT_S:.0f} s (is the target hung?)")
        if timed.returncode != 0:
            raise WorkloadFailed(f"the start-up command failed (exit {timed.returncode}): {last_lines(timed.stderr)}")
        return Outcome({"wall": timed.wall_s, "user": timed.user_s, "sys": timed.sys_s}, raw=shlex.join(argv))

    def cleanup(self, ctx: TargetContext) -> None:
        """The copy lives in the scratch directory, removed with it."""


def _copy_tree(source: TreeSource, scratch: Path, copy: Path) -> None:
    """tar -c | tar -x: modes and modification times kept (so bytecode stays valid),
    ownership not (the files belong to whoever runs mountbench); the copy made and removed
    beneath the scratch directory, the writing tar fenced to it (host/contain.py)."""
    rmtree_beneath(scratch, copy)
    mkdir_beneath(scratch, copy, 0o755)
    fence = Fence.of([scratch])
    for src, name in source.parts:
        dest = copy / name
        dest.mkdir(exist_ok=True)
        excludes = [f"--exclude={pattern}" for pattern in source.excludes]
        pack = contain.popen(
            ["tar", "-c", "-f", "-", *excludes, "-C", src, "."], contain.NOTHING, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        unpack = contain.run(
            ["tar", "-x", "-f", "-", "--no-same-owner", "--no-same-permissions", "-C", str(dest)],
            fence,
            stdin=pack.stdout,
            capture_output=True,
            text=True,
            check=False,
        )
        assert pack.stdout is not None
        pack.stdout.close()
        _, pack_err = pack.communicate()
        if unpack.returncode != 0:
            raise WorkloadFailed(f"copying {src} failed: tar: {last_lines(unpack.stderr)}")
        if pack.returncode not in (0, 1):  # 1: a file changed while it was read
            raise WorkloadFailed(f"reading {src} failed: tar: {last_lines(pack_err.decode(errors='replace'))}")
