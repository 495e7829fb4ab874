"""The one run codec: round trips, and runs written by earlier versions (untyped config,
workloads without a description) still load, from an export file and from a store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support.factories import DEFAULTS, make_run

from mountbench.kinds import resolved_options
from mountbench.kinds.fiofiles import FileState
from mountbench.kinds.startup import AppChoice, chosen_app
from mountbench.kinds.tree import TreeChoice, chosen_tree
from mountbench.model import CONFIG_VERSION, KindOptions, RunConfig
from mountbench.records.codec import (
    config_from_dict,
    config_to_dict,
    options_from_dict,
    options_to_dict,
    run_from_dict,
    run_to_dict,
)
from mountbench.records.export import read_document
from mountbench.store import Store

OLD_EXPORT = Path(__file__).parents[1] / "data" / "exports" / "run-format-1.2.json"


def test_a_run_survives_the_codec_whole():
    run = make_run({("a", "w"): [1.0, 2.0], ("b", "w"): [3.0, 4.0]})
    again = run_from_dict(json.loads(json.dumps(run_to_dict(run, with_raw=True))))
    assert again == run and again.config == run.config
    assert again.workloads[0].description == run.workloads[0].description
    assert [s.metrics for s in again.samples] == [s.metrics for s in run.samples]


def test_config_round_trip_keeps_every_field():
    config = RunConfig(repeat=5, seed=9, baseline="ram", warmup=1, drop_caches="never", keep=True,
                       presets=("quick",), job_files=("/j.fio",), only=("rnd*",), size=2**30, runtime=2.5,
                       kind_options=resolved_options(KindOptions.of({"tree": TreeChoice(profile="tiny", seed=1)})),
                       default_targets=True)  # fmt: skip
    data = config_to_dict(config)
    assert data["version"] == CONFIG_VERSION
    assert config_from_dict(json.loads(json.dumps(data))) == config


def test_the_kinds_options_are_stored_under_the_keys_they_always_had():
    """The kinds declare their options (kinds/), and a stored config keeps each under the key it had
    when the option was a field of RunOptions: runs stored before load, and runs stored now load there."""
    given = KindOptions.of({"tree": TreeChoice(tarball="/t.tar"), "file_state": FileState("steady")})
    data = config_to_dict(RunConfig(repeat=1, seed=1, baseline="a", kind_options=resolved_options(given)))
    assert (data["tree"], data["file_state"], data["app"]) == ({"tarball": "/t.tar"}, "steady", None)
    assert "kind_options" not in data
    defaults = config_to_dict(RunConfig(repeat=1, seed=1, baseline="a"))
    assert (defaults["tree"], defaults["file_state"], defaults["app"]) == (None, "per-round", None)
    before = config_from_dict({k: v for k, v in defaults.items() if k != "file_state"})  # before --file-state
    assert before.kind_options.get("file_state") == FileState("reused")


def test_a_version_1_config_is_read_with_defaults():
    old = {"targets": [{"label": "ram", "path": "/dev/shm"}], "repeat": 3, "seed": 7, "baseline": "ram",
           "drop_caches": "auto", "keep": False, "presets": ["quick"], "job_files": [], "size": None,
           "runtime": 0.3, "tree": {"profile": "tiny", "seed": 1}, "default_targets": False}  # fmt: skip
    config = config_from_dict(old)
    assert (config.repeat, config.seed, config.baseline, config.warmup, config.runtime) == (3, 7, "ram", 0, 0.3)
    assert chosen_tree(config.kind_options) == TreeChoice(profile="tiny", seed=1)
    assert config_from_dict({**old, "warmup": "two"}).warmup == 0  # damaged, descriptive only


def test_a_config_from_a_newer_version_is_refused():
    with pytest.raises(ValueError, match="newer"):
        config_from_dict({"version": CONFIG_VERSION + 1, "repeat": 1, "seed": 1, "baseline": "a"})


def test_options_round_trip():
    from mountbench.model import RunOptions

    tree = KindOptions.of({"tree": TreeChoice(tarball="/t.tar")})
    options = RunOptions(presets=("tree",), kind_options=tree, repeat=4, seed=None, size=10)
    assert options_from_dict(json.loads(json.dumps(options_to_dict(options)))) == options
    app = KindOptions.of({"app": AppChoice(tree="/app", command="java -jar a")})
    watched = RunOptions(presets=("s1",), watch=("sshfs", "4242"), kind_options=app)
    assert options_from_dict(json.loads(json.dumps(options_to_dict(watched)))) == watched


def test_watch_and_app_are_recorded_and_default_for_older_runs():
    app = KindOptions.of({"app": AppChoice(command="true")})
    config = RunConfig(repeat=1, seed=1, baseline="a", watch=("sshfs",), kind_options=app)
    again = config_from_dict(json.loads(json.dumps(config_to_dict(config))))
    assert again.watch == ("sshfs",) and chosen_app(again.kind_options) == AppChoice(tree=None, command="true")
    older = config_to_dict(RunConfig(repeat=1, seed=1, baseline="a"))
    del older["watch"], older["app"]
    assert config_from_dict(older).watch == () and chosen_app(config_from_dict(older).kind_options) is None


def test_an_export_of_format_1_2_loads_with_descriptions_derived():
    (run,) = read_document(OLD_EXPORT)
    assert run.config.repeat == 3 and run.config.baseline == "ram"
    by_name = {w.name: w for w in run.workloads}
    assert by_name["seq1m-q8-write"].description.headline[:2] == ("read.bw", "write.bw")
    assert by_name["seq1m-q8-write"].description.directions == ("write",)
    assert by_name["rnd4k-q1-read"].description.block_size == 4096
    assert by_name["extract"].description.headline == ("wall",)
    assert "action=extract" in by_name["extract"].description.summary


def test_a_store_written_by_an_earlier_version_still_loads(tmp_path):
    (old_run,) = read_document(OLD_EXPORT)
    db = tmp_path / "old.sqlite"
    with Store(db) as store:
        store.import_run(old_run)
    # rewrite the JSON columns as mountbench 0.1 wrote them: untyped config, no descriptions
    raw = json.loads(OLD_EXPORT.read_text())["runs"][0]
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE runs SET config = ?", (json.dumps(raw["config"]),))
        for workload in raw["workloads"]:
            assert "description" not in workload
            connection.execute(
                "UPDATE workloads SET workload = ? WHERE name = ?", (json.dumps(workload), workload["name"])
            )
    with Store(db) as store:
        loaded = store.load_run("last")
    assert loaded.config == old_run.config
    assert [w.description for w in loaded.workloads] == [w.description for w in old_run.workloads]


def test_sweeps_survive_config_and_options_and_old_runs_have_none():
    from mountbench.fio.sweeps import parse_sweep
    from mountbench.model import RunOptions

    axes = (parse_sweep("bs=1k..16M"), parse_sweep("iodepth=1,8"))
    config = RunConfig(repeat=3, seed=1, baseline="a", sweeps=axes)
    again = config_from_dict(json.loads(json.dumps(config_to_dict(config))))
    assert again.sweeps == axes and again.sweeps[0].text == "bs=1k..16M"
    options = RunOptions(presets=("s3",), sweeps=axes)
    assert options_from_dict(json.loads(json.dumps(options_to_dict(options)))) == options
    assert config_from_dict({"version": 2, "repeat": 3, "seed": 1, "baseline": "a"}).sweeps == ()
    assert options_from_dict({"presets": ["quick"]}).sweeps == ()


def test_a_lab_runs_probe_survives_the_codec_and_older_lab_runs_have_none():
    from mountbench.labfacts import QemuLabFacts
    from mountbench.probefacts import LabProbe, MountProbe

    probe = LabProbe((MountProbe("9p cache=none", "/mnt/9p", True, errors=("x",)),), repeat=2, timeout_s=1.5)
    lab = QemuLabFacts(accel="tcg", probe=probe)
    config = RunConfig(repeat=1, seed=1, baseline="9p", lab=lab, kind_options=DEFAULTS)
    stored = json.loads(json.dumps(config_to_dict(config)))
    assert stored["lab"]["name"] == "qemu" and "cloud" not in stored["lab"]
    again = config_from_dict(stored)
    assert again == config and isinstance(again.lab, QemuLabFacts)
    assert again.lab.probe == probe
    older = config_to_dict(RunConfig(repeat=1, seed=1, baseline="9p", lab=QemuLabFacts(accel="tcg")))
    assert "probe" not in older["lab"]  # a lab run without --probe is stored as before
    assert config_from_dict(older).lab.probe is None  # type: ignore[union-attr]


def test_a_cloud_lab_run_stores_its_own_facts_and_none_of_the_qemu_labs():
    from mountbench.labfacts import CloudLabFacts
    from mountbench.probefacts import CloudProbe

    probe = CloudProbe.from_dict({"targets": [{"label": "off-0ms", "mode": "off", "rtt_ms": 0}], "mounts": [],
                                  "repeat": 1, "timeout_s": 5.0, "tools": {"rclone": "v1"}})  # fmt: skip
    config = RunConfig(repeat=1, seed=1, baseline="local", lab=CloudLabFacts(probe), kind_options=DEFAULTS)
    stored = json.loads(json.dumps(config_to_dict(config)))
    assert stored["lab"] == {"name": "cloud", "probe": probe.to_dict()}
    assert config_from_dict(stored) == config


# How mountbench 0.2 stored lab facts: one record with both labs' fields and no "name".
OLD_QEMU_LAB = {"accel": "tcg", "accel_reason": "no /dev/kvm", "emulated": True, "kernel": "6.1.0-26-amd64",
                "kernel_image": "/boot/vmlinuz-6.1.0-26-amd64", "qemu": "QEMU emulator version 7.2.13", "cpus": 2,
                "memory_mib": 1024, "root": "virtiofs", "root_server": "rust virtiofsd 1.10.1",
                "boot": {"qemu_s": 0.1, "kernel_s": 2.5}, "mounts": [{"label": "9p cache=none", "tag": "mb0"}],
                "probe": {"mounts": [], "repeat": 3, "timeout_s": 5.0}}  # fmt: skip
OLD_CLOUD_LAB = {"accel": None, "accel_reason": None, "emulated": None, "kernel": None, "kernel_image": None,
                 "qemu": None, "cpus": None, "memory_mib": None, "root": None, "root_server": None, "boot": {},
                 "mounts": [], "cloud": {"targets": [{"label": "local"}], "probes": [], "tools": {}}}  # fmt: skip


def test_lab_facts_stored_in_the_old_layout_are_read_as_the_lab_that_made_them():
    from mountbench.labfacts import CloudLabFacts, GuestMountFacts, QemuLabFacts
    from mountbench.probefacts import CloudProbe, LabProbe

    base = {"version": 2, "repeat": 1, "seed": 1, "baseline": "9p"}
    qemu = config_from_dict({**base, "lab": OLD_QEMU_LAB}).lab
    assert isinstance(qemu, QemuLabFacts)
    assert (qemu.accel, qemu.emulated, qemu.cpus, qemu.root_server) == ("tcg", True, 2, "rust virtiofsd 1.10.1")
    assert qemu.boot == {"qemu_s": 0.1, "kernel_s": 2.5}
    assert qemu.mounts == (GuestMountFacts(label="9p cache=none", extra={"tag": "mb0"}),)
    assert qemu.mounts[0].to_dict()["tag"] == "mb0"  # stored as it was: what a mount type added beside the rest
    assert qemu.probe == LabProbe.from_dict(OLD_QEMU_LAB["probe"])  # type: ignore[arg-type]
    cloud = config_from_dict({**base, "lab": OLD_CLOUD_LAB}).lab
    old_probe = CloudProbe.from_dict(OLD_CLOUD_LAB["cloud"])  # type: ignore[arg-type]
    assert cloud == CloudLabFacts(old_probe) and [t.label for t in old_probe.targets] == ["local"]
    again = config_to_dict(config_from_dict({**base, "lab": OLD_CLOUD_LAB}))
    assert again["lab"] == {"name": "cloud", "probe": old_probe.to_dict()}  # written back in the new layout


def test_lab_facts_of_a_lab_this_version_does_not_know_are_refused():
    with pytest.raises(ValueError, match="lab 'k8s' is not one this mountbench knows"):
        config_from_dict({"version": 2, "repeat": 1, "seed": 1, "baseline": "a", "lab": {"name": "k8s"}})
