"""The delegated executor (labs/delegated.py), the one the QEMU lab and the container lab share:
`mountbench run --options-json --events -` somewhere else, each stored sample handed back as it comes,
a stop said in one Stopped, and a resume seeded from the host's record.

Here on fakes of the `Inside` a lab supplies and on this machine (the container lab's host side,
HereInside): the executor's contract without booting a guest or starting a container. Each lab's
own end-to-end test runs it where it belongs (tests/labs/qemu, tests/labs/containers)."""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mountbench.errors import ExitCode
from mountbench.labs.containers.rounds import HereInside
from mountbench.labs.delegated import EXPORT, SEED, Delegation, InsideTimeout, command, delegate, seed, shell_line
from mountbench.model import RunData, RunOptions
from mountbench.records.events import MARKER
from mountbench.units import parse_size

OPTIONS = RunOptions(presets=("quick",), only=("rnd4k-q1-read",), repeat=2, runtime=0.3, size=parse_size("4M"))


class _Stops:
    """An Inside whose run says a line and an event, then ends as ``ending`` (raised)."""

    python = "/usr/bin/python3"
    results_inside = "/results"

    def __init__(self, results: Path, ending: BaseException) -> None:
        self.results, self.ending, self.asked = results, ending, []

    def run(self, argv: Sequence[str], setup: Sequence[Sequence[str]], on_line: Callable[[str], None],
            timeout: float | None) -> int:  # fmt: skip
        self.asked.append((list(argv), [list(step) for step in setup], timeout))
        on_line("fio: a line of the run's own")
        on_line(f"{MARKER} {json.dumps({'event': 'start', 'target': 'a', 'workload': 'w'})}")
        raise self.ending


def test_the_command_hands_the_options_whole_and_a_resume_copies_its_seed_first(tmp_path: Path) -> None:
    inside = _Stops(tmp_path, KeyboardInterrupt())
    argv, setup = command(inside, Delegation(("a=/mnt/a",), OPTIONS, "/tmp/run.sqlite", learnt="/results/l.json"))
    assert argv[:5] == ["/usr/bin/python3", "-m", "mountbench", "run", "a=/mnt/a"] and setup == []
    given = json.loads(argv[argv.index("--options-json") + 1])
    assert given["repeat"] == 2 and given["only"] == ["rnd4k-q1-read"] and given["runtime"] == 0.3
    assert argv[argv.index("--json") + 1] == f"/results/{EXPORT}" and argv[argv.index("--events") + 1] == "-"
    assert argv[argv.index("--learnt-json") + 1] == "/results/l.json"
    argv, setup = command(inside, Delegation(("a=/mnt/a",), OPTIONS, "/tmp/run.sqlite", resume="r7"))
    assert argv[4:6] == ["--resume", "r7"] and "--options-json" not in argv and "a=/mnt/a" not in argv
    assert setup == [["cp", f"/results/{SEED}", "/tmp/run.sqlite"]]  # the host's record, as its database
    line = shell_line(argv, setup, env="MB_X='1 2'")
    assert line.startswith(f"cd /tmp && cp /results/{SEED} /tmp/run.sqlite && env MB_X='1 2' ")
    assert shlex.split(line.split(" && ")[-1])[2:] == argv


@pytest.mark.parametrize(
    ("ending", "code", "said"),
    [
        (KeyboardInterrupt(), ExitCode.INTERRUPTED, "interrupted; the samples that finished are stored"),
        (InsideTimeout("late"), ExitCode.FAILURE, "the guest's run did not finish within 60 s; the samples"),
    ],
)
def test_a_stop_is_one_stopped_and_a_stale_export_is_never_read(
    tmp_path: Path, ending: BaseException, code: ExitCode, said: str
) -> None:
    """Ctrl-C and the time limit end every lab's delegated run alike; an export a run before left in the
    results directory is removed first, never handed back as this run's."""
    (tmp_path / EXPORT).write_text("{}")
    inside, lines, events, runs = _Stops(tmp_path, ending), [], [], []
    outcome = delegate(inside, Delegation(("a=/mnt/a",), OPTIONS, "/tmp/run.sqlite"), on_output=lines.append,
                       on_event=events.append, on_run=runs.append, timeout=60, what="the guest's run")  # fmt: skip
    assert outcome.run is None and outcome.status is None and runs == []
    assert outcome.stopped is not None and outcome.stopped.exit_code == code and str(outcome.stopped).startswith(said)
    assert lines == ["fio: a line of the run's own"] and [e["event"] for e in events] == ["start"]
    assert inside.asked[0][2] == 60 and not (tmp_path / EXPORT).exists()


def _delegated(results: Path, db: Path, targets: tuple[str, ...], **given: Any) -> tuple[Any, list[RunData], list]:
    runs: list[RunData] = []
    events: list[dict[str, Any]] = []
    lines: list[str] = []
    outcome = delegate(HereInside(results), Delegation(targets, OPTIONS, str(db), **given), on_output=lines.append,
                       on_event=events.append, on_run=runs.append, timeout=300)  # fmt: skip
    assert outcome.status == 0 and outcome.stopped is None, "\n".join(lines[-20:])
    return outcome, runs, events


def test_every_stored_sample_comes_home_as_it_comes_and_a_resume_takes_only_what_is_left(tmp_path: Path) -> None:
    """A real `mountbench run` on this machine (the container lab's host side): the lab gets the run after
    each stored sample (a kill -9 of mountbench loses nothing that finished) and at the end. Handed back
    with its second round gone (as the host stored it when killed), it is resumed from the seed: the first
    round is kept as it was, the second taken again, nothing else."""
    results, target = tmp_path / "results", tmp_path / "target"
    results.mkdir()
    target.mkdir()
    outcome, runs, events = _delegated(results, tmp_path / "first.sqlite", (f"a={target}",))
    run = outcome.run
    assert run is not None and run.status == "complete"
    assert sorted(s.round for s in run.samples) == [0, 1] and all(s.ok for s in run.samples)
    saved = [e for e in events if e["event"] == "saved"]
    assert len(runs) == len(saved) + 1  # every "saved" (each sample stored, then the run's end), then the end
    assert [len(r.samples) for r in runs[: len(run.samples)]] == [1, 2]  # each sample as it was stored
    assert [r.status for r in runs[len(run.samples) :]] == ["complete"] * (len(runs) - len(run.samples))

    kept = [s for s in run.samples if s.round == 0]
    killed = dataclasses.replace(run, status="interrupted", samples=tuple(kept))
    seed(results, killed)
    assert (results / SEED).exists()
    resumed, runs, _ = _delegated(results, tmp_path / "again.sqlite", (), resume=run.id)
    again = resumed.run
    assert again is not None and again.id == run.id and again.status == "complete"
    assert sorted(s.round for s in again.samples) == [0, 1]
    before = {(s.target, s.workload, s.round): s.started_at for s in kept}
    assert all(s.started_at == before[(s.target, s.workload, 0)] for s in again.samples if s.round == 0)
    assert runs[0].samples[: len(kept)] == again.samples[: len(kept)]  # the first hand-back already holds them
