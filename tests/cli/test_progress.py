"""The ETA learns from the samples already taken (issue 25), and the options that take durations."""

from __future__ import annotations

import statistics

import click
import pytest

from mountbench.cli.options import Seconds
from mountbench.cli.progress import LearnedEta
from mountbench.model import PlanItem


def _item(target: str, workload: str, estimate: float, round_: int = 0) -> PlanItem:
    return PlanItem(round_, 0, target, workload, estimate)


def test_eta_uses_what_each_cell_took_not_the_plan():
    """The lab's tree run: the plan said 56 s of I/O; extraction on the slow mount takes 30 s a sample."""
    eta = LearnedEta({"extract": "tree", "walk": "tree", "seq": "fio"})
    plan = [_item(t, w, 5.0, r) for r in range(3) for t in ("ram", "nfs") for w in ("extract", "walk", "seq")]
    assert eta.remaining(plan) == pytest.approx(5.0 * len(plan))  # nothing measured yet: the plan's guess
    eta.record(_item("nfs", "extract", 5.0), 30.0)
    eta.record(_item("ram", "extract", 5.0), 2.0)
    left = [_item("nfs", "extract", 5.0, 1), _item("nfs", "walk", 5.0, 1), _item("ram", "seq", 5.0, 1)]
    # own cell: 30 s; same kind on the same target: 5 s x (30/5); a kind not measured yet: its estimate
    # (issue 37: a tree run's fio churn took a twentieth of its bound, its tree actions more than theirs)
    assert eta.expected(left[0]) == 30.0
    assert eta.expected(left[1]) == pytest.approx(30.0)
    assert eta.expected(left[2]) == pytest.approx(5.0)
    assert eta.remaining(left) == pytest.approx(65.0)
    # the same kind on another target only: as that kind compared there
    assert eta.expected(_item("ssd", "walk", 5.0, 1)) == pytest.approx(5.0 * statistics.median([30 / 5, 2 / 5]))
    eta.record(_item("nfs", "extract", 5.0), 20.0)
    assert eta.expected(left[0]) == 25.0  # the median of what it took


@pytest.mark.parametrize(("text", "seconds"), [("2.5", 2.5), ("1s", 1.0), ("500ms", 0.5), ("2m", 120.0), (".5", 0.5)])
def test_runtime_takes_a_unit_as_budget_does(text, seconds):
    assert Seconds(0.1).convert(text, None, None) == seconds


@pytest.mark.parametrize("text", ["1x", "", "inf", "0.05", "-1"])
def test_runtime_refuses_what_is_no_duration(text):
    with pytest.raises(click.BadParameter):
        Seconds(0.1).convert(text, None, None)


def test_rounds_added_by_until_grow_the_total_so_n_never_passes_it():
    """`--until`/`--budget` add rounds after the plan: the piped counter read '40/36' (issue 23)."""
    import io

    from rich.console import Console

    from mountbench.cli.progress import ProgressEvents
    from mountbench.model import Sample

    stream = io.StringIO()
    events = ProgressEvents(Console(file=stream, width=200))
    plan = [_item(t, "seq", 1.0, r) for r in range(2) for t in ("a", "b")]
    events.on_start("r", plan, plan)

    def take(item: PlanItem, total: int, eta: float) -> None:
        events.on_sample_start(item, events.done, total, eta)
        events.on_sample_done(item, Sample(item.target, item.workload, item.round, True, {}))

    for item in plan:
        take(item, 4, 1.0)
    added = [_item(t, "seq", 1.0, 2) for t in ("a", "b")]  # the session grew its total by the added round
    for item in added:
        take(item, 6, 30.0)
    lines = [line.strip() for line in stream.getvalue().splitlines() if "/" in line and "round" in line]
    counts = [line.split()[0] for line in lines]
    assert counts == ["1/4", "2/4", "3/4", "4/4", "5/6", "6/6"], lines
    # never "done" after a sample: the run still cleans up and reports (issue 48)
    assert lines[3].endswith("last sample taken") and "ETA" in lines[4] and lines[5].endswith("last sample taken")


def test_a_run_that_adds_rounds_is_not_done_when_its_plan_is_and_counts_its_bound_down():
    """Under --budget 3m the piped line said '36/36 ... done' at 1m50s and the run went on to 181 s;
    'ETA 3 s' was printed with 73 s left (issue 31). The time is said before the first sample; the ETA is the
    session's bound (the rounds it may still add, within the budget: engine/session.py), counted down."""
    import io

    from rich.console import Console

    from mountbench.cli.progress import Pace, ProgressEvents
    from mountbench.model import Sample

    stream = io.StringIO()
    events = ProgressEvents(Console(file=stream, width=300), pace=Pace(adds_rounds=True, budget_s=180.0))
    plan = [_item(t, "seq", 1.0, r) for r in range(2) for t in ("a", "b")]
    events.on_start("r", plan, plan)
    for item in plan:
        events.on_sample_start(item, events.done, 4, 180.0)
        events.on_sample_done(item, Sample(item.target, item.workload, item.round, True, {}))
    lines = stream.getvalue().splitlines()
    assert "ends within its --budget of 180 s" in lines[0]
    last = lines[-1]
    assert "done" not in last and "rounds for undecided comparisons may follow" in last, last
    eta = last.rsplit("ETA ≤ ", 1)[1]
    assert eta in ("2m59s", "3m00s"), last  # the bound counted down, not the planned rounds' 0 s


