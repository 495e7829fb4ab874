"""Plausibility checks (issue 23): numbers that cannot be what they claim get a caveat with
its reason and remedy. Pure rules on synthetic cells; the short-sample rule on fio's JSON."""

from __future__ import annotations

import dataclasses

from support.factories import make_run

from mountbench.analysis import plausible
from mountbench.analysis.summary import summarize_runs
from mountbench.fio.jobfile import FioJob
from mountbench.kinds.fio import KIND, mirror_pattern, short_sample
from mountbench.model import TargetInfo, TargetRecord

QUICK = {"global": {"ioengine": "libaio", "direct": 1, "size": "256M", "runtime": "2500ms", "time_based": 1}}


def _quick(name: str, rw: str):
    return KIND.from_preset("quick", QUICK, {"name": name, "rw": rw, "bs": "1M", "iodepth": 8})


def test_a_read_and_a_write_of_one_direct_job_share_a_pattern():
    read, write = _quick("seq-read", "read"), _quick("seq-write", "write")
    assert read.description.pattern and read.description.pattern == write.description.pattern
    assert mirror_pattern(FioJob("b", (("rw", "read"), ("direct", "0")))) == ""  # buffered: nothing to say
    assert _quick("rnd-read", "randread").description.pattern != read.description.pattern


def test_direct_writes_faster_than_reads_of_the_same_pattern_say_a_cache_took_them():
    read, write = _quick("seq-read", "read"), _quick("seq-write", "write")
    values = {
        ("seq-read", "read.bw", "disk"): [1.82e9, 1.80e9, 1.85e9],
        ("seq-write", "write.bw", "disk"): [4.81e9, 4.7e9, 4.9e9],
        ("seq-read", "read.bw", "ram"): [7e9, 7.1e9, 6.9e9],
        ("seq-write", "write.bw", "ram"): [6.9e9, 7e9, 7.05e9],
    }
    found = plausible.write_faster_than_read(values, [read, write], ["ram", "disk"])
    assert set(found) == {("seq-write", "disk")}
    text = found[("seq-write", "disk")].text
    assert "volatile cache" in text and "end_fsync=1" in text and "durable write rate is unknown" in text


def test_the_fsync_variant_is_offered_then_shown_as_the_durable_rate_and_checked_itself():
    """Issue 23: the write-cached caveat offers --fsync-writes; with it, the write's caveat names the
    variant as the durable rate, and a variant still faster than the read says the flush was absorbed."""
    read, write = _quick("seq-read", "read"), _quick("seq-write", "write")
    variant = KIND.fsync_variant(write)
    assert variant is not None and variant.name == "seq-write-fsync" and "end_fsync=1" in variant.description.options
    assert KIND.fsync_variant(read) is None and KIND.fsync_variant(variant) is None  # reads nothing / syncs already
    reads, cached = [1.82e9, 1.80e9, 1.85e9], [4.81e9, 4.7e9, 4.9e9]
    offered = plausible.write_faster_than_read(
        {("seq-read", "read.bw", "disk"): reads, ("seq-write", "write.bw", "disk"): cached}, [read, write], ["disk"]
    )
    assert "--fsync-writes runs each write again" in offered[("seq-write", "disk")].text
    values = {
        ("seq-read", "read.bw", "disk"): reads,
        ("seq-write", "write.bw", "disk"): cached,
        ("seq-write-fsync", "write.bw", "disk"): [0.61e9, 0.6e9, 0.63e9],  # the flush counted: slower than reads
    }
    shown = plausible.write_faster_than_read(values, [read, write, variant], ["disk"])
    assert set(shown) == {("seq-write", "disk")}
    assert f"{variant.title} counts the flush (end_fsync=1): the durable rate" in shown[("seq-write", "disk")].text
    values[("seq-write-fsync", "write.bw", "disk")] = [4.5e9, 4.6e9, 4.4e9]  # a cache that ignores flushes
    both = plausible.write_faster_than_read(values, [read, write, variant], ["disk"])
    assert "even ending with fsync" in both[("seq-write-fsync", "disk")].text


def _info(fstype: str) -> TargetInfo:
    return TargetInfo(fstype, "/m", "src", "rw", 10**10, 2 * 10**10, True, "accepted")


def _with_fstypes(run, fstypes: dict[str, str]):
    records = tuple(TargetRecord(r.target, _info(fstypes[r.target.label])) for r in run.targets)
    return dataclasses.replace(run, targets=records)


def test_a_target_faster_than_the_ram_baseline_is_flagged_and_an_a_a_ram_pair_is_not():
    values = {("ram", "w"): [100.0, 101.0, 99.0], ("disk", "w"): [150.0, 152.0, 149.0], ("shm2", "w"): [150, 151, 149]}
    run = _with_fstypes(make_run(values, "read.iops"), {"ram": "tmpfs", "disk": "ext4", "shm2": "tmpfs"})
    (row,) = summarize_runs([run], baseline="ram").rows
    assert [c.code for c in row.cells["disk"].caveats if c.code == "faster-than-ram"] == ["faster-than-ram"]
    assert not any(c.code == "faster-than-ram" for c in row.cells["shm2"].caveats)


def test_a_latency_below_what_a_network_mount_can_do():
    found = plausible.below_mount_latency({("w", "nfs"): 4e-6, ("w", "disk"): 4e-6, ("v", "nfs"): 80e-6},
                                          {"nfs": "nfs4", "disk": "ext4"})  # fmt: skip
    assert set(found) == {("w", "nfs")}
    assert "4.00 µs through nfs4" in found[("w", "nfs")].text and "cache" in found[("w", "nfs")].text


def _fio_output(runtime_ms: int) -> dict:
    return {"jobs": [{"jobname": "j", "job_runtime": runtime_ms}]}


def test_a_sample_that_ended_on_its_size_before_its_runtime_says_so():
    job = FioJob("s4", (("rw", "randread"), ("size", "256m"), ("runtime", "30")))
    (caveat,) = short_sample(_fio_output(64), job)
    assert caveat.code == "short-sample" and "stopped before its runtime of 30 s" in caveat.text
    assert "moved 256m" in caveat.text and "time_based=1" in caveat.text


def test_a_time_based_sample_under_half_a_second_is_short_and_one_of_a_second_is_not():
    job = FioJob("q", (("rw", "read"), ("runtime", "200ms"), ("time_based", "1")))
    (caveat,) = short_sample(_fio_output(200), job)
    assert "under 0.5 s of I/O" in caveat.text
    assert short_sample(_fio_output(500), FioJob("q", (("runtime", "500ms"), ("time_based", "1")))) == []
    assert short_sample(_fio_output(2500), FioJob("q", (("runtime", "2500ms"), ("time_based", "1")))) == []
    # a job file without runtime= gets mountbench's cap: a size-bound job of 5 s is not short
    assert short_sample(_fio_output(5000), FioJob("f", (("rw", "write"), ("runtime", "60")))) == []
