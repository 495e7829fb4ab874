"""The README and docs/ tell the truth about the CLI: every `mountbench ...` command they show names a
real command and only options it takes, every link between the pages resolves, and what they quote
of cheap commands (`presets`, `run --dry-run`) is what those commands print today."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support.doccheck import (
    FOREIGN_OPTIONS,
    Quoted,
    command_names,
    command_words,
    every_option,
    heading_anchors,
    link_problems,
    option_spans,
    problems_of,
    quoted_commands,
    shell_words,
)

from mountbench.cli.main import cli
from mountbench.errors import StoreError, TargetError

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _all_quoted() -> list[Quoted]:
    return [quoted for page in PAGES for quoted in quoted_commands(page)]


def _mountbench(args: tuple[str, ...], cwd: Path, env: dict[str, str]) -> str:
    """`mountbench ARGS` as a reader runs it, its standard output at 80 columns."""
    done = subprocess.run(
        [sys.executable, "-m", "mountbench", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "80", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"mountbench {' '.join(args)}: {done.stderr}"
    return done.stdout


def _isolated(tmp_path: Path) -> dict[str, str]:
    """An environment whose database and home (caches, ~/.local) lie in tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "MOUNTBENCH_DB": str(tmp_path / "db.sqlite")}


# --- the pages ---------------------------------------------------------------------------------


def test_the_readme_stays_short_and_every_docs_page_says_what_it_covers() -> None:
    assert len(README.read_text().splitlines()) < 300
    for page in PAGES[1:]:
        lines = page.read_text().splitlines()
        assert lines[0].startswith("# "), f"{page.name}: starts with its title"
        intro = " ".join(lines[1:8])
        assert "](../README.md)" in intro, f"{page.name}: its first lines link back to the README"
        assert f"(docs/{page.name})" in README.read_text(), f"the README links to {page.name}"


def test_every_command_the_pages_show_is_one_the_cli_takes() -> None:
    quoted = _all_quoted()
    assert len(quoted) > 100, "the pages show commands; reading them found too few"
    problems = [
        f"{each.where}: {' '.join(each.words)}: {problem}" for each in quoted for problem in problems_of(each.words)
    ]
    assert not problems, "\n".join(problems)


def test_every_option_named_alone_is_one_some_command_takes() -> None:
    known = every_option() | set(FOREIGN_OPTIONS)
    named = [(page.name, line, option) for page in PAGES for line, option in option_spans(page)]
    assert len(named) > 50
    unknown = [f"{page}:{line}: {option}" for page, line, option in named if option not in known]
    assert not unknown, "no mountbench command takes these (another program's? add it to FOREIGN_OPTIONS):\n" + (
        "\n".join(unknown)
    )


def test_every_command_of_the_cli_is_shown_somewhere() -> None:
    shown = {each.words[1] for each in _all_quoted() if len(each.words) > 1}
    assert set(command_names()) <= shown


def test_every_link_between_the_pages_resolves() -> None:
    problems = [problem for page in PAGES for problem in link_problems(page)]
    assert not problems, "\n".join(problems)


def test_the_readme_keeps_its_two_commands_and_ci_runs_the_second() -> None:
    readme = README.read_text()
    assert "scripts/run-default.sh" in readme and "scripts/test.sh" in readme
    assert (ROOT / "scripts/run-default.sh").is_file() and (ROOT / "scripts/test.sh").is_file()
    assert 'exec "$here/.venv/bin/mountbench" run "$@"' in (ROOT / "scripts/run-default.sh").read_text()
    assert "exec scripts/test.sh" in (ROOT / ".ci/run").read_text()
    assert (ROOT / "docs/report-example.png").is_file() and "(docs/report-example.png)" in readme


def test_the_suite_time_and_its_timing_part_are_documented_where_the_test_list_is() -> None:
    development = (ROOT / "docs/development.md").read_text()
    assert "tests/support/timing.py" in development and "tests/support/groups.py" in development
    assert re.search(r"took \d+ minutes here", development)


# --- what the pages quote, run for real --------------------------------------------------------


def _runnable(quoted: Quoted) -> bool:
    """Commands that touch nothing: `presets`, and `run --dry-run`."""
    return quoted.words[1] == "presets" or (quoted.words[1] == "run" and "--dry-run" in quoted.words)


