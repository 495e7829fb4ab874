"""The `mountbench` group and its entry point: the one place that turns errors into exit
codes and one-line messages (tracebacks only with --debug). Each command is its own module."""

from __future__ import annotations

import signal
import sys
import traceback
from collections.abc import Sequence

import click

from mountbench import __version__
from mountbench.cli.cloudlab import cloudlab
from mountbench.cli.console import err
from mountbench.cli.doctor import doctor
from mountbench.cli.lab import lab
from mountbench.cli.list import list_runs
from mountbench.cli.presets import presets
from mountbench.cli.probe import probe
from mountbench.cli.report import report
from mountbench.cli.run import run
from mountbench.cli.serve import serve
from mountbench.cli.show import show
from mountbench.cli.transfer import export, import_runs
from mountbench.engine.session import Interrupted
from mountbench.errors import ExitCode, MountbenchError


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the click group and map every outcome to an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        cli.main(args=args, prog_name="mountbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # click's own usage errors, in our one-line form
        click.echo(f"mountbench: error: {_click_error_line(exc)}", err=True)
        sys.exit(ExitCode.USAGE)
    except (click.exceptions.Abort, KeyboardInterrupt):
        err.print("mountbench: interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except Interrupted as exc:
        click.echo(f"mountbench: {exc}", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except MountbenchError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"mountbench: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug: say so, and show the traceback only on request
        if debug:
            traceback.print_exc()
        else:
            click.echo(
                f"mountbench: internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)", err=True
            )
        sys.exit(ExitCode.FAILURE)
    sys.exit(ExitCode.OK)


def _click_error_line(exc: click.ClickException) -> str:
    """'--repeat: 0 is not in the range 1<=x<=1000; see 'mountbench run --help''."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    context = getattr(exc, "ctx", None)
    if context is not None and isinstance(exc, click.UsageError):
        return f"{message}; see '{context.command_path} --help'"
    return message


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, help="show tracebacks for errors")
@click.version_option(__version__, prog_name="mountbench")
def cli(debug: bool) -> None:
    """How does the storage behind these directories really compare?

    \b
    mountbench run                       this directory vs a RAM baseline (/dev/shm)
    mountbench run ssd=/mnt/ssd nfs=/mnt/nfs --preset cdm
    mountbench run /mnt/a /mnt/b --job mytest.fio --repeat 5
    """


for _command in (run, list_runs, show, presets, probe, serve, lab, cloudlab, doctor, report, export, import_runs):
    cli.add_command(_command)
