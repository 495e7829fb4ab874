"""Options shared by several commands, each declared once.

The run options (`run` and the labs) are the fields of model.RunOptions (their defaults),
with their flags in runflags.RUN_FLAGS, and the options each workload kind declares
(kinds.declared_options, with their own flags); `run_options` turns them into click options.
A flag's choices and paths are on the flag;
what else click cannot learn from a field's type (a range, a duration) is in _CHECKS below;
what the command line gives as text (a size, a precision, a client) is read in _READ, and a
kind reads its own options. The lab hands the resulting RunOptions to the guest's
`mountbench run` as JSON (--options-json), so the guest runs exactly what the host was asked.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from mountbench.cli.common import DB_HELP as DB_HELP
from mountbench.cli.common import db_option as db_option
from mountbench.cli.common import debug_option as debug_option
from mountbench.cli.common import metric_options as metric_options
from mountbench.cli.runflags import RUN_FLAGS
from mountbench.clients.addresses import parse_clients, parse_counts, read_hosts_file
from mountbench.errors import UsageError
from mountbench.fio.sweeps import parse_sweep
from mountbench.host.targets import pseudo_filesystem
from mountbench.host.watch import WatchSpec
from mountbench.kinds import declared_options, given_options
from mountbench.model import DEFAULT_PRECISION, Flag, RunOptions, span_of
from mountbench.store import check_writable
from mountbench.units import parse_seconds, parse_working_set

F = TypeVar("F", bound=Callable[..., Any])


class Seconds(click.ParamType):
    """A duration in seconds, with or without a unit as --budget takes it: '2.5', '1s', '500ms', '2m'."""

    name = "seconds"

    def __init__(self, minimum: float = 0.1) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        seconds = float(value) if isinstance(value, int | float) else parse_seconds(str(value))
        if seconds is None:
            self.fail(f"{value!r} is not a duration; give seconds such as 2.5, 1s, 500ms or 2m", param, ctx)
        if not math.isfinite(seconds) or seconds < self.minimum:
            self.fail(f"{value!r} is too short; give at least {self.minimum:g}s", param, ctx)
        return seconds


# What click checks beyond a field's type and its flag's choices or path, by click parameter name
_CHECKS: dict[str, dict[str, Any]] = {
    "repeat": {"type": click.IntRange(int(span_of("repeat").low), int(span_of("repeat").high or 0))},
    "warmup": {"type": click.IntRange(int(span_of("warmup").low), int(span_of("warmup").high or 0))},
    "runtime": {"type": Seconds(span_of("runtime").low)},
    "seed": {"type": int},
    "max_repeat": {"type": click.IntRange(int(span_of("max_repeat").low), int(span_of("max_repeat").high or 0))},
}


def _checks(flag: Flag, param: str) -> dict[str, Any]:
    if flag.choices:
        return {"type": click.Choice(flag.choices)}
    if flag.path:
        return {"type": click.Path(path_type=Path)}
    return _CHECKS.get(param, {})


def _flags() -> list[tuple[Flag, str, Any]]:
    """(flag, click parameter name, click default) of every run option, in --help's order: the
    fields of RunOptions, then the kinds' options. A flag named as its field takes the field's
    shape (a tuple: repeatable, a bool: a switch) and default; one with a name of its own gives
    a single value, None when not given."""
    general = [
        (flag, flag.param or option.name, None if flag.param or option.name in _NO_CLICK_DEFAULT else option.default)
        for option in fields(RunOptions)
        for flag in RUN_FLAGS.get(option.name, ())
    ]
    kinds = [
        (flag, flag.param or option.name, None if flag.param or option.default is None else option.default.to_json())
        for option in declared_options()
        for flag in option.flags
    ]
    return general + kinds


# Options whose absence means something (no --repeat: a preset's default budget may apply)
_NO_CLICK_DEFAULT = {"repeat"}


def run_options(function: F) -> F:
    """Decorate a command with the options that make a RunOptions (plus --per-client, --db and --json)."""
    function = click.option("--json", "json_out", type=click.Path(path_type=Path), metavar="FILE",
                            help="also write the run as JSON (rewritten after every sample)")(function)  # fmt: skip
    per_client = "show each client's own figures next to the aggregate"
    function = click.option("--per-client", is_flag=True, help=per_client)(db_option(function))
    for flag, param, default in reversed(_flags()):
        kwargs: dict[str, Any] = {"metavar": flag.metavar, "help": flag.help, **_checks(flag, param)}
        if isinstance(default, bool):
            kwargs["is_flag"] = True
        elif isinstance(default, tuple):
            kwargs["multiple"] = True
        elif default is not None:
            kwargs |= {"default": default, "show_default": True}
        elif param in _NO_CLICK_DEFAULT:
            kwargs["help"] = (
                f"{flag.help}  [default: {_field_default(param)}; without --repeat, --until, --budget or --runtime, "
                "the preset's default budget (quick: 36 s)]"
            )
        function = click.option(flag.decl, param, **kwargs)(function)
    return function


def mount_choice(flag: str, param: str, metavar: str, help: str) -> Callable[[F], F]:
    """A lab's choice of what it measures (lab --mount, cloudlab --mode, containers --mount):
    names repeated or comma-separated; the lab reads them against its registry."""
    return click.option(flag, param, multiple=True, metavar=metavar, help=help)


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange that also refuses nan and inf (which compare false with any bound)."""

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> object:
        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value} is not a number of seconds; give one from {self.min:g} to {self.max:g}", param, ctx)
        return number


