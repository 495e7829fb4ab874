"""The first ETA learns before it is shown (issue 37): what each (target, workload) cost in this
machine's earlier runs, from the real tree run in tests/data/exports."""

from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path

from mountbench.cli.progress import LearnedEta
from mountbench.engine.history import item_costs, learnt_costs
from mountbench.model import PlanItem, Target
from mountbench.records.export import read_document

TREE = Path(__file__).parent.parent / "data" / "exports" / "tree-run.json"


def test_a_sample_costs_the_time_to_the_next_start_and_a_pause_is_no_cost():
    (run,) = read_document(TREE)
    ordered = sorted(run.samples, key=lambda s: s.started_at)
    costs = item_costs([run])
    assert sum(len(v) for v in costs.values()) == len(ordered)
    total = sum(sum(v) for v in costs.values())
    span = ordered[-1].started_at - ordered[0].started_at + ordered[-1].wall_s
    assert abs(total - span) < 1e-6, "the costs add up to the run's time from first start to last end"
    # a run resumed an hour later: the sample before the pause counts its own time, not the hour
    moved = [dataclasses.replace(s, started_at=s.started_at + 3600) if s.started_at > ordered[44].started_at else s
             for s in run.samples]  # fmt: skip
    paused = item_costs([dataclasses.replace(run, samples=tuple(moved))])
    assert max(max(v) for v in paused.values()) < 600


def test_learnt_costs_match_the_same_path_else_any_path_and_skip_what_was_never_run():
    (run,) = read_document(TREE)
    record = run.targets[1]
    here = Target("again", record.target.path)
    elsewhere = Target("new", "/somewhere/else")
    workloads = list(run.workloads)
    learnt = learnt_costs([run], [here, elsewhere], workloads)
    costs = item_costs([run])
    for workload in workloads:
        own = next(c for (path, key), c in costs.items() if path == record.target.path and key[0] == workload.name)
        assert learnt[("again", workload.name)] == statistics.fmean(own)  # an ETA adds costs up: the mean
        assert ("new", workload.name) in learnt  # the same workload on any path
    other = dataclasses.replace(workloads[0], name="never-run")
    assert ("again", "never-run") not in learnt_costs([run], [here], [other])


def test_the_first_eta_is_what_the_run_took_before_not_the_plans_bounds():
    """The plan's estimates are upper bounds (the tree preset: about 21m50s for a run of 3½
    minutes); with one earlier run the first ETA is within ±50 % of what that run took."""
    (run,) = read_document(TREE)
    targets = [record.target for record in run.targets]
    learnt = learnt_costs([run], targets, run.workloads)
    kinds = {w.name: w.kind for w in run.workloads}
    plan = [PlanItem(s.round, 0, s.target, s.workload, 60.0) for s in run.samples]
    eta = LearnedEta(kinds, learnt)
    eta.plan(plan)
    ordered = sorted(run.samples, key=lambda s: s.started_at)
    took = ordered[-1].started_at + ordered[-1].wall_s - ordered[0].started_at
    first = eta.remaining(plan)
    assert 0.5 * took <= first <= 1.5 * took, (first, took)
    assert sum(item.estimate_s for item in plan) > 3 * took  # what the first ETA said before
    # a workload never run here: its estimate scaled as its kind compared before
    unseen = LearnedEta(kinds, {k: v for k, v in learnt.items() if k[1] != run.workloads[0].name})
    unseen.plan(plan)
    item = next(i for i in plan if i.workload == run.workloads[0].name)
    assert unseen.expected(item) < item.estimate_s


def test_a_failed_sample_is_no_cost_of_its_workload():
    """A failure measured no work (sshfs failing after 175 s in the QEMU lab): its time is left out
    of what its (target, workload) is learnt to cost, and the other samples keep theirs."""
    (run,) = read_document(TREE)
    ordered = sorted(run.samples, key=lambda s: s.started_at)
    failed = ordered[0]
    broken = [dataclasses.replace(s, ok=False, error="preconditioning failed") if s is failed else s
              for s in run.samples]  # fmt: skip
    before, after = item_costs([run]), item_costs([dataclasses.replace(run, samples=tuple(broken))])
    assert sum(map(len, after.values())) == sum(map(len, before.values())) - 1
    path = next(r.target.path for r in run.targets if r.target.label == failed.target)
    key = next(k for (p, k) in before if str(p) == str(path) and k[0] == failed.workload)
    assert len(after.get((str(path), key), [])) == len(before[(str(path), key)]) - 1
