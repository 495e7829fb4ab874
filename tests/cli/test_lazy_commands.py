"""The group imports a command's module only when that command runs: `mountbench run` in the
lab's emulated guest (~1/20 of the host's speed) does not import the report, lab or probe commands."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from mountbench.cli.main import COMMANDS, cli


def test_every_listed_command_is_the_command_of_that_name() -> None:
    context = click.Context(cli)
    assert cli.list_commands(context) == sorted(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert isinstance(command, click.Command) and command.name == name, name
    assert cli.get_command(context, "nosuch") is None


def test_the_entry_point_imports_no_command_module_and_run_imports_only_its_own() -> None:
    modules = sorted({module for module, _ in COMMANDS.values()})
    code = (
        "import json, sys\n"
        "import mountbench.cli.main as m\n"
        f"mods = {modules!r}\n"
        "before = [x for x in mods if x in sys.modules]\n"
        "m.cli.get_command(None, 'run')\n"
        "after = [x for x in mods if x in sys.modules]\n"
        "print(json.dumps([before, after]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    before, after = json.loads(proc.stdout)
    assert before == []
    assert after == ["mountbench.cli.run"]


def test_run_loads_the_report_only_to_print_it() -> None:
    """A run refused up front, and the lab guest's run until its end, go without the report's
    modules (in the emulated guest they take seconds to import)."""
    code = (
        "import sys\n"
        "import mountbench.cli.main as m\n"
        "m.cli.get_command(None, 'run')\n"
        "print(sorted(x for x in ('mountbench.report.content', 'mountbench.report.terminal') if x in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"
