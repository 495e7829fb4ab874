"""What a run records about how its runners measure comes from the runners (kinds.host_facts),
and a resumed run gives it back to them (RunnerSetup.resumed_host): fio keeps its clock."""

from __future__ import annotations

import pytest

from mountbench.fio.binary import find_fio
from mountbench.kinds import RunnerSetup, host_facts, make_runners


@pytest.mark.parametrize("clock", ["cpu", "clock_gettime"])
def test_a_resumed_run_keeps_the_clock_its_fio_jobs_used(clock: str) -> None:
    runners = make_runners({"tree"}, RunnerSetup(find_fio(), resumed_host={"fio_clocksource": clock}))
    assert host_facts(runners) == {"fio_clocksource": clock}


def _resolved(tmp_path, **options):
    from mountbench.engine.request import resolve
    from mountbench.model import RunOptions

    return resolve(RunOptions(**options), [str(tmp_path)], find_fio())


def test_until_without_a_runtime_runs_short_samples_and_says_so(tmp_path) -> None:
    """--until replicates rounds: three minutes held 5 rounds at quick's 2.5 s, 12 at 0.5 s
    (engine/budget.until_runtime). A given --runtime or --budget decides instead, and --repeat alone
    keeps the preset's."""
    from mountbench.engine.budget import UNTIL_RUNTIME_S

    until = _resolved(tmp_path, until=0.05)
    assert {w.description.duration_bound_s for w in until.workloads} == {UNTIL_RUNTIME_S}
    assert any("--until: every fio job runs 0.5 s" in note for note in until.notes)
    given = _resolved(tmp_path, until=0.05, runtime=2.0)
    assert {w.description.duration_bound_s for w in given.workloads} == {2.0} and not given.notes
    fixed = _resolved(tmp_path, repeat=3)
    assert {w.description.duration_bound_s for w in fixed.workloads} == {2.5}
