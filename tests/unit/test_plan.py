from collections import Counter

from mountbench.plan import build_plan, remaining_estimate


def test_every_round_runs_each_pair_once_in_a_seeded_order():
    targets, workloads = ["a", "b", "c"], ["w1", "w2"]
    plan = build_plan(targets, workloads, 4, seed=7, estimates={})
    assert len(plan) == 24
    for r in range(4):
        pairs = [(i.target, i.workload) for i in plan if i.round == r]
        assert Counter(pairs) == Counter((t, w) for t in targets for w in workloads)
    assert plan == build_plan(targets, workloads, 4, seed=7, estimates={})
    orders = {tuple((i.target, i.workload) for i in plan if i.round == r) for r in range(4)}
    assert len(orders) > 1  # shuffled, not the same order every round


def test_different_seeds_give_different_orders():
    a = build_plan(["a", "b", "c"], ["x", "y", "z"], 2, seed=1, estimates={})
    b = build_plan(["a", "b", "c"], ["x", "y", "z"], 2, seed=2, estimates={})
    assert [(i.target, i.workload) for i in a] != [(i.target, i.workload) for i in b]


def test_eta_is_corrected_by_what_finished():
    plan = build_plan(["a"], ["x"], 4, seed=0, estimates={("a", "x"): 2.0})
    assert remaining_estimate(plan, 0, 0) == 8.0
    assert remaining_estimate(plan[2:], spent_s=6.0, spent_estimate_s=4.0) == 6.0
