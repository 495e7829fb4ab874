"""What refuses a comparison of two runs and what is only said (analysis/comparable.py), and which targets
measured the same storage."""

from __future__ import annotations

import dataclasses

from support.factories import fio_workload, make_run

from mountbench.analysis.comparable import Facts, Storage, differences, refusals, storage_change, warnings
from mountbench.kinds.fiofiles import FileState
from mountbench.model import KindOptions


def _run(**host):
    run = make_run({("a", "w1"): [1.0, 2.0], ("a", "w2"): [1.0, 2.0]})
    return dataclasses.replace(run, host={**run.host, "machine_id": "m1", **host})


def test_the_same_run_twice_differs_in_nothing():
    assert differences(Facts.of(_run()), Facts.of(_run())) == ()


def test_machine_fio_workloads_and_file_state_refuse_the_rest_is_said():
    then = _run()
    now = _run(machine_id="m2", fio_version="fio-3.36", kernel="6.2", mountbench_version="0.2.0")
    size = fio_workload("w1", bs="8k")
    state = KindOptions((("file_state", FileState("steady")),))
    now = dataclasses.replace(now, workloads=(size, now.workloads[1]),
                              config=dataclasses.replace(now.config, kind_options=state))  # fmt: skip
    found = differences(Facts.of(then), Facts.of(now))
    assert [d.text for d in refusals(found)] == [
        "machine h → h (another machine of that name)",
        "fio fio-3.33 → fio-3.36",
        "workload w1 bs=4k → bs=8k",
        "file state per-round → steady",
    ]
    assert [d.text for d in warnings(found)] == ["kernel 6.1 → 6.2", "mountbench 0.1.0 → 0.2.0"]


def test_a_workload_only_one_run_ran_refuses_only_when_it_is_asked_for():
    then, now = _run(), _run()
    now = dataclasses.replace(now, workloads=now.workloads[:1])
    assert differences(Facts.of(then), Facts.of(now)) == ()
    (missing,) = differences(Facts.of(then), Facts.of(now), ["w1", "w2"])
    assert missing.refuses and missing.text == "workload w2 run → not run"


def test_without_a_machine_id_the_host_name_tells_machines_apart():
    then, now = _run(machine_id=""), _run(machine_id="", hostname="other")
    assert [d.text for d in differences(Facts.of(then), Facts.of(now))] == ["machine h → other"]


def test_storage_is_the_path_and_the_filesystem_there():
    tmpfs = Storage("/srv/x", "tmpfs", "tmpfs")
    assert storage_change(tmpfs, Storage("/srv/x", "tmpfs", "tmpfs")) == ""
    assert storage_change(tmpfs, Storage("/srv/y", "tmpfs", "tmpfs")) == "another path: /srv/x → /srv/y"
    assert storage_change(tmpfs, Storage("/srv/x", "ext4", "/dev/vdb")) == (
        "another filesystem under /srv/x: tmpfs → ext4 on /dev/vdb"
    )
    assert Storage("/srv/x", "ext4", "/dev/vdb").text == "/srv/x (ext4 on /dev/vdb)"


def test_other_presets_are_said_and_each_workload_compared_for_itself():
    then, now = _run(), _run()
    now = dataclasses.replace(now, config=dataclasses.replace(now.config, presets=("cdm",)))
    assert [d.text for d in differences(Facts.of(then), Facts.of(now))] == ["presets none → cdm"]