def probe_options(
    help: str,
    *,
    on: bool,
    timeout: tuple[float, float | None, str],
    repeat: tuple[int, int | None, str | None] | None = None,
) -> Callable[[F], F]:
    """A lab's probe of its mounts: --probe/--no-probe (``on``: by default), --probe-timeout
    (``timeout``: least seconds, default, help; None: the lab's own default, said in the help)
    and, when the lab repeats its coherence checks, --probe-repeat (``repeat``: most, default, help)."""

    def decorate(function: F) -> F:
        if repeat is not None:
            most, default, repeat_help = repeat
            function = click.option("--probe-repeat", type=click.IntRange(1, most), default=default,
                                    show_default=default is not None, help=repeat_help)(function)  # fmt: skip
        least, seconds, timeout_help = timeout
        function = click.option("--probe-timeout", type=FiniteFloatRange(least, 600), default=seconds,
                                show_default=seconds is not None, help=timeout_help)(function)  # fmt: skip
        return click.option("--probe/--no-probe", "probe_mounts", default=on, show_default=True, help=help)(function)

    return decorate


# --- from the command line's values to a RunOptions ------------------------------------------


def parse_precision(text: str) -> float:
    """'5%' or '0.05' -> 0.05; between 0.1 % and 100 %."""
    stripped = text.strip()
    try:
        value = float(stripped[:-1]) / 100 if stripped.endswith("%") else float(stripped)
    except ValueError:
        raise UsageError(f"--until {text}: give a precision such as 5% or 0.05") from None
    if not math.isfinite(value) or span_of("until").problem(value):
        raise UsageError(f"--until {text}: give a precision between 0.1% and 100%, e.g. 5%")
    return value


def parse_duration(text: str, option: str) -> float:
    """'90', '90s', '1.5m', '2h' -> seconds (at least 1 s); units as units.parse_seconds reads them."""
    seconds = parse_seconds(text)
    if seconds is None or not math.isfinite(seconds):
        raise UsageError(f"{option} {text}: give a duration such as 60s, 5m or 1h")
    least = span_of("budget").low
    if seconds < least:
        raise UsageError(f"{option} {text}: give at least {least:g}s")
    return seconds


def _size(raw: dict[str, Any]) -> int | None:
    size = parse_working_set(raw["size_text"]) if raw["size_text"] else None
    if size is not None and size <= 0:
        raise UsageError("--size must be positive, e.g. --size 1G")
    return size


def _until(raw: dict[str, Any]) -> float | None:
    if raw["until_text"]:
        return parse_precision(raw["until_text"])
    return DEFAULT_PRECISION if raw["budget_text"] else None  # --budget implies --until 5%


def _watch(raw: dict[str, Any]) -> tuple[str, ...]:
    for text in raw["watch"]:
        WatchSpec.parse(text)  # syntax now; whether it runs is checked when the run starts
    return tuple(raw["watch"])


def _job_path(path: Path) -> str:
    """A --job path made absolute; a symbolic link loop (or a path that cannot be resolved) refused."""
    try:
        return str(path.expanduser().resolve())
    except (RuntimeError, OSError) as exc:
        raise UsageError(f"--job {path}: cannot be resolved ({exc}); give the job file itself") from None


