"""What a run records about how its runners measure comes from the runners (kinds.host_facts),
and a resumed run gives it back to them (RunnerSetup.resumed_host): fio keeps its clock. The
kinds' own options reach the kinds through the engine untouched."""

from __future__ import annotations

import pytest

from mountbench.engine import workloads as workloads_mod
from mountbench.engine.workloads import assemble
from mountbench.errors import UsageError
from mountbench.fio.binary import find_fio
from mountbench.kinds import RunnerSetup, host_facts, make_runners
from mountbench.kinds.fio import FioRunner
from mountbench.kinds.startup import AppChoice
from mountbench.model import KindOptions
from mountbench.records.codec import config_from_dict


@pytest.mark.parametrize("clock", ["cpu", "clock_gettime"])
def test_a_resumed_run_keeps_the_clock_its_fio_jobs_used(clock: str) -> None:
    runners = make_runners({"tree"}, RunnerSetup(find_fio(), resumed_host={"fio_clocksource": clock}))
    assert host_facts(runners) == {"fio_clocksource": clock}


@pytest.mark.parametrize(
    ("stored", "kept"), [("per-round", "per-round"), ("fresh", "fresh"), ("reused", "steady"), (None, "steady")]
)
def test_fio_keeps_the_file_state_its_run_stored(stored: str | None, kept: str) -> None:
    """--file-state is fio's own option (kinds/fiofiles.py): the engine hands the run's stored kind
    options to the runners, and fio reads its own; a run stored before there was a choice (None:
    no key; "reused") resumes as steady."""
    config = {"version": 3, "repeat": 1, "seed": 1, "baseline": "a"} | ({"file_state": stored} if stored else {})
    runner = make_runners({"fio"}, RunnerSetup(find_fio(), config_from_dict(config).kind_options))["fio"]
    assert isinstance(runner, FioRunner) and runner.file_state == kept


def test_a_kinds_option_no_selected_workload_takes_is_refused(tmp_path) -> None:
    """A kind says when its option given in vain is refused (startup's --app-tree without a startup
    workload); the engine asks every kind's option the same way."""
    app = KindOptions.of({"app": AppChoice(tree=str(tmp_path))})
    with pytest.raises(UsageError, match="--app-tree and --startup-cmd apply to startup workloads"):
        assemble(["quick"], [], options=app)
    assert {w.kind for w in assemble(["startup"], [], options=app)} == {"startup"}
    assert assemble([], [], options=app) and workloads_mod.chosen_presets([], [], app) == ("startup",)


def _resolved(tmp_path, **options):
    from mountbench.engine.request import resolve
    from mountbench.model import RunOptions

    return resolve(RunOptions(**options), [str(tmp_path)], find_fio())


def test_until_without_a_runtime_runs_short_samples_and_says_so(tmp_path) -> None:
    """--until replicates rounds: three minutes held 5 rounds at quick's 2.5 s, short of the eighth that
    sameness is tested at; its samples run 0.5 s (engine/budget.until_runtime). A given --runtime or
    --budget decides instead, and --repeat alone keeps the preset's."""
    from mountbench.engine.budget import UNTIL_RUNTIME_S

    until = _resolved(tmp_path, until=0.05)
    assert {w.description.duration_bound_s for w in until.workloads} == {UNTIL_RUNTIME_S}
    assert any("--until: every fio job runs 0.5 s" in note for note in until.notes)
    given = _resolved(tmp_path, until=0.05, runtime=2.0)
    assert {w.description.duration_bound_s for w in given.workloads} == {2.0} and not given.notes
    fixed = _resolved(tmp_path, repeat=3)
    assert {w.description.duration_bound_s for w in fixed.workloads} == {2.5}