def test_a_default_budget_says_its_time_and_that_the_planned_rounds_are_all_taken():
    import io

    from rich.console import Console

    from mountbench.cli.progress import Pace, ProgressEvents

    stream = io.StringIO()
    events = ProgressEvents(Console(file=stream, width=300), pace=Pace(True, 54.0, default_budget=True))
    plan = [_item("a", "seq", 1.0)]
    events.on_start("r", plan, plan)
    assert "it takes about 54.0 s (the default budget: the planned rounds, then" in stream.getvalue()


def test_piped_progress_lines_fit_80_columns_and_wrap_between_fields():
    """Issue 37: piped progress lines reached 84 columns. Each sample's line fits the width (80
    when piped), wrapped between its fields (n/N and round, target, workload and value, time)."""
    import io

    from rich.console import Console

    from mountbench.cli.progress import Pace, ProgressEvents
    from mountbench.model import Sample

    stream = io.StringIO()
    events = ProgressEvents(Console(file=stream, width=80), pace=Pace(adds_rounds=True, budget_s=60.0))
    long_target = "a-rather-long-target-label-for-a-share"
    plan = [_item(t, "seq1m-q8-write", 1.0, r) for r in range(2) for t in ("ram", long_target)]
    events.on_start("r", plan, plan)
    for item in plan:
        events.on_sample_start(item, events.done, len(plan), 1.0)
        events.on_sample_done(item, Sample(item.target, item.workload, item.round, True, {}))
    lines = stream.getvalue().splitlines()
    assert lines and max(len(line) for line in lines[1:]) <= 80, lines
    text = " ".join(stream.getvalue().split())
    assert f"· {long_target} · seq1m-q8-write: ok ·" in text and "planned rounds taken" in text
    assert "1/4 round 1 · ram · seq1m-q8-write: ok · 0 s elapsed, ETA" in text


def test_the_bar_says_what_the_wait_after_the_last_sample_is():
    """Issue 37: after the last sample the bar sat at '60/60 ETA –' for 24 s, saying nothing."""
    import io

    from rich.console import Console

    from mountbench.cli.progress import Pace, ProgressEvents
    from mountbench.model import Sample

    for pace, said in ((Pace(), "removing the run's scratch directories"), (Pace(adds_rounds=True), "another round")):
        events = ProgressEvents(Console(file=io.StringIO(), width=100, force_terminal=True), pace=pace)
        plan = [_item(t, "seq", 1.0) for t in ("a", "b")]
        events.on_start("r", plan, plan)
        for item in plan:
            events.on_sample_start(item, events.done, len(plan), 1.0)
            events.on_sample_done(item, Sample(item.target, item.workload, item.round, True, {}))
        assert events.progress is not None and said in events.progress.tasks[0].description
        events.on_finish("r", "complete")


def test_an_eta_from_the_plans_bounds_alone_is_said_as_an_upper_bound():
    """Issue 37: the tree preset's first ETA was 14m33s, its plan's bounds, for a run of under 4
    minutes. With nothing like the run measured here the first line says "at most" and the bar
    "ETA ≤"; once a sample is taken (or with costs from earlier runs) the ETA is learnt."""
    import io

    from rich.console import Console

    from mountbench.cli.progress import PlanEtaColumn, ProgressEvents
    from mountbench.model import Sample

    plan = [_item(t, "seq", 60.0) for t in ("a", "b")]
    for learnt, said in (({}, "at most 120 s of I/O"), ({("a", "seq"): 5.0, ("b", "seq"): 5.0}, "about 10 s as")):
        events = ProgressEvents(
            Console(file=io.StringIO(), width=100, force_terminal=True, color_system=None), learnt=learnt
        )
        events.on_start("r", plan, plan)
        assert said in events.console.file.getvalue()
        task = events.progress.tasks[0]
        assert PlanEtaColumn().render(task).plain == ("ETA ≤2m00s" if not learnt else "ETA 10 s")
        events.on_sample_start(plan[0], 0, 2, 60.0)
        events.on_sample_done(plan[0], Sample("a", "seq", 0, True, {}))
        assert "≤" not in PlanEtaColumn().render(events.progress.tasks[0]).plain
        events.on_finish("r", "complete")


