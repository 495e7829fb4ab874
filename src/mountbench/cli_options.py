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

from mountbench.errors import UsageError
from mountbench.model import DROP_MODES, AppChoice, RunOptions, TreeChoice
from mountbench.trees import PROFILES
from mountbench.units import parse_size
from mountbench.watch import WatchSpec

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
        ("--watch", "watch"),
        {
            "multiple": True,
            "metavar": "NAME|PID",
            "help": "measure this host process (and its children) while each sample runs: CPU, CPU per GiB, "
            "peak memory, context switches as host.* metrics (repeatable), e.g. --watch sshfs",
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

OPTION_NAMES = ("presets", "jobs", "only", "baseline", "repeat", "warmup", "runtime", "size_text", "seed",
                "tree_profile", "tarball", "drop_caches", "keep", "watch", "app_tree", "startup_cmd")  # fmt: skip


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
    tree = None
    if raw["tarball"]:
        tree = TreeChoice(tarball=str(raw["tarball"].expanduser().resolve()))
    elif raw["tree_profile"]:
        tree = TreeChoice(profile=raw["tree_profile"], seed=1)
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
    defaults = {"repeat": 3, "warmup": 0, "drop_caches": "auto"}
    return [name for name in OPTION_NAMES if params.get(name) not in ((), None, False, defaults.get(name))]


def options_from_json(text: str) -> RunOptions:
    from mountbench.records.codec import options_from_dict

    try:
        return options_from_dict(json.loads(text))
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"--options-json is not a mountbench options record ({exc})") from None
