"""An empty string is bad input, not "not given": `run --resume ''` used to run the whole default
benchmark, `--size ''` the preset's size, `cloudlab --mode ''` every cache mode. Every option that
takes a value, and every argument, of every command refuses '' typed on the command line, in
click's one-line form ("Invalid value for '--size': is empty; ...")."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click
from click.core import ParameterSource

_DONE = "_mountbench_refuses_empty"


def refuse_empty(command: click.Command) -> click.Command:
    """``command`` with every value-taking parameter refusing '' (done once per command)."""
    if getattr(command, _DONE, False):
        return command
    for param in command.params:
        if isinstance(param, click.Option) and (param.is_flag or param.count):
            continue
        setattr(param, "consume_value", _refusing(param, param.consume_value))  # noqa: B010 - per instance
    setattr(command, _DONE, True)
    return command


def _refusing(
    param: click.Parameter, consume: Callable[[click.Context, Mapping[str, Any]], tuple[Any, ParameterSource]]
) -> Callable[[click.Context, Mapping[str, Any]], tuple[Any, ParameterSource]]:
    def consume_value(ctx: click.Context, opts: Mapping[str, Any]) -> tuple[Any, ParameterSource]:
        value, source = consume(ctx, opts)
        if source == ParameterSource.COMMANDLINE and _holds_empty(value):
            fix = "give a value or leave the option out" if isinstance(param, click.Option) else "give a value"
            raise click.BadParameter(f"is empty; {fix}", ctx, param)
        return value, source

    return consume_value


def _holds_empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple):
        return any(_holds_empty(item) for item in value)
    return False