def test_a_failed_sample_is_no_pace_for_the_samples_still_to_run():
    """Issue 37: in the QEMU lab sshfs failed after 175 s laying out its working files, and the first
    ETA scaled every fio sample on every mount by it (5h12m for 28 minutes). A failure's time is
    spent, counted once by the clock, but sets no cost or ratio for any other sample."""
    eta = LearnedEta({"seq": "fio", "rand": "fio"})
    plan = [_item(t, w, 3.0, r) for r in range(3) for t in ("sshfs", "nfs") for w in ("seq", "rand")]
    eta.record(plan[0], 175.0, ok=False)
    assert not eta.knows  # nothing measured: the ETA is still the plan's bound, said as one
    assert eta.remaining(plan[1:]) == pytest.approx(3.0 * (len(plan) - 1))
    assert eta.expected(_item("sshfs", "seq", 3.0, 1)) == 3.0  # its own later rounds too: a failure is no measure
    eta.record(plan[1], 6.0)  # a sample that worked is a pace, as before
    assert eta.expected(_item("sshfs", "seq", 3.0, 1)) == pytest.approx(6.0)
    assert eta.expected(_item("nfs", "rand", 3.0, 1)) == pytest.approx(6.0)


def test_the_bar_after_a_failed_first_sample_keeps_the_plans_bound():
    import io

    from rich.console import Console

    from mountbench.cli.progress import PlanEtaColumn, ProgressEvents
    from mountbench.model import Sample

    plan = [_item(t, "seq", 10.0, r) for r in range(2) for t in ("sshfs", "nfs")]
    events = ProgressEvents(Console(file=io.StringIO(), width=100, force_terminal=True, color_system=None))
    events.on_start("r", plan, plan)
    events.on_sample_start(plan[0], 0, len(plan), 40.0)
    events.last_end -= 175.0  # the failed sample took 175 s (its setup timed out)
    events.on_sample_done(plan[0], Sample("sshfs", "seq", 0, False, {}, error="preconditioning failed"))
    assert PlanEtaColumn().render(events.progress.tasks[0]).plain == "ETA ≤30 s"  # not 3 × 175 s scaled
    events.on_finish("r", "complete")


def test_a_layouts_pace_and_a_timed_parts_are_learnt_apart():
    """A sample that lays out working files (engine/plan.py LaysOut: the layout at its bound) took 3 s
    on tmpfs for 54 s planned; the samples after it in the round lay out nothing, and 3/54 of their
    estimates would be 50 ms each."""
    from mountbench.engine.plan import LaysOut

    def laying(target: str, workload: str, round_: int) -> LaysOut:
        return LaysOut(round_, 0, target, workload, 54.5, layout_s=53.7)

    eta = LearnedEta({"write": "fio", "read": "fio"})
    plan = [
        laying("ram", "write", 0), _item("ram", "read", 0.8, 0),
        laying("ram", "read", 1), _item("ram", "write", 0.8, 1),
        laying("sshfs", "write", 0), _item("sshfs", "write", 0.8, 1),
    ]  # fmt: skip
    eta.plan(plan)
    assert [eta.lays_out(item) for item in plan] == [True, False, True, False, True, False]
    eta.record(plan[0], 3.0)
    assert eta.expected(plan[1]) == pytest.approx(0.8)  # no pace for a timed part yet: its estimate
    assert eta.expected(plan[2]) == pytest.approx(54.5 * 3.0 / 54.5)  # another workload's layout: that pace
    eta.record(plan[1], 1.6)
    assert eta.expected(plan[3]) == pytest.approx(1.6)  # as the timed parts went: 2× their estimate
    assert eta.expected(plan[4]) == 54.5  # another mount's layout says nothing of this one's: the bound
    assert eta.expected(plan[5]) == pytest.approx(1.6)  # its timed part: as the other mount's went


def test_a_layouts_timed_part_paces_the_timed_parts():
    """The first sample on every target lays out its files, so until one that lays out nothing ran
    the timed parts kept their bounds (the QEMU lab's emulated guest took 2-9× them: the replay said
    -58 % after its sixth sample). The timed part of a sample that laid out is a timed part's pace."""
    from mountbench.engine.plan import LaysOut

    eta = LearnedEta({"write": "fio", "read": "fio"})
    first = LaysOut(0, 0, "9p", "write", 2.8 + 134.2, layout_s=134.2)
    later = [_item("9p", "read", 2.8), _item("disk", "read", 2.8, 1)]
    eta.record(first, 9.3, timed_s=5.6)  # 9.3 s in all, its timed part 5.6 s: twice its 2.8 s bound
    assert [eta.expected(item) for item in later] == [pytest.approx(5.6), pytest.approx(5.6)]
    assert eta.expected(LaysOut(1, 0, "9p", "write", 137.0, layout_s=134.2)) == pytest.approx(9.3)
    assert eta.expected(LaysOut(0, 0, "sshfs", "read", 137.0, layout_s=134.2)) == 137.0  # its own bound


