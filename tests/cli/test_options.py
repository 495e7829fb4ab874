"""The run options are declared once, as RunOptions fields: the click options, RunConfig and
the codec follow from them."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import click
from click.testing import CliRunner

from mountbench.cli.options import given_run_options, pop_run_options, run_options
from mountbench.cli.runflags import RUN_FLAGS
from mountbench.kinds import declared_options
from mountbench.kinds.startup import chosen_app
from mountbench.kinds.tree import chosen_tree
from mountbench.model import RunConfig, RunOptions
from mountbench.records.codec import config_from_dict, config_to_dict, options_from_dict, options_to_dict


def _read(*args: str) -> tuple[RunOptions, list[str]]:
    seen: dict[str, Any] = {}

    @click.command()
    @run_options
    def command(**params: Any) -> None:
        seen["given"] = given_run_options(params)
        seen["options"] = pop_run_options(params)
        assert set(params) == {"per_client", "db", "json_out"}  # the rest were run options

    result = CliRunner().invoke(command, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen["options"], seen["given"]


def test_every_option_has_a_flag_and_no_flag_is_declared_twice() -> None:
    assert set(RUN_FLAGS) <= {option.name for option in fields(RunOptions)}, "every entry flags a field"
    decls = [flag.decl for flags in RUN_FLAGS.values() for flag in flags]
    decls += [flag.decl for option in declared_options() for flag in option.flags]  # the kinds' own
    # default_budget is no flag: the CLI sets it when the presets' default budget applies; the kinds'
    # options have the flags their kinds declare
    no_flag = [option.name for option in fields(RunOptions) if not RUN_FLAGS.get(option.name)]
    assert no_flag == ["default_budget", "kind_options"]
    assert len(decls) == len(set(decls)) and {"--file-state", "--tree", "--tarball", "--app-tree"} <= set(decls)


def test_no_flags_give_the_defaults() -> None:
    options, given = _read()
    assert options == RunOptions() and given == []


def test_flags_are_read_into_typed_fields(tmp_path) -> None:
    args = ["--preset", "quick", "--preset", "tree", "--repeat", "5", "--size", "4M", "--budget", "2m"]
    args += ["--tree", "tiny", "--sweep", "bs=4k,64k", "--keep", "--app-tree", str(tmp_path)]
    options, given = _read(*args)
    assert options.presets == ("quick", "tree") and options.repeat == 5 and options.keep
    assert options.size == 4 * 2**20 and options.budget == 120.0 and options.until == 0.05  # --budget implies --until
    tree, app = chosen_tree(options.kind_options), chosen_app(options.kind_options)
    assert tree is not None and tree.profile == "tiny"
    assert [axis.text for axis in options.sweeps] == ["bs=4k,64k"]
    assert app is not None and app.tree == str(tmp_path)
    assert set(given) == {"presets", "repeat", "size_text", "budget_text", "tree_profile", "sweeps", "keep", "app_tree"}


def test_a_new_field_needs_nothing_in_the_codec() -> None:
    """Every field is written under its stored name and read back, in options and configs."""
    options, _ = _read("--seed", "0", "--watch", "sshfs", "--until", "2%", "--file-state", "fresh")
    assert options_from_dict(json.loads(json.dumps(options_to_dict(options)))) == options
    config = RunConfig.from_options(options, seed=0, baseline="a", default_targets=True)
    stored = {f.name for f in fields(RunOptions) if f.name != "kind_options"} | {o.name for o in declared_options()}
    assert stored < set(config_to_dict(config))
    assert config_from_dict(json.loads(json.dumps(config_to_dict(config)))) == config