def _client_texts(raw: dict[str, Any]) -> tuple[str, ...]:
    """--client's, then --hosts-file's lines."""
    hosts = read_hosts_file(raw["hosts_file"]) if raw["hosts_file"] else ()
    return (*raw["clients"], *hosts)


# Fields whose flags give something else than the field's value, read from every flag's value
_READ: dict[str, Callable[[dict[str, Any]], Any]] = {
    "job_files": lambda raw: tuple(_job_path(path) for path in raw["job_files"]),
    "size": _size,
    "until": _until,
    "budget": lambda raw: parse_duration(raw["budget_text"], "--budget") if raw["budget_text"] else None,
    "sweeps": lambda raw: tuple(parse_sweep(text) for text in raw["sweeps"]),
    "clients": lambda raw: tuple(client.label for client in parse_clients(_client_texts(raw))),
    "client_counts": lambda raw: parse_counts(raw["client_counts_text"], len(parse_clients(_client_texts(raw)))),
    "watch": _watch,
    "kind_options": given_options,
}


def _field_default(name: str) -> Any:
    return next(option.default for option in fields(RunOptions) if option.name == name)


def pop_run_options(params: dict[str, Any], *, default_budget: bool = False) -> RunOptions:
    """Take the run options out of a command's parameters and check them together.
    ``default_budget``: a run that asks for no rounds, runtime, precision or budget of its
    own gets its presets' default budget (quick: the answer in under 45 s); --repeat N keeps
    N fixed rounds."""
    raw = {param: params.pop(param) for _, param, _ in _flags()}
    given_repeat = raw["repeat"] is not None
    raw["repeat"] = raw["repeat"] if given_repeat else _field_default("repeat")
    read = {option.name: _READ[option.name](raw) if option.name in _READ else raw.get(option.name, option.default)
            for option in fields(RunOptions)}  # fmt: skip
    context = click.get_current_context(silent=True)
    given = context is not None and context.get_parameter_source("max_repeat") == ParameterSource.COMMANDLINE
    if given and read["max_repeat"] < read["repeat"]:
        raise UsageError(
            f"--max-repeat {read['max_repeat']} is below --repeat {read['repeat']}: the planned rounds alone "
            f"exceed it; give --max-repeat {read['repeat']} or more, or a smaller --repeat"
        )
    options = RunOptions(**read)
    asked = given_repeat or options.budget is not None or options.until is not None or options.runtime is not None
    if default_budget and not asked:
        budget = preset_budget(options)
        if budget is not None:
            options = dataclasses.replace(options, budget=budget, until=DEFAULT_PRECISION, default_budget=True)
    return options


def preset_budget(options: RunOptions) -> float | None:
    """The default budget of the run's presets for two targets (every one must declare one; job
    files, sweeps and clients have none); engine.budget.default_budget scales it with the targets."""
    if options.job_files or options.sweeps or options.clients:
        return None
    from mountbench.engine.workloads import chosen_presets  # engine imports no cli: no circle
    from mountbench.presets import load_preset

    budgets = [load_preset(name).budget for name in chosen_presets(options.presets, (), options.kind_options)]
    if not budgets or any(b is None for b in budgets):
        return None
    return float(sum(b for b in budgets if b is not None))


def given_run_options(params: dict[str, Any]) -> list[str]:
    """The run options that differ from their defaults (to refuse them next to --resume)."""
    return [param for _, param, default in _flags() if params.get(param) not in ((), None, False, default)]


def given_flags(params: dict[str, Any]) -> dict[str, str]:
    """The run options given (as given_run_options): click parameter -> the flag that set it."""
    given = ((), None, False)
    return {param: flag.decl for flag, param, default in _flags() if params.get(param) not in (*given, default)}


def options_from_json(text: str) -> RunOptions:
    from mountbench.records.codec import options_from_dict

    try:
        return options_from_dict(json.loads(text))
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"--options-json is not a mountbench options record ({exc})") from None


def check_database(db: Path) -> None:
    """Refuse, before anything runs, a results database that cannot be written, or one on a
    filesystem that stores nothing (/proc, /sys)."""
    fstype = pseudo_filesystem(db)
    if fstype:
        raise UsageError(f"--db {db} is on {fstype}, which stores nothing; give a database file on a real filesystem")
    check_writable(db)
