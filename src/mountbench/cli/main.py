"""The `mountbench` group and its entry point: the one place that turns errors into exit
codes and one-line messages (tracebacks only with --debug). Each command is its own module."""

from __future__ import annotations

import importlib
import signal
import sys
import traceback
from collections.abc import Sequence

import click

from mountbench import __version__
from mountbench.cli.nonempty import refuse_empty
from mountbench.cli.stdio import flush_stdout, guard_stdout
from mountbench.errors import ExitCode, Interrupted, MountbenchError

# Each command's module is imported when that command runs (or --help lists them), not every
# one at each start: the lab's emulated guest starts `mountbench run` at ~1/20 of the host's speed,
# and would import the report, lab, cloud lab, probe and serve commands for nothing.
COMMANDS = {
    "calibrate": ("mountbench.cli.calibrate", "calibrate"),
    "cloudlab": ("mountbench.cli.cloudlab", "cloudlab"),
    "containers": ("mountbench.cli.containers", "containers"),
    "doctor": ("mountbench.cli.doctor", "doctor"),
    "export": ("mountbench.cli.transfer", "export"),
    "forget": ("mountbench.cli.transfer", "forget"),
    "history": ("mountbench.cli.history", "history_command"),
    "import": ("mountbench.cli.transfer", "import_runs"),
    "lab": ("mountbench.cli.lab", "lab"),
    "list": ("mountbench.cli.list", "list_runs"),
    "presets": ("mountbench.cli.presets", "presets"),
    "probe": ("mountbench.cli.probe", "probe"),
    "report": ("mountbench.cli.report", "report"),
    "run": ("mountbench.cli.run", "run"),
    "serve": ("mountbench.cli.serve", "serve"),
    "show": ("mountbench.cli.show", "show"),
}


class _Commands(click.Group):
    """The group whose commands come from COMMANDS, each imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, name = COMMANDS[cmd_name]
        return refuse_empty(getattr(importlib.import_module(module), name))


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the click group and map every outcome to an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        guard_stdout()
        try:
            cli.main(args=args, prog_name="mountbench", standalone_mode=False)
        finally:
            flush_stdout()
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # click's own usage errors, in our one-line form
        click.echo(f"mountbench: error: {one_line(_click_error_line(exc))}", err=True)
        sys.exit(ExitCode.USAGE)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("mountbench: interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except Interrupted as exc:
        click.echo(f"mountbench: {one_line(str(exc))}", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except MountbenchError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"mountbench: error: {one_line(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug: say so, and show the traceback only on request
        if debug:
            traceback.print_exc()
        else:
            click.echo(
                f"mountbench: internal error: {type(exc).__name__}: {one_line(str(exc))} (rerun with --debug for "
                "details)", err=True,
            )  # fmt: skip
        sys.exit(ExitCode.FAILURE)
    sys.exit(ExitCode.OK)


def one_line(text: str) -> str:
    """An error message as one line that steers no terminal: every character that is not printable
    (a line break, an escape sequence, the bell) written out as a Python escape (``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _click_error_line(exc: click.ClickException) -> str:
    """'--repeat: 0 is not in the range 1<=x<=1000; see 'mountbench run --help''."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    context = getattr(exc, "ctx", None)
    if context is not None and isinstance(exc, click.UsageError):
        return f"{message}; see '{context.command_path} --help'"
    return message


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, help="show tracebacks for errors")
@click.version_option(__version__, prog_name="mountbench")
def cli(debug: bool) -> None:
    """How does the storage behind these directories really compare?

    \b
    mountbench run                       this directory vs a RAM baseline (/dev/shm)
    mountbench run ssd=/mnt/ssd nfs=/mnt/nfs --preset cdm
    mountbench run /mnt/a /mnt/b --job mytest.fio --repeat 5
    """
