"""The QEMU lab's first ETA learns from this machine's earlier lab runs (issue 37): the guest's
database is new every run, so the host hands the guest run what each (mount, workload) cost
before. The earlier run here is a real default lab run (6 mounts, quick, 108 samples, 30½
minutes of sampling; sshfs failed twice laying out its files), stored in tests/data/exports."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mountbench.cli.progress import LearnedEta
from mountbench.labs.history import earlier_runs
from mountbench.labs.qemu import DEFAULT_MOUNTS, parse_mount_spec
from mountbench.labs.qemu.guestrun import learnt_for_guest, learnt_json, stored_here
from mountbench.labs.qemu.mounts.guestmount import GuestMount
from mountbench.labs.qemu.mountscript import assign_slugs
from mountbench.model import PlanItem
from mountbench.records.export import read_document
from mountbench.store import Store

EXPORTS = Path(__file__).parents[2] / "data" / "exports"


def _here(run):
    """The run as this machine's own: brought home by a lab on this host."""
    return dataclasses.replace(run, host={**run.host, "hostname": stored_here()})


def _earlier(db):
    return earlier_runs(Store(db, writer=False), "qemu", "lab", stored_here())


def test_only_this_machines_lab_runs_are_read_and_a_missing_database_is_not_made(tmp_path):
    db = tmp_path / "results.sqlite"
    assert _earlier(db) == [] and not db.exists()
    (lab,) = read_document(EXPORTS / "lab-run.json")
    (tree,) = read_document(EXPORTS / "tree-run.json")
    with Store(db) as store:
        store.import_run(_here(lab))
        store.import_run(dataclasses.replace(_here(tree), command="mountbench lab --preset tree"))
    assert [run.id for run in _earlier(db)] == [lab.id]  # a plain run is no lab run, whatever its command says


def test_the_guest_runs_first_eta_is_what_the_lab_took_before():
    """The default lab's first ETA said "at most 302 s of I/O" (-84 %) and, after sshfs failed,
    5h12m (+1020 %) for about 30 minutes of sampling. Learnt from the earlier run, it is within
    ±50 % before any sample; the failed samples are no cost of their workload."""
    (run,) = read_document(EXPORTS / "lab-run.json")
    mounts = [GuestMount(spec, slug, "tag") for spec, slug in assign_slugs(DEFAULT_MOUNTS)]
    learnt = learnt_for_guest([run], mounts, run.workloads)
    assert {target for target, _ in learnt} == {m.slug for m in mounts}
    assert len(learnt) == len(mounts) * len(run.workloads)
    slug = {m.label: m.slug for m in mounts}
    failed = [s for s in run.samples if not s.ok]
    assert failed and all(learnt[(slug[s.target], s.workload)] < 60 for s in failed)  # not their 175 s
    plan = [PlanItem(s.round, 0, slug[s.target], s.workload, 2.8) for s in run.samples]
    eta = LearnedEta({w.name: w.kind for w in run.workloads}, learnt)
    eta.plan(plan)
    ordered = sorted(run.samples, key=lambda s: s.started_at)
    took = ordered[-1].started_at + ordered[-1].wall_s - ordered[0].started_at
    assert 0.5 * took <= eta.remaining(plan) <= 1.5 * took, (eta.remaining(plan), took)
    assert learnt_json({("9p", "seq"): 1.23456}) == '[["9p", "seq", 1.235]]'


def test_a_mount_with_other_options_learns_nothing_of_its_own():
    """A mount is the same mount when its label (type and every option) is: 9p with another
    msize is not the 9p measured before, and learns from the same workload on any mount only."""
    (run,) = read_document(EXPORTS / "lab-run.json")
    mounts = [GuestMount(spec, slug, "tag") for spec, slug in assign_slugs(DEFAULT_MOUNTS)]
    other = parse_mount_spec("9p:msize=65536")  # at the same guest path as the 9p measured, /mnt/9p
    assert other.label != mounts[0].label and mounts[0].slug == "9p"
    same = learnt_for_guest([run], mounts, run.workloads)
    moved = learnt_for_guest([run], [GuestMount(other, "9p", "tag"), *mounts[1:]], run.workloads)
    assert set(same) == set(moved)
    for workload in run.workloads:
        assert moved[("9p", workload.name)] != same[("9p", workload.name)]  # the other mounts' mean
        assert all(moved[(m.slug, workload.name)] == same[(m.slug, workload.name)] for m in mounts[1:])


def test_replayed_the_lab_runs_first_line_bounds_it_and_its_eta_follows_it():
    """Issue 37: the default lab run's first line said "at most 302 s of I/O" for 30½ minutes of
    sampling; with every layout at 2 MB/s, "302 s of I/O and 40m16s laying out" (+48 %), and its
    ETA said -58 % after the sixth sample. Replayed in the order it ran, through the plan the session
    makes (engine/session.py with_layouts, each mount at its filesystem's pace) and the bar's ETA:
    the first line is an upper bound within 25 %, and the ETA within 25 % after the first sample and
    from the sixth (every mount's first) to the last ten (sshfs failed twice laying out its files)."""
    from mountbench.engine.session import layout_paces, with_layouts
    from mountbench.fio.binary import FioInfo
    from mountbench.kinds.fio import FIO_FIXED_COST_S, FioRunner
    from mountbench.model import Prepared, TargetContext

    (run,) = read_document(EXPORTS / "lab-run.json")
    ordered = sorted(run.samples, key=lambda s: s.started_at)
    prepared = {
        (r.target.label, w.name): Prepared(
            w,
            r.target.label,
            "",
            (),
            False,
            w.description.duration_bound_s + FIO_FIXED_COST_S,
            w.description.space_bytes,
        )
        for r in run.targets
        for w in run.workloads
    }
    contexts = {r.target.label: TargetContext(r.target, r.info, Path(r.target.path)) for r in run.targets}
    items = [PlanItem(s.round, 0, s.target, s.workload, prepared[(s.target, s.workload)].estimate_s) for s in ordered]
    plan = with_layouts(items, prepared, {"fio": FioRunner(FioInfo("fio", ""))}, set(), layout_paces(contexts))
    start = ordered[0].started_at - 2.0  # the first sample's setup (it failed after 175 s) ran before it
    took = ordered[-1].started_at + ordered[-1].wall_s - start
    bound = sum(item.estimate_s for item in plan)
    assert took <= bound <= 1.25 * took, (bound, took)
    eta = LearnedEta({w.name: w.kind for w in run.workloads})
    eta.plan(plan)
    last, errors = start, {}
    for done, (sample, item) in enumerate(zip(ordered, plan, strict=True), 1):
        end = sample.started_at + sample.wall_s
        eta.record(item, end - last, sample.ok, sample.wall_s)
        last = end
        if done < len(plan):
            errors[done] = eta.remaining(plan[done:]) / (took - (end - start)) - 1
    checked = [1, *range(6, len(plan) - 10)]
    assert all(abs(errors[done]) <= 0.25 for done in checked), {d: round(errors[d], 2) for d in checked}
