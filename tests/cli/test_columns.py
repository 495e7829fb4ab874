"""What a person sees at 80 columns (issue 25): a real run of two and of three targets with
automatic labels in a real terminal (tmux, 80 columns wide), and the same run piped.

tmux's pane is the terminal: `capture-pane -J` joins the lines the terminal wrapped, so a
joined line wider than 80 is text that did not fit. The live progress line is captured while
the run goes on (it is cleared at the end)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pytest
from support.tools import needs_fio

from mountbench.host.targets import find_mount

WIDTH = 80
RUN = ["--only", "rnd4k-q1-*", "--runtime", "0.4", "--size", "8M", "--repeat", "2", "--seed", "7"]


def _cells(line: str) -> int:
    """Terminal columns a line takes (wide characters count twice)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def _targets(tmp_path: Path, count: int) -> list[str]:
    names = ["fast", "slow-disk", "c"][:count]
    paths = []
    for name in names:
        (tmp_path / name).mkdir()
        paths.append(str(tmp_path / name))
    return paths


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return env | {"MOUNTBENCH_DB": str(tmp_path / "db.sqlite"), "TERM": "xterm-256color"}


@pytest.fixture
def tmux(tmp_path):
    if shutil.which("tmux") is None:
        pytest.skip("no tmux (apt-get install tmux)")
    socket = str(tmp_path / "tmux.sock")
    yield socket
    subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True)


def _capture(socket: str) -> list[str]:
    shown = subprocess.run(
        ["tmux", "-S", socket, "capture-pane", "-p", "-J", "-S", "-", "-t", "mb"], capture_output=True, text=True
    ).stdout
    return shown.splitlines()


@pytest.fixture
def short_path():
    """A directory with a short path (pytest's own are long, longer still under xdist), so the
    full target paths the facts print fit in 80 columns as a user's usually do."""
    made = Path(tempfile.mkdtemp(prefix="mb80-", dir="/tmp"))
    yield made
    shutil.rmtree(made, ignore_errors=True)


@pytest.mark.parametrize("count", [2, 3])
def test_a_run_fits_80_columns_in_a_terminal(tmp_path, short_path, tmux, count):
    needs_fio()
    targets = _targets(short_path, count)
    done = tmp_path / "done"
    command = shlex.join([sys.executable, "-m", "mountbench", "run", *targets, *RUN])
    script = f"{command}; echo $? > {shlex.quote(str(done))}; sleep 600"
    subprocess.run(
        ["tmux", "-S", tmux, "-f", "/dev/null", "new-session", "-d", "-s", "mb", "-x", str(WIDTH), "-y", "50",
         "bash", "-c", script],
        check=True, env=_env(tmp_path),
    )  # fmt: skip
    subprocess.run(["tmux", "-S", tmux, "set-option", "-t", "mb", "history-limit", "10000"], check=True)
    seen_progress = False
    deadline = time.monotonic() + 240
    while not done.exists() and time.monotonic() < deadline:
        lines = _capture(tmux)
        too_wide = [line for line in lines if _cells(line.rstrip()) > WIDTH]
        assert not too_wide, f"wrapped while running: {too_wide}"
        seen_progress |= any("ETA" in line for line in lines)
        time.sleep(0.3)
    assert done.exists() and done.read_text().strip() == "0", _capture(tmux)
    lines = [line.rstrip() for line in _capture(tmux)]
    text = "\n".join(lines)
    too_wide = [line for line in lines if _cells(line) > WIDTH]
    assert not too_wide, f"wider than {WIDTH} columns:\n" + "\n".join(too_wide)
    assert seen_progress, "the live progress line was never seen"
    fstype = find_mount(short_path).fstype
    assert f"fast ({fstype})" in text and f"slow-disk ({fstype})" in text, text  # automatic: name (filesystem)
    assert str(short_path / "fast") in text  # the full path, in the facts under the tables
    assert "every value: fewer than 3 samples" in text  # said once, not on every cell
    _every_note_is_referenced(text)
    shots = Path(os.environ.get("MOUNTBENCH_SHOTS", "/tmp/mountbench-shots"))
    shots.mkdir(parents=True, exist_ok=True)
    (shots / f"terminal-80-{count}-targets.txt").write_text(text + "\n")
    print(f"80-column terminal output: {shots / f'terminal-80-{count}-targets.txt'}")


def _every_note_is_referenced(text: str) -> None:
    import re

    body, _, notes = text.partition("\n[1] ")
    numbers = {int(n) for n in re.findall(r"^\[(\d+)\] ", "[1] " + notes, flags=re.M)}
    used = {int(n) for group in re.findall(r"\[([\d,]+)\]", body) for n in group.split(",")}
    assert numbers <= used, f"notes nothing refers to: {sorted(numbers - used)}"


def test_piped_output_is_80_columns_unless_columns_says_otherwise(tmp_path):
    needs_fio()
    targets = _targets(tmp_path, 3)
    env = _env(tmp_path)
    piped = subprocess.run(
        [sys.executable, "-m", "mountbench", "run", *targets, *RUN],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert piped.returncode == 0, piped.stderr
    for stream in (piped.stdout, piped.stderr):
        too_wide = [line for line in stream.splitlines() if _cells(line) > WIDTH and " elapsed, " not in line]
        assert not too_wide, too_wide  # (a piped progress line is one line per sample, for grep)
    shown = subprocess.run(
        [sys.executable, "-m", "mountbench", "show", "last"],
        capture_output=True,
        text=True,
        env=env | {"COLUMNS": "120"},
    )
    assert max(_cells(line) for line in shown.stdout.splitlines()) > WIDTH  # COLUMNS=120 is used
