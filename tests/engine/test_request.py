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
