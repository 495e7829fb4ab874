"""The cloud lab's first ETA learns from this machine's earlier cloud-lab runs (issue 36: it knew
only the plan's estimates until each mount had taken a sample, and jumped as each did). A mount is
the same target when its label, mode, RTT and bandwidth are; its path is new every run."""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path

from support.factories import fio_workload, make_run

from mountbench.labfacts import CloudLabFacts
from mountbench.labs import history
from mountbench.labs.cloud.cloudrun import learnt_here
from mountbench.model import RunData, Sample, Target
from mountbench.probefacts import CloudProbe, CloudTarget
from mountbench.store import Store

WORKLOAD = fio_workload("random-read")
THEN = (CloudTarget("local", None, None), CloudTarget("off-20ms", "off", 20, 12_500),
        CloudTarget("full-20ms", "full", 20, 12_500))  # fmt: skip


def _earlier_run(tmp: Path, described: tuple[CloudTarget, ...] = THEN) -> RunData:
    """A stored cloud-lab run of one round: local 2 s, off-20ms 35 s, full-20ms 13 s a sample."""
    run = make_run({(t.label, WORKLOAD.name): [1.0] for t in described}, workloads=[WORKLOAD])
    started, samples = 1.7e9, []
    for target, cost in zip(described, (2.0, 35.0, 13.0), strict=True):
        samples.append(Sample(target.label, WORKLOAD.name, 0, True, {"read.iops": 20.0}, (), started_at=started,
                              wall_s=cost - 1))  # fmt: skip
        started += cost
    samples.append(Sample("local", WORKLOAD.name, 1, True, {"read.iops": 20.0}, (), started_at=started, wall_s=2))
    targets = tuple(dataclasses.replace(r, target=Target(r.target.label, str(tmp / "old" / r.target.label)))
                    for r in run.targets)  # fmt: skip
    probe = CloudProbe(described, (), 1, 10.0)
    config = dataclasses.replace(run.config, lab=CloudLabFacts(probe))
    host = {**run.host, "hostname": socket.gethostname()}  # this machine's
    return dataclasses.replace(run, command="mountbench cloudlab", config=config, targets=targets, host=host,
                               samples=tuple(samples))  # fmt: skip


def _now(tmp: Path) -> list[Target]:
    return [Target(t.label, str(tmp / "new" / t.label)) for t in THEN]


def test_the_first_eta_learns_each_mounts_cost_from_the_stored_runs_made_alike(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    assert learnt_here(Store(db), _now(tmp_path), [WORKLOAD], THEN) == {}  # no database: none made
    assert not db.exists()
    with Store(db) as store:
        store.import_run(_earlier_run(tmp_path))
        plain = dataclasses.replace(_earlier_run(tmp_path), id="plain", config=dataclasses.replace(
            _earlier_run(tmp_path).config, lab=None))  # fmt: skip
        store.import_run(plain)  # a run stored by the cloudlab command without its facts: not learnt from
        assert [run.id for run in history.earlier_runs(store, "cloud", "cloudlab")] == [_earlier_run(tmp_path).id]
        learnt = learnt_here(store, _now(tmp_path), [WORKLOAD], THEN)
        assert learnt == {("local", "random-read"): 2.0, ("off-20ms", "random-read"): 35.0,
                          ("full-20ms", "random-read"): 13.0}  # fmt: skip
        other_wire = tuple(dataclasses.replace(t, bandwidth_kbps=None) for t in THEN)  # --bandwidth 0 this time
        # a mount made otherwise is not the one measured before: only the local disk's cost is its own then
        otherwise = learnt_here(store, _now(tmp_path), [WORKLOAD], other_wire)
        assert otherwise == {(t.label, "random-read"): 2.0 for t in THEN}
