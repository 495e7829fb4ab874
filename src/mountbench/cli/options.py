"""The options `run` and `lab` share: one set of click options, read into one
RunOptions record. The lab hands that record to the guest's `mountbench run` as
JSON (--options-json), so the guest runs exactly what the host was asked."""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from mountbench.clients.spec import parse_clients, parse_counts
from mountbench.errors import UsageError
from mountbench.fio.sweeps import parse_sweep
from mountbench.host.watch import WatchSpec
from mountbench.kinds.fiofiles import FILE_STATES
from mountbench.kinds.trees import PROFILES
from mountbench.model import DROP_MODES, AppChoice, RunOptions, TreeChoice
from mountbench.units import parse_size

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = "results database (default: $MOUNTBENCH_DB or the user data dir)"


def _finite_seconds(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a duration; give seconds, e.g. 2.5")
    return value


# (decls, kwargs) in the order --help lists them
_RUN_OPTIONS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("--preset", "presets"), {"multiple": True, "metavar": "NAME", "help": "named suite (repeatable; default quick)"}),
    (
        ("--job", "jobs"),
        {
            "multiple": True,
            "type": click.Path(path_type=Path),
            "metavar": "FILE",
            "help": "fio job file, one workload per section (repeatable)",
        },
    ),
    (
        ("--only", "only"),
        {
            "multiple": True,
            "metavar": "PATTERN",
            "help": "keep only workloads whose name matches (glob, repeatable), e.g. --only 'rnd*' --only extract",
        },
    ),
    (
        ("--sweep", "sweeps"),
        {
            "multiple": True,
            "metavar": "OPTION=VALUES",
            "help": "run every fio workload at each value: bs=4k,64k,1M or bs=1k..16M (powers of two); also iodepth, "
            "numjobs, size; several make a grid",
        },
    ),
    (("--baseline",), {"metavar": "LABEL", "help": "target the others are compared with (default: the first)"}),
    (
        ("--repeat",),
        {"default": 3, "show_default": True, "type": click.IntRange(1, 1000), "help": "samples per cell"},
    ),
    (
        ("--warmup",),
        {
            "default": 0,
            "show_default": True,
            "type": click.IntRange(0, 100),
            "help": "rounds run before the measured ones and thrown away, like hyperfine --warmup",
        },
    ),
    (
        ("--runtime",),
        {
            "type": click.FloatRange(min=0.1),
            "callback": _finite_seconds,
            "metavar": "SECONDS",
            "help": "runtime of every fio job and of every http load (wrk: whole seconds)",
        },
    ),
    (("--size", "size_text"), {"metavar": "SIZE", "help": "working-set size, e.g. 1G (largest job of each suite)"}),
    (("--seed",), {"type": int, "help": "seed of the interleaved order (default: random, recorded)"}),
    (
        ("--tree", "tree_profile"),
        {"type": click.Choice(sorted(PROFILES)), "help": "tree for tree workloads (default git)"},
    ),
    (
        ("--tarball",),
        {"type": click.Path(path_type=Path), "help": "your own tree (.tar, .tar.gz, .tar.xz, .tar.zst)"},
    ),
    (
        ("--drop-caches",),
        {
            "type": click.Choice(DROP_MODES),
            "default": "auto",
            "show_default": True,
            "help": "drop page caches before samples (auto: before buffered workloads, as root)",
        },
    ),
    (
        ("--file-state",),
        {
            "type": click.Choice(FILE_STATES),
            "default": "steady",
            "show_default": True,
            "help": "fio working files: written fully once before round 1 (steady) or laid out anew for every "
            "sample (fresh)",
        },
    ),
    (
        ("--until", "until_text"),
        {
            "metavar": "PRECISION",
            "help": "after --repeat rounds, add rounds for each comparison until it is decided: ranked, the same "
            "within PRECISION, or known to PRECISION (e.g. --until 5%%)",
        },
    ),
    (
        ("--max-repeat",),
        {
            "default": 12,
            "show_default": True,
            "type": click.IntRange(1, 1000),
            "help": "with --until or --budget: the most rounds a cell gets",
        },
    ),
    (
        ("--budget", "budget_text"),
        {
            "metavar": "DURATION",
            "help": "finish within DURATION (e.g. 60s, 5m): runtimes and rounds are chosen to fit, the rest goes "
            "to the least decided comparisons (implies --until 5%% unless given)",
        },
    ),
    (
        ("--watch", "watch"),
        {
            "multiple": True,
            "metavar": "[LABEL=]NAME|PID",
            "help": "measure this host process (and its children) while each sample runs: CPU, CPU per GiB, "
            "peak memory, context switches as host.* metrics (repeatable), e.g. --watch sshfs; LABEL= measures "
            "it only around that target's samples, e.g. --watch sshfs=sshfs",
        },
    ),
    (
        ("--app-tree", "app_tree"),
        {
            "type": click.Path(path_type=Path),
            "metavar": "DIR",
            "help": "startup workloads: copy this tree onto each target (default: this Python's standard library)",
        },
    ),
    (
        ("--startup-cmd", "startup_cmd"),
        {
            "metavar": "CMD",
            "help": "startup workloads: time this command, run inside the copied tree ({tree} is its path), "
            'e.g. --startup-cmd "java -jar app.jar"',
        },
    ),
    (("--keep",), {"is_flag": True, "help": "keep each target's scratch data"}),
    (
        ("--client", "clients"),
        {
            "multiple": True,
            "metavar": "HOST[:PORT]",
            "help": "a machine running 'fio --server' or 'mountbench serve': the fio workloads run on every "
            "--client at once (repeatable); each target is then a shared directory, at the same path here and there",
        },
    ),
    (
        ("--clients", "client_counts_text"),
        {
            "metavar": "N,N,...",
            "help": "scaling: run each workload with the first N of the --client machines, for each N, e.g. 1,2,4",
        },
    ),
    (("--per-client",), {"is_flag": True, "help": "show each client's own figures next to the aggregate"}),
    (("--db",), {"type": click.Path(path_type=Path), "help": DB_HELP}),
    (
        ("--json", "json_out"),
        {
            "type": click.Path(path_type=Path),
            "metavar": "FILE",
            "help": "also write the run as JSON (rewritten after every sample)",
        },
    ),
]