def test_quoted_output_is_what_the_command_prints(tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed: `run --dry-run` needs it (scripts/install.sh installs it)")
    quoted = [each for each in _all_quoted() if each.output and _runnable(each)]
    assert {each.words[1] for each in quoted} == {"presets", "run"}, "the docs quote presets and a dry run"
    for each in quoted:
        printed = [line.rstrip() for line in _mountbench(each.words[1:], tmp_path, _isolated(tmp_path)).splitlines()]
        assert printed[: len(each.output)] == list(each.output), f"{each.where}: {' '.join(each.words)}"
        shutil.rmtree(tmp_path / "home")


def test_a_dry_run_writes_nothing_as_the_readme_says(tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed: `run --dry-run` needs it (scripts/install.sh installs it)")
    lines = README.read_text().splitlines()
    dry = [each for each in quoted_commands(README) if _runnable(each) and each.words[1] == "run"]
    assert dry and all("writes nothing" in lines[each.line - 1] for each in dry)
    env = _isolated(tmp_path)
    for each in dry:  # the README's own command, its target directories made in tmp_path
        args = [
            str(tmp_path / word.lstrip("/").replace("/", "-")) if word.startswith("/") else word
            for word in each.words[1:]
        ]
        targets = [Path(arg) for arg in args if arg.startswith(str(tmp_path))]
        for target in targets:
            target.mkdir()
        printed = _mountbench(tuple(args), tmp_path, env)
        noun = "target" if len(targets) == 1 else "targets"
        assert printed.startswith(f"Plan: {len(targets)} {noun} × "), printed
        made = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*"))
        assert made == sorted(["home", *(target.name for target in targets)]), "a dry run wrote these"


def test_the_presets_table_lists_every_preset_and_the_default() -> None:
    printed = _mountbench(("presets",), ROOT, {})
    listed = dict(re.findall(r"^([a-z0-9]+)( \(default\))?: ", printed, re.MULTILINE))
    table = dict(
        re.findall(r"^\| `([a-z0-9]+)`( \(default\))? \|", (ROOT / "docs/presets.md").read_text(), re.MULTILINE)
    )
    assert table == listed


# --- the checker itself ------------------------------------------------------------------------


def test_the_checker_finds_a_misspelled_command_or_option() -> None:
    assert problems_of(("mountbench", "rnu", "/mnt/a"))[0].startswith("no command 'rnu'")
    assert problems_of(("mountbench", "run", "/mnt/a", "--presets", "quick")) == [
        "'mountbench run' takes no option --presets"
    ]
    assert problems_of(("mountbench", "show", "last", "--metrics=iops")) == [
        "'mountbench show' takes no option --metrics"
    ]
    assert problems_of(("mountbench", "--verbose", "list")) == ["'mountbench' takes no option --verbose"]
    assert problems_of(("mountbench", "export", "RUN...", "--out", "x.json", "[--no-rwa]")) == [
        "'mountbench export' takes no option --no-rwa"
    ]


def test_the_checker_accepts_what_the_cli_takes() -> None:
    assert problems_of(("mountbench", "--debug", "run", "/mnt/a", "--preset", "s3", "--sweep", "bs=4k,64k")) == []
    assert problems_of(("mountbench", "export", "RUN...", "--out", "runs.json", "[--no-raw]")) == []
    assert problems_of(("mountbench", "cloudlab", "--no-probe", "-h")) == []
    assert problems_of(("mountbench",)) == []


def test_commands_are_read_up_to_a_pipe_or_a_comment() -> None:
    assert shell_words("mountbench report --format csv | head -3") == ["mountbench", "report", "--format", "csv"]
    assert shell_words("mountbench list   # stored runs: 'suite', size") == ["mountbench", "list"]
    assert shell_words("run --file-state per-round|steady|fresh") == ["run", "--file-state", "per-round"]
    assert command_words("scripts/run-default.sh /mnt/nfs --preset cdm") == (
        "mountbench",
        "run",
        "/mnt/nfs",
        "--preset",
        "cdm",
    )
    assert command_words("fio --server") is None


def test_commands_are_found_in_fences_spans_and_console_blocks(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Try `mountbench show last --unit IOPS` or `run --client HOST`, not `fio --server` or `list`; `mountbench\n"
        "export last --no-raw` wraps.\n"
        "```sh\nmountbench lab --mount 9p   # a guest\necho mountbench\n```\n"
        "```python\nmountbench run --not-read\n```\n"
        "```console\n$ mountbench presets\nquick (default): a first look\n...\n```\n"
    )
    found = {(each.line, each.words, each.output) for each in quoted_commands(page)}
    assert found == {
        (1, ("mountbench", "show", "last", "--unit", "IOPS"), ()),
        (1, ("mountbench", "run", "--client", "HOST"), ()),
        (1, ("mountbench", "export", "last", "--no-raw"), ()),
        (4, ("mountbench", "lab", "--mount", "9p"), ()),
        (11, ("mountbench", "presets"), ("quick (default): a first look", "...")),
    }


def test_options_named_alone_are_found_in_prose_only(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Use `--keep-gust`, `--size 64M` or `-h`; not `-` or `--`. A span may wrap: `--baseline\n"
        "LABEL`, `--unit`.\n```sh\nmountbench lab --cpus 2\n```\n"
    )
    assert option_spans(page) == [(1, "--keep-gust"), (1, "--size"), (1, "-h"), (1, "--baseline"), (2, "--unit")]
    assert "--keep-guest" in every_option() and "--keep-gust" not in every_option()


def test_the_link_checker_finds_a_missing_page_or_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## `--until` and `--budget`: sooner\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#--until-and---budget-sooner) [top](#page) [web](https://example.org/x)\n"
        "[gone](missing.md) [no heading](other.md#nowhere) `[in code](missing.md)` [a wrapped\n"
        "link](missing.md)\n"
        "```sh\n[in a fence](missing.md)\n```\n"
    )
    assert link_problems(page) == [
        "page.md:4: missing.md: no such file",
        "page.md:4: other.md#nowhere: no heading #nowhere in other.md",
        "page.md:4: missing.md: no such file",
    ]
    assert heading_anchors("# A\n## A\n## O_DIRECT is probed (for real)\n") == {
        "a",
        "a-1",
        "o_direct-is-probed-for-real",
    }


def test_the_example_ci_workflow_runs_commands_the_cli_takes_as_regressions_md_shows_them() -> None:
    """docs/regressions-workflow.yml (GitHub Actions) is not Markdown: its `mountbench` lines are read here,
    checked as the pages' are, and are the ones docs/regressions.md quotes."""
    workflow = (ROOT / "docs/regressions-workflow.yml").read_text()
    steps = [line.strip().removeprefix("- ").removeprefix("run:").strip() for line in workflow.splitlines()]
    commands = [words for line in steps if (words := command_words(line))]
    assert {words[1] for words in commands} == {"run", "export"} and any("--against" in w for w in commands)
    problems = [f"{' '.join(words)}: {problem}" for words in commands for problem in problems_of(words)]
    assert not problems, "\n".join(problems)
    quoted = {each.words for each in quoted_commands(ROOT / "docs/regressions.md")}
    assert all(words in quoted for words in commands), "regressions.md shows the workflow's commands as they are"


# --- the values the pages give, through the parser and the dry run -------------------------------------

# Commands whose dry run checks every value, as the run would, and writes nothing
DRY_RUNS = {"run", "containers", "cloudlab"}
# Options whose value is the outside world (a stored run, a running process, another machine): a dry run
# here cannot have it, so a command naming one is only parsed
WORLD = {"--resume", "--against", "--watch", "--client"}


def value_problems(words: tuple[str, ...], tmp_path: Path) -> str | None:
    """What the CLI says of a quoted command's values: parsed (types, choices, ranges), then, for
    a command with a dry run, dry-run with each path made in ``tmp_path`` (a missing path or stored run
    is the reader's world, not the page's mistake). None when the values are sound, or the quote is a
    fragment (an option named without its value, as prose does)."""
    args = list(words[1:])
    command = cli.get_command(click.Context(cli), args[0]) if args else None
    if command is None:
        return None  # the group alone, or a command problems_of reports
    try:
        with command.make_context(args[0], args[1:]) as ctx:
            ctx.obj = None
    except click.exceptions.Exit:
        return None  # --help
    except click.ClickException as exc:
        message = exc.format_message()
        return None if "requires an argument" in message or "Missing argument" in message else message
    if args[0] not in DRY_RUNS or WORLD & set(args):
        return None
    args = [_made(word, tmp_path) for word in args]
    result = CliRunner().invoke(cli, [*args, *([] if "--dry-run" in args else ["--dry-run"])])
    error = result.exception
    if error is None or (isinstance(error, SystemExit) and error.code == 0):
        return None
    if isinstance(error, TargetError | StoreError) or "does not exist" in str(error):
        return None
    return f"{type(error).__name__}: {error}"


def _made(word: str, tmp_path: Path) -> str:
    """A target path the page names, as a directory made in tmp_path (``name=/mnt/x`` keeps its name)."""
    name, _, path = word.rpartition("=") if "=/" in word else ("", "", word)
    if not path.startswith(("/", "~")) or path.startswith("/dev/shm"):
        return word
    made = tmp_path / "targets" / path.strip("/~")  # its last part as the page's: the same label
    made.mkdir(parents=True, exist_ok=True)
    return f"{name}={made}" if name else str(made)


def test_every_value_the_pages_give_is_one_the_cli_takes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed: a dry run needs it (scripts/install.sh installs it)")
    for name, value in _isolated(tmp_path).items():
        monkeypatch.setenv(name, value)
    problems = []
    said: dict[tuple[str, ...], str | None] = {}  # a command the pages show twice is checked once
    for each in _all_quoted():
        if each.words not in said:
            said[each.words] = value_problems(each.words, tmp_path)
        if said[each.words]:
            problems.append(f"{each.where}: {' '.join(each.words)}: {said[each.words]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "words",
    [
        ("mountbench", "containers", "--mount", "nosuch"),
        ("mountbench", "run", "/srv/a", "--preset", "nosuch", "--repeat", "banana"),
        ("mountbench", "run", "/srv/a", "--preset", "nosuch"),
        ("mountbench", "cloudlab", "--mode", "bogus"),
        ("mountbench", "containers", "--preset", "tree", "--tree", "small"),
    ],
)
def test_the_value_check_refuses_what_the_cli_refuses(words, tmp_path: Path, monkeypatch) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed: a dry run needs it")
    for name, value in _isolated(tmp_path).items():
        monkeypatch.setenv(name, value)
    assert value_problems(words, tmp_path)
    assert value_problems((*words[:2], "--help"), tmp_path) is None  # and not a fragment or --help
