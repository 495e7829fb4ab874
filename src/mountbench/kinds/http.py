"""The http kind: what a web server feels when its files live on the target (study S1
served 10 static files of up to 16 MiB with nginx and loaded it for 10 s).

Per sample, untimed: the file set is laid out once in the target's scratch directory,
a fresh nginx (runners/nginx.py) starts on 127.0.0.1 with that directory as its root
and serves one file as a check; then caches are dropped (as root; else a caveat).
Timed: wrk (runners/wrk.py) loads it with fixed threads and connections for a fixed
time, while nginx's own CPU and peak memory are measured (watch.py, ``nginx.*``).
nginx is stopped after every sample, and by cleanup whatever happened.

``sendfile`` on and off are separate workloads: with it the kernel moves file pages
to the socket; without it nginx reads every byte into its buffers first.
"""

from __future__ import annotations

import hashlib
import random
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mountbench import model
from mountbench.errors import UsageError
from mountbench.host.contain import Fence
from mountbench.host.process import run_child
from mountbench.host.scratch import unlink_beneath
from mountbench.host.watch import Window, moved_bytes
from mountbench.kinds.base import Adjustments, RunnerSetup, new_workload
from mountbench.kinds.engines.nginx import (
    Nginx,
    NginxFailed,
    NginxServer,
    check_serves,
    find_nginx,
    render_config,
    start_nginx,
    write_private,
)
from mountbench.kinds.engines.wrk import find_wrk, parse_wrk, render_script, whole_seconds, wrk_argv
from mountbench.kinds.runner import RunnerDefaults
from mountbench.model import (
    Caveat,
    Description,
    Outcome,
    Prepared,
    RunSettings,
    SweepAxis,
    TargetContext,
    Workload,
    WorkloadFailed,
)
from mountbench.units import format_bytes, parse_size

KIB = 1024
# S1's file set: ten files, 32 KiB doubling up to 16 MiB (32 MiB in all)
DEFAULT_FILES = tuple(32 * KIB * 2**k for k in range(10))
DEFAULTS: dict[str, Any] = {"duration": 10, "connections": 16, "threads": 2, "workers": 1, "sendfile": True}
HEADLINE = ("http.requests_per_s", "http.bw", "http.lat_p99", "nginx.cpu_s", "nginx.uss_peak")
_RESERVED = {"kind", "name", "title"}
_KNOWN = {"files", "sendfile", "duration", "connections", "threads", "workers", "headline"}
START_COST_S = 2.0  # nginx start, the check request, stopping it: around each timed part


def http_workload(name: str, title: str, source: str, settings: Mapping[str, Any]) -> Workload:
    """A checked http workload from preset settings (sizes may be written "32k")."""
    unknown = set(settings) - _KNOWN
    if unknown:
        raise UsageError(f"http workload {name}: unknown setting(s) {', '.join(sorted(unknown))}; known: "
                         f"{', '.join(sorted(_KNOWN))}")  # fmt: skip
    spec = {**DEFAULTS, "files": list(DEFAULT_FILES), **settings}
    try:
        spec["files"] = [parse_size(str(size)) for size in spec["files"]]
    except UsageError as exc:
        raise UsageError(f"http workload {name}: {exc}") from None
    for key in ("duration", "connections", "threads", "workers"):
        if not isinstance(spec[key], int | float) or spec[key] < 1:
            raise UsageError(f"http workload {name}: {key} must be a number of at least 1, not {spec[key]!r}")
    if spec["connections"] < spec["threads"]:
        raise UsageError(f"http workload {name}: wrk needs at least one connection per thread")
    if not spec["files"] or min(spec["files"]) <= 0:
        raise UsageError(f'http workload {name}: files must list positive sizes, e.g. files = ["32k", "16m"]')
    spec["sendfile"] = bool(spec["sendfile"])
    spec["duration"] = whole_seconds(float(spec["duration"]))
    spec.setdefault("headline", list(HEADLINE))
    return new_workload(KIND, name, title, source, spec)


def file_names(sizes: list[int]) -> list[str]:
    """'01-32k.bin', '02-64k.bin', ...: served from the root directory."""
    return [f"{i:02d}-{_size_label(size)}.bin" for i, size in enumerate(sizes, 1)]


def _size_label(size: int) -> str:
    for power, suffix in ((2, "m"), (1, "k")):
        if size % 1024**power == 0:
            return f"{size // 1024**power}{suffix}"
    return str(size)


def _file_set_key(sizes: list[int]) -> str:
    return hashlib.sha256(repr(sizes).encode()).hexdigest()[:8]


METHOD = "HTTP workloads: a fresh nginx serves files from the target and wrk loads it for a fixed time."


