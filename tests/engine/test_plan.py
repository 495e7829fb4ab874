from collections import Counter

from mountbench.engine.plan import build_plan, pending_items, remaining_estimate


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


def test_warmup_rounds_come_first_and_leave_the_measured_order_alone():
    targets, workloads = ["a", "b"], ["x", "y"]
    plain = build_plan(targets, workloads, 3, seed=5, estimates={})
    warm = build_plan(targets, workloads, 3, seed=5, estimates={}, warmup=2)
    assert len(warm) == len(plain) + 2 * 4
    assert all(i.warmup for i in warm[:8]) and not any(i.warmup for i in warm[8:])
    assert warm[8:] == plain  # --warmup does not reshuffle what is measured
    assert [i.name for i in warm[:8:4]] == ["warm-up 1", "warm-up 2"] and warm[8].name == "round 1"
    for k in range(2):
        round_items = [(i.target, i.workload) for i in warm[4 * k : 4 * k + 4]]
        assert Counter(round_items) == Counter((t, w) for t in targets for w in workloads)


def test_pending_items_warm_up_again_only_the_pairs_with_work_left():
    plan = build_plan(["a", "b"], ["x"], 2, seed=1, estimates={}, warmup=1)
    assert pending_items(plan, set()) == plan
    done = {("a", "x", 0), ("a", "x", 1), ("b", "x", 0)}  # a is finished, b has round 2 left
    left = pending_items(plan, done)
    assert [(i.target, i.warmup) for i in left] == [("b", True), ("b", False)]
    assert left[1].round == 1


def test_targets_take_turns_within_a_workload_so_no_target_always_goes_first():
    """Issue 23: shuffled afresh each round, three rounds put one target first every time in a
    quarter of all runs; turned, each of two targets goes first in alternate rounds, in the
    planned rounds and in the rounds --until adds."""
    from mountbench.engine.plan import extra_round

    for seed in range(40):
        plan = build_plan(["a", "b"], ["w1", "w2"], 4, seed, {})
        for workload in ("w1", "w2"):
            firsts = [next(i.target for i in plan if i.round == r and i.workload == workload) for r in range(4)]
            assert firsts[0] != firsts[1] and firsts[0] == firsts[2] and firsts[1] == firsts[3], firsts
        added = extra_round(4, [("a", "w1"), ("b", "w1")], seed, {})
        assert added[0].target == firsts[0]  # round 5 turns on from round 4, as the plan would have
    three = build_plan(["a", "b", "c"], ["w"], 3, 7, {})
    orders = [[i.target for i in three if i.round == r] for r in range(3)]
    assert [o[0] for o in orders] == [orders[0][0], orders[0][1], orders[0][2]]  # each place once


def test_a_targets_layout_pace_follows_its_filesystem_type():
    """Issue 37: laying out working files at a slow mount's 2 MB/s everywhere made a local run's first
    line say 15 minutes for 107 s. Local filesystems lay out at a local disk's pace and RAM at RAM's;
    a network, VM or FUSE mount (fuseblk too), or one not known to be local, keeps the slow bound."""
    from mountbench.engine.plan import LOCAL_PACE, RAM_PACE, SLOW_PACE, layout_pace

    assert SLOW_PACE.rate_bps < LOCAL_PACE.rate_bps < RAM_PACE.rate_bps
    assert {fs: layout_pace(fs) for fs in ("tmpfs", "ramfs")} == {"tmpfs": RAM_PACE, "ramfs": RAM_PACE}
    assert all(layout_pace(fs) == LOCAL_PACE for fs in ("ext4", "xfs", "btrfs", "overlay", "apfs"))
    slow = ("fuse.sshfs", "fuse.rclone", "fuse.bindfs", "fuseblk", "9p", "virtiofs", "nfs", "nfs4", "cifs", "", "?")
    assert all(layout_pace(fs) == SLOW_PACE for fs in slow)