OPTION_NAMES = ("presets", "jobs", "only", "sweeps", "baseline", "repeat", "warmup", "runtime", "size_text", "seed",
                "tree_profile", "tarball", "drop_caches", "keep", "file_state", "until_text", "max_repeat",
                "budget_text", "clients", "client_counts_text", "watch", "app_tree", "startup_cmd")  # fmt: skip


DEFAULT_PRECISION = 0.05


def parse_precision(text: str) -> float:
    """'5%' or '0.05' -> 0.05; between 0.1 % and 100 %."""
    stripped = text.strip()
    try:
        value = float(stripped[:-1]) / 100 if stripped.endswith("%") else float(stripped)
    except ValueError:
        raise UsageError(f"--until {text}: give a precision such as 5% or 0.05") from None
    if not math.isfinite(value) or not 0.001 <= value <= 1:
        raise UsageError(f"--until {text}: give a precision between 0.1% and 100%, e.g. 5%")
    return value


_DURATION_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str, option: str) -> float:
    """'90', '90s', '1.5m', '2h' -> seconds (at least 1 s)."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not match or match.group(2) not in _DURATION_UNITS:
        raise UsageError(f"{option} {text}: give a duration such as 60s, 5m or 1h")
    seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if seconds < 1:
        raise UsageError(f"{option} {text}: give at least 1s")
    return seconds


def run_options(function: F) -> F:
    """Decorate a command with the options that make a RunOptions (plus --db and --json)."""
    for decls, kwargs in reversed(_RUN_OPTIONS):
        function = click.option(*decls, **kwargs)(function)
    return function


def pop_run_options(params: dict[str, Any]) -> RunOptions:
    """Take the run options out of a command's parameters and check them together."""
    raw = {name: params.pop(name) for name in OPTION_NAMES}
    size = parse_size(raw["size_text"]) if raw["size_text"] else None
    if size is not None and size <= 0:
        raise UsageError("--size must be positive, e.g. --size 1G")
    if raw["tarball"] and raw["tree_profile"]:
        raise UsageError("give either --tree or --tarball, not both")
    budget = parse_duration(raw["budget_text"], "--budget") if raw["budget_text"] else None
    until = parse_precision(raw["until_text"]) if raw["until_text"] else None
    if budget is not None and until is None:
        until = DEFAULT_PRECISION
    tree = None
    if raw["tarball"]:
        tree = TreeChoice(tarball=str(raw["tarball"].expanduser().resolve()))
    elif raw["tree_profile"]:
        tree = TreeChoice(profile=raw["tree_profile"], seed=1)
    clients = parse_clients(raw["clients"])
    counts = parse_counts(raw["client_counts_text"], len(clients))
    for text in raw["watch"]:
        WatchSpec.parse(text)  # syntax now; whether it runs is checked when the run starts
    return RunOptions(
        presets=tuple(raw["presets"]),
        job_files=tuple(str(path.expanduser().resolve()) for path in raw["jobs"]),
        only=tuple(raw["only"]),
        tree=tree,
        repeat=raw["repeat"],
        warmup=raw["warmup"],
        runtime=raw["runtime"],
        size=size,
        seed=raw["seed"],
        baseline=raw["baseline"],
        drop_caches=raw["drop_caches"],
        keep=raw["keep"],
        file_state=raw["file_state"],
        until=until,
        max_repeat=raw["max_repeat"],
        budget=budget,
        sweeps=tuple(parse_sweep(text) for text in raw["sweeps"]),
        clients=tuple(client.label for client in clients),
        client_counts=counts,
        watch=tuple(raw["watch"]),
        app=_app_choice(raw["app_tree"], raw["startup_cmd"]),
    )


def _app_choice(tree: Path | None, command: str | None) -> AppChoice | None:
    if tree is None and command is None:
        return None
    if tree is not None:
        tree = tree.expanduser().resolve()
        if not tree.is_dir():
            raise UsageError(f"--app-tree {tree}: not a directory; give the directory to copy onto each target")
    if command is not None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f"--startup-cmd {command!r}: {exc}; quote it as one shell word") from None
        if not argv:
            raise UsageError('--startup-cmd is empty; give the command to time, e.g. --startup-cmd "java -jar app.jar"')
    return AppChoice(tree=str(tree) if tree else None, command=command)


def given_run_options(params: dict[str, Any]) -> list[str]:
    """The run options that differ from their defaults (to refuse them next to --resume)."""
    defaults = {"repeat": 3, "warmup": 0, "drop_caches": "auto", "file_state": "steady", "max_repeat": 12}
    return [name for name in OPTION_NAMES if params.get(name) not in ((), None, False, defaults.get(name))]


def options_from_json(text: str) -> RunOptions:
    from mountbench.records.codec import options_from_dict

    try:
        return options_from_dict(json.loads(text))
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"--options-json is not a mountbench options record ({exc})") from None
