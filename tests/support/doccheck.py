"""Reading the README and docs/ as a reader would try them: the `mountbench ...` commands they show,
the output they quote, and the links between the pages; and checking commands against the real CLI.

A command is read leniently, as a reader copies it: words up to the first shell operator (`|`, `&&`,
`;`, `>`) or comment, brackets around an optional word (`[--no-raw]`) dropped, placeholders
(`RUN...`, `HOST[:PORT]`) taken as the arguments they stand for. What must hold is only what a
misspelling would break: the command exists and takes every option the line uses."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click

from mountbench.cli.main import cli

# fenced blocks whose lines may be commands (```sh, ```text, ```console); other languages are not read
COMMAND_FENCES = ("sh", "text", "console")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
# a code span or a link may wrap onto the next line, never across a blank line (a new paragraph)
CODE_SPAN = re.compile(r"`((?:[^`\n]|\n(?!\n))+)`")
LINK = re.compile(r"!?\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SHELL_OPERATORS = frozenset("|&;<>()")
# options of the programs mountbench drives, named in prose as their own manuals spell them
FOREIGN_OPTIONS = {
    "--dir-cache-time": "rclone",
    "--vfs-cache-mode": "rclone",
    "--vfs-write-back": "rclone",
    "--latency": "wrk",
    "--no-whole-file": "rsync",
    "--output-format": "fio",
    "--privileged": "docker, podman",
    "--preserve-fds": "podman run",
    "-o": "sshfs",
}
# a script that hands its arguments to one command (scripts/run-default.sh: `mountbench run "$@"`)
WRAPPERS = {"scripts/run-default.sh": ("mountbench", "run")}


@dataclass(frozen=True)
class Quoted:
    """A command as a page shows it: where, the words read from it, and (in a console block) the
    output lines quoted under it."""

    page: Path
    line: int
    words: tuple[str, ...]
    output: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"


def shell_words(line: str) -> list[str]:
    """The words of one shell line up to its first operator or comment ('a|b' ends at the '|')."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = []
    try:
        for word in lexer:
            if set(word) <= SHELL_OPERATORS:
                break
            words.append(word)
    except ValueError:  # an unbalanced quote in prose: read up to it
        pass
    return words


def command_words(line: str) -> tuple[str, ...] | None:
    """`mountbench ...` (or a wrapper of it) as words, or None when the line is no such command."""
    words = shell_words(line)
    if not words:
        return None
    if words[0] == "mountbench":
        return tuple(words)
    if words[0] in WRAPPERS:
        return (*WRAPPERS[words[0]], *words[1:])
    return None


def blank_fences(markdown: str) -> str:
    """The page with every fenced block's lines blanked (line numbers kept), so prose is read alone."""
    return FENCE.sub(lambda match: "\n" * match.group(0).count("\n"), markdown)


def quoted_commands(page: Path, markdown: str | None = None) -> list[Quoted]:
    """Every command a page shows: lines of command fences (`$ ` stripped in console blocks, the
    output under such a line kept with it) and code spans of prose naming one (`mountbench probe`,
    or a command and an option: `run --client`)."""
    text = page.read_text() if markdown is None else markdown
    found: list[Quoted] = []
    for fence in FENCE.finditer(text):
        if fence.group(1) not in COMMAND_FENCES:
            continue
        first_line = text.count("\n", 0, fence.start(2)) + 1
        found.extend(_fenced_commands(page, fence.group(1), fence.group(2).splitlines(), first_line))
    for number, span in prose_spans(text):
        words = command_words(span) or _command_with_option(span)
        if words:
            found.append(Quoted(page, number, words))
    return found