class HttpKind:
    name = "http"
    takes_runtime = True  # --runtime sets wrk's duration (whole seconds)
    options = ()

    def from_preset(self, preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
        settings = {**data.get("http", {}), **{k: v for k, v in entry.items() if k not in _RESERVED}}
        name = entry["name"]
        return http_workload(name, entry.get("title", name), f"preset:{preset}", settings)

    def describe(self, workload: Workload) -> Description:
        spec = workload.spec
        sizes = [int(s) for s in spec["files"]]
        files = (f"{len(sizes)} files {format_bytes(min(sizes))}–{format_bytes(max(sizes))} "
                 f"({format_bytes(sum(sizes))})")  # fmt: skip
        summary = (
            f"nginx sendfile={'on' if spec['sendfile'] else 'off'} ({spec['workers']} worker), {files}; "
            f"wrk {spec['threads']} threads, {spec['connections']} connections, {spec['duration']} s"
        )
        options = tuple(f"{key}={spec[key]}" for key in ("sendfile", "duration", "connections", "threads", "workers"))
        return Description(
            summary=summary,
            options=(*options, "files=" + ",".join(map(str, sizes))),
            headline=tuple(spec.get("headline") or HEADLINE),
            directions=("read",),
            duration_bound_s=float(spec["duration"]) + START_COST_S,
            space_group=f"http:{_file_set_key(sizes)}",
            space_bytes=sum(sizes),
            method=METHOD,
        )

    def adjust(self, workload: Workload, adjustments: Adjustments) -> Workload:
        if adjustments.runtime is None:
            return workload
        spec = {**workload.spec, "duration": whole_seconds(adjustments.runtime)}
        return new_workload(KIND, workload.name, workload.title, workload.source, spec)

    def declared_size(self, workload: Workload) -> int | None:
        """The file set's total: --size scales it with the rest of its suite (S1: 32 MiB beside 1 GiB)."""
        return sum(int(s) for s in workload.spec["files"])

    def with_size(self, workload: Workload, size: int) -> Workload:
        """Every file in proportion (4 KiB multiples, at least 4 KiB): the set keeps its shape."""
        factor = size / self.declared_size(workload)
        files = [max(4 * KIB, int(int(s) * factor) // (4 * KIB) * 4 * KIB) for s in workload.spec["files"]]
        spec = {**workload.spec, "files": files}
        return new_workload(KIND, workload.name, workload.title, workload.source, spec)

    def renamed(self, workload: Workload, name: str, title: str) -> Workload:
        return new_workload(KIND, name, title, workload.source, workload.spec)

    def sweep(self, workload: Workload, axes: Sequence[SweepAxis]) -> list[Workload] | None:
        return None  # the served file set's sizes are http's own options

    def fsync_variant(self, workload: Workload) -> Workload | None:
        return None  # wrk only reads

    def preset_alone(self, adjustments: Adjustments) -> str | None:
        return None

    def make_runner(self, setup: RunnerSetup) -> HttpRunner:
        return HttpRunner()


KIND = HttpKind()


class HttpRunner(RunnerDefaults):
    kind = "http"

    def __init__(self) -> None:
        self.nginx: Nginx | None = None
        self.wrk: str | None = None
        self._servers: dict[str, NginxServer] = {}  # target label -> the nginx of its sample in flight

    def check(self, workloads: list[Workload]) -> None:
        if not workloads:
            return
        self.nginx = find_nginx()
        self.wrk = find_wrk()

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        return workload.description.space_group, workload.description.space_bytes

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        spec = workload.spec
        sizes = [int(s) for s in spec["files"]]
        root = _root(ctx, sizes)
        workdir = _workdir(settings, ctx, workload)
        config = render_config(root, 0, workdir, sendfile=spec["sendfile"], workers=int(spec["workers"]),
                               secret="SECRET")  # fmt: skip
        wrk = wrk_argv(
            "wrk", "http://127.0.0.1:PORT/", str(workdir / "wrk.lua"), threads=int(spec["threads"]),
            connections=int(spec["connections"]), duration_s=float(spec["duration"]),
        )  # fmt: skip
        text = (
            f"# {len(sizes)} files ({format_bytes(sum(sizes))}) in {root}\n"
            f"# nginx.conf (PORT: a free port on 127.0.0.1, chosen per sample; SECRET: a random path prefix, new "
            f"for each nginx, that only this run knows)\n{config.replace(':0;', ':PORT;')}"
            f"# load, timed\n{shlex.join(wrk)}\n"
        )
        return Prepared(
            workload=workload,
            target=ctx.target.label,
            text=text,
            caveats=(),
            buffered=True,  # files are read through the page cache: dropped before each sample (root)
            estimate_s=float(spec["duration"]) + START_COST_S,
            working_set=sum(sizes),
            payload={"root": root, "workdir": workdir, "sizes": sizes},
        )

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """Untimed: the file set (once per target), a fresh nginx, one request as a check."""
        spec = prepared.workload.spec
        root: Path = prepared.payload["root"]
        sizes: list[int] = prepared.payload["sizes"]
        self._stop(ctx.target.label)
        try:
            _lay_out(root, sizes)
        except OSError as exc:
            if not ctx.scratch.is_dir():
                raise WorkloadFailed(f"the scratch directory {ctx.scratch} is gone (target unmounted?)") from None
            raise WorkloadFailed(f"laying out the http files failed: {exc}") from None
        assert self.nginx is not None, "check() finds nginx first"
        try:
            server = start_nginx(
                self.nginx, root, prepared.payload["workdir"], sendfile=spec["sendfile"], workers=int(spec["workers"])
            )
        except NginxFailed as exc:
            raise WorkloadFailed(str(exc)) from None
        self._servers[ctx.target.label] = server
        try:
            check_serves(server, file_names(sizes)[0], sizes[0])
        except NginxFailed as exc:
            self._stop(ctx.target.label)
            raise WorkloadFailed(str(exc)) from None
        except BaseException:
            self._stop(ctx.target.label)
            raise

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        spec = prepared.workload.spec
        server = self._servers.get(ctx.target.label)
        if server is None:
            raise WorkloadFailed("nginx is not running (setup did not start it)")
        workdir: Path = prepared.payload["workdir"]
        script = workdir / "wrk.lua"
        write_private(script, render_script([server.path(name) for name in file_names(prepared.payload["sizes"])]))
        assert self.wrk is not None, "check() finds wrk first"
        argv = wrk_argv(
            self.wrk, server.url, str(script), threads=int(spec["threads"]), connections=int(spec["connections"]),
            duration_s=float(spec["duration"]),
        )  # fmt: skip
        try:
            window = Window(server.finder).start()
            try:
                done = run_child(argv, fence=Fence.of([workdir]), timeout=float(spec["duration"]) + 120)
            finally:
                cost = window.stop()
            errors = server.errors()
        finally:
            self._stop(ctx.target.label)
        raw = done.stdout + (f"\n[stderr]\n{done.stderr}" if done.stderr.strip() else "")
        if done.timed_out:
            raise WorkloadFailed("wrk did not finish in time (is the target hung?)", raw)
        try:
            result = parse_wrk(done.stdout)
        except ValueError as exc:
            message = done.stderr.strip().splitlines()[-1:] or [str(exc)]
            raise WorkloadFailed(f"wrk failed (exit {done.returncode}): {message[0][:300]}", raw) from None
        if result.answered == 0:
            why = errors or result.error_text() or "no request was answered"
            raise WorkloadFailed(f"no request was served ({result.error_text() or 'none answered'}): {why}", raw)
        metrics = result.metrics()
        if cost.processes:
            metrics.update(cost.metrics("nginx", moved_bytes(metrics)))
        caveats: tuple[Caveat, ...] = ()
        if result.failed:
            caveats = (
                Caveat(
                    model.HTTP_ERRORS,
                    f"{result.failed} of {result.requests} requests failed ({result.error_text()})"
                    + (f"; nginx: {errors}" if errors else ""),
                ),
            )
        return Outcome(metrics, raw, caveats)

    def _stop(self, label: str) -> None:
        server = self._servers.pop(label, None)
        if server is not None:
            server.stop()

    def cached_files(self, prepared: Prepared, ctx: TargetContext) -> list[Path] | None:
        """The file set nginx serves."""
        root: Path = prepared.payload["root"]
        return [root / name for name in file_names(prepared.payload["sizes"])]

    def cleanup(self, ctx: TargetContext) -> None:
        """nginx is stopped whatever happened (Ctrl-C between setup and run included);
        the files live in the scratch directory, removed with it."""
        self._stop(ctx.target.label)


def _root(ctx: TargetContext, sizes: list[int]) -> Path:
    return ctx.scratch / f"www-{_file_set_key(sizes)}"


def _workdir(settings: RunSettings, ctx: TargetContext, workload: Workload) -> Path:
    """nginx's private files: in mountbench's work directory, never on a target."""
    slug = hashlib.sha256(f"{ctx.target.label}\0{workload.name}".encode()).hexdigest()[:10]
    return settings.workdir / f"nginx-{slug}"


def _lay_out(root: Path, sizes: list[int]) -> None:
    """The files, written once per target (a marker says they are complete)."""
    marker = root.with_name(root.name + ".ok")
    if marker.exists():
        return
    if root.exists():  # a half-written set of an earlier sample: its files removed beneath the scratch directory
        for stale in root.iterdir():
            unlink_beneath(root.parent, stale)
    else:
        root.mkdir()
    rng = random.Random(16)  # incompressible, and the same on every target
    for name, size in zip(file_names(sizes), sizes, strict=True):
        with open(root / name, "wb") as f:
            left = size
            while left:
                chunk = min(left, 1 << 20)
                f.write(rng.randbytes(chunk))
                left -= chunk
    marker.touch()