def test_a_failed_layout_is_laid_out_again_by_the_next_sample_on_its_target():
    """Issue 37's lab run: sshfs's first sample failed laying out its files (175 s), and the next sample
    on sshfs laid them out again (139 s in a sample the plan counted 2.8 s for); recorded as a timed
    part, that set the pace of the same workload in the later rounds. The layout the failed sample left
    is owed by the next sample on its target in that round, in the ETA and in what it teaches."""
    from mountbench.engine.plan import LaysOut

    eta = LearnedEta({"read": "fio", "write": "fio"})
    failed = LaysOut(0, 0, "sshfs", "read", 137.0, layout_s=134.2)
    plan = [_item("9p", "read", 2.8), _item("sshfs", "write", 2.8), _item("sshfs", "read", 2.8)]
    assert eta.remaining(plan) == pytest.approx(3 * 2.8)
    eta.record(failed, 175.0, ok=False)
    assert eta.remaining(plan) == pytest.approx(3 * 2.8 + 134.2)  # owed once, by the first on sshfs
    assert eta.expected(plan[1]) == pytest.approx(137.0) and eta.expected(plan[0]) == pytest.approx(2.8)
    assert eta.expected(_item("sshfs", "write", 2.8, 1)) == pytest.approx(2.8)  # another round laid out anew
    eta.record(plan[1], 139.0, timed_s=4.0)  # the layout, then its timed part
    assert eta.owed == {}
    assert eta.expected(_item("sshfs", "write", 2.8, 1)) == pytest.approx(4.0)  # a timed part, not 139 s
    assert eta.expected(LaysOut(1, 0, "sshfs", "read", 137.0, layout_s=134.2)) == pytest.approx(139.0)


def test_a_workload_with_no_runtime_of_its_own_is_paced_like_the_samples_taken():
    """Issue 48: the tree preset's first ETA was 13m05s for 288 s: its churn jobs (fio, no runtime: 60 s
    placeholders) kept their placeholders while the tree actions' pace was learnt. Until its own kind is
    measured, a sample with no bound of its own is expected to take what the samples so far took (their
    median), and the opening line says those have no runtime instead of calling a placeholder a bound."""
    import io

    from rich.console import Console

    from mountbench.cli.progress import ProgressEvents
    from mountbench.engine.workloads import assemble

    workloads = assemble(["tree"], [])
    stream = io.StringIO()
    events = ProgressEvents(Console(file=stream, width=300), workloads)
    plan = [_item("a", w.name, 60.0 if w.kind == "fio" else 3.1) for w in workloads]
    events.on_start("r", plan, plan)
    assert "none with a runtime of its own (their time is learnt from the first samples)" in stream.getvalue()
    assert "at most" not in stream.getvalue()
    first = plan[0]
    events.eta.record(first, 0.8)
    churn = next(item for item in plan if item.workload.startswith("churn"))
    assert events.eta.expected(churn) == pytest.approx(0.8)  # not its 60 s placeholder
    assert events.eta.remaining(plan[1:]) < 20


def test_until_alone_says_the_planned_rounds_time_and_the_most_its_rounds_take():
    """Issue 48: `--until 10%` said "about 45 s" (its planned rounds) for 218 s."""
    import io

    from rich.console import Console

    from mountbench.cli.progress import Pace, ProgressEvents
    from mountbench.model import RunOptions

    stream = io.StringIO()
    events = ProgressEvents(Console(file=stream, width=300), pace=Pace.of(RunOptions(until=0.1)))
    plan = [_item(t, "seq", 1.0, r) for r in range(3) for t in ("a", "b")]
    events.on_start("r", plan, plan)
    said = stream.getvalue()
    assert "the 3 planned rounds about 6 s" in said and "at most 24 s if comparisons stay undecided" in said


def test_a_first_sample_that_laid_out_its_files_paces_the_samples_with_no_runtime_too():
    """The tree preset's first sample was its churn (fio, laying out its files): with no sample that laid out
    nothing, the samples with no runtime of their own kept their placeholders (first ETA 8m34s for 50 s)."""
    from mountbench.cli.progress import LearnedEta
    from mountbench.engine.plan import LaysOut

    eta = LearnedEta({"churn": "fio", "extract": "tree"}, unbounded=frozenset({"churn", "extract"}))
    eta.record(LaysOut(0, 0, "a", "churn", 60.1, layout_s=0.1), 0.5)
    assert eta.expected(_item("b", "extract", 3.1)) == pytest.approx(0.5)
    assert eta.expected(LaysOut(0, 0, "b", "churn", 60.1, layout_s=0.1)) == pytest.approx(0.5)
