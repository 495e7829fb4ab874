"""--budget fits the runtime of the workloads whose kind takes one (WorkloadKind.takes_runtime)
and counts the others at their own estimate."""

from __future__ import annotations

from mountbench.engine.budget import MIN_RUNTIME_S, BudgetPlan, plan_runtime
from mountbench.engine.workloads import assemble


def test_workloads_whose_kind_takes_no_runtime_are_left_alone() -> None:
    startup = assemble(["startup"], [])
    assert plan_runtime(startup, targets=2, rounds=3, budget_s=5) == BudgetPlan(None, "")


def test_the_fio_jobs_share_what_the_rest_leaves() -> None:
    quick = assemble(["quick"], [])
    roomy = plan_runtime(quick, targets=2, rounds=3, budget_s=3600)
    fitted = plan_runtime(quick, targets=2, rounds=3, budget_s=120)
    tight = plan_runtime(quick, targets=2, rounds=3, budget_s=5)
    assert roomy == BudgetPlan(None, "")
    assert fitted.runtime_s is not None and fitted.runtime_s > MIN_RUNTIME_S and not fitted.note
    assert tight.runtime_s == MIN_RUNTIME_S and "tight" in tight.note


def test_a_default_budget_grows_with_the_targets() -> None:
    """The quick preset's 36 s is for two targets; three starved (1-2 samples a cell, issue 31)."""
    from mountbench.engine.budget import default_budget

    assert default_budget(36, 2) == 36
    assert default_budget(36, 3) == 54
    assert default_budget(36, 5) == 90
    assert default_budget(36, 1) == 36