def prose_spans(markdown: str) -> list[tuple[int, str]]:
    """The code spans of a page's prose, each with the line it starts on (one wrapped onto the
    next line read as one line)."""
    prose = blank_fences(markdown)
    return [(_line_of(prose, span.start()), " ".join(span.group(1).split())) for span in CODE_SPAN.finditer(prose)]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _fenced_commands(page: Path, language: str, lines: list[str], first_line: int) -> list[Quoted]:
    found: list[Quoted] = []
    for offset, line in enumerate(lines):
        if language == "console":
            if not line.startswith("$ "):
                continue
            output = []
            for following in lines[offset + 1 :]:
                if following.startswith("$ "):
                    break
                output.append(following.rstrip())
            words = command_words(line[2:])
            if words:
                found.append(Quoted(page, first_line + offset, words, tuple(output)))
            continue
        words = command_words(line)
        if words:
            found.append(Quoted(page, first_line + offset, words))
    return found


def _command_with_option(span: str) -> tuple[str, ...] | None:
    """'run --client HOST' read as `mountbench run --client HOST`: a command's name, then an option."""
    words = shell_words(span)
    if len(words) > 1 and words[0] in command_names() and any(word.startswith("--") for word in words[1:]):
        return ("mountbench", *words)
    return None


def option_spans(page: Path, markdown: str | None = None) -> list[tuple[int, str]]:
    """Options named alone in prose (`--keep-guest`, `--size 64M`): (line, option)."""
    text = page.read_text() if markdown is None else markdown
    found = []
    for number, span in prose_spans(text):
        words = shell_words(span)
        if words and _looks_like_option(option := words[0].split("=", 1)[0]):
            found.append((number, option))
    return found


def every_option() -> set[str]:
    """Every option of every command and of the group: what an option named alone may be."""
    context = click.Context(cli)
    commands = [cli.get_command(context, name) for name in command_names()]
    return accepted_options(cli).union(*(accepted_options(command) for command in commands if command))


def command_names() -> list[str]:
    return cli.list_commands(click.Context(cli))


def accepted_options(command: click.Command) -> set[str]:
    """Every spelling of every option the command takes, its help option included."""
    context = click.Context(command, help_option_names=["-h", "--help"])
    names = {name for param in command.get_params(context) for name in (*param.opts, *param.secondary_opts)}
    return {name for name in names if name.startswith("-")}


def problems_of(words: tuple[str, ...]) -> list[str]:
    """What is wrong with `mountbench WORDS...` as the CLI sees it: an unknown command, or an option
    that it (or, before the command, the group) does not take. Empty when the line is sound."""
    rest = list(words[1:])
    problems = []
    group_options = accepted_options(cli)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0).split("=", 1)[0]
        if option not in group_options:
            problems.append(f"'mountbench' takes no option {option}")
    if not rest:
        return problems  # `mountbench --help`, or the group alone
    name = rest.pop(0)
    command = cli.get_command(click.Context(cli), name)
    if command is None:
        return [*problems, f"no command '{name}' (there are: {', '.join(command_names())})"]
    options = accepted_options(command)
    for word in rest:
        option = word.strip("[]").split("=", 1)[0]
        if _looks_like_option(option) and option not in options:
            problems.append(f"'mountbench {name}' takes no option {option}")
    return problems


def _looks_like_option(word: str) -> bool:
    return bool(re.fullmatch(r"--[a-z][a-z0-9-]*|-[a-zA-Z]", word))


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens,
    a repeated one numbered (-1, -2, ...)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in blank_fences(markdown).splitlines():
        match = HEADING.match(line)
        if not match:
            continue
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def link_problems(page: Path, markdown: str | None = None) -> list[str]:
    """Every relative link (and image) of a page that names no file, or no heading of the page it names."""
    text = page.read_text() if markdown is None else markdown
    prose = CODE_SPAN.sub(lambda span: "\n" * span.group(0).count("\n"), blank_fences(text))
    problems = []
    for link in LINK.finditer(prose):
        target, number = link.group(1), _line_of(prose, link.start())
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not checked here
            continue
        path_text, _, anchor = target.partition("#")
        path = (page.parent / path_text).resolve() if path_text else page
        where = f"{page.name}:{number}: {target}"
        if not path.exists():
            problems.append(f"{where}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in heading_anchors(path.read_text()):
            problems.append(f"{where}: no heading #{anchor} in {path.name}")
    return problems
