"""Synthetic runs shaped like the studies, for report tests (no fio, fully deterministic).

One host, three targets (native is the baseline, as in study S0), and workloads that
exercise every part of a report: fio IOPS and bandwidth, a tree workload timed in
seconds, a latency workload with fio's percentile list (S4), a block-size sweep (S3),
measurement caveats (O_DIRECT refused, page cache, emulated guest) and a failed sample.
"""

from __future__ import annotations

from mountbench import model
from mountbench.kinds import make_workload, resolved_options
from mountbench.model import (
    Caveat,
    RunConfig,
    RunData,
    Sample,
    SweepPoint,
    Target,
    TargetInfo,
    TargetRecord,
    Workload,
)
from mountbench.units import parse_size

DEFAULTS = resolved_options(model.KindOptions())  # every kind option at its default, as a run records them
NOISE = (1.0, 1.03, 0.96)  # three repetitions, a few percent apart, shared by the targets of a round
# rounds whose noise the baseline's does not share: per-round ratios that differ, an undecided comparison
OWN_NOISE = {("9p", "seq-write"): (1.0, 0.96, 1.03)}
PERCENTILES = (1, 5, 10, 50, 90, 95, 99, 99.5, 99.9, 99.99)

ODIRECT = Caveat(model.ODIRECT_REFUSED, "buffered: O_DIRECT refused (EINVAL); ran without direct=1")
PAGE_CACHE = Caveat(model.PAGE_CACHE, "page cache may serve these: working set 64.0 MiB is under twice the RAM")
EMULATED = Caveat(model.EMULATED, "emulated guest (TCG): slower than a KVM guest")

HOST = {
    "hostname": "studio",
    "os": "Linux 6.1.0-13-amd64",
    "kernel": "6.1.0-13-amd64",
    "cpu_model": "Example CPU 8000",
    "cpu_count": 8,
    "ram_bytes": 16 * 2**30,
    "fio_version": "fio-3.33",
    "mountbench_version": "0.1.0",
}


def fio(name: str, title: str, rw: str, bs: str, *, sweep: SweepPoint | None = None, **extra: str) -> Workload:
    options = [["rw", rw], ["bs", bs], ["ioengine", "psync"], ["size", "64m"], ["runtime", "5"]]
    options += [[k, v] for k, v in extra.items()]
    spec = {"section": name, "options": options}
    if sweep is not None:
        spec["sweep"] = sweep.to_dict()
    return make_workload(name, "fio", title, "preset:test", spec)


def bs_point(value: str) -> SweepPoint:
    """A point of the study's block-size sweep, as a job file whose sections differ in bs alone gives it."""
    return SweepPoint("preset:test sections differing in bs", "bs", value, float(parse_size(value)), generated=False)


WORKLOADS = (
    fio("random-read", "RND 4K Q1 read", "randread", "4k", direct="1"),
    fio("seq-write", "SEQ 1M Q8 write", "write", "1M", direct="1", iodepth="8"),
    make_workload("extract", "tree", "extracting the tree", "preset:tree", {"action": "extract", "headline": ["wall"]}),
    fio("lat-4k", "random read 4k QD1 (S4)", "randread", "4k", percentile_list=":".join(map(str, PERCENTILES))),
    fio("bs-4k", "write bs=4k", "write", "4k", sweep=bs_point("4k"), direct="1"),
    fio("bs-64k", "write bs=64k", "write", "64k", sweep=bs_point("64k"), direct="1"),
    fio("bs-1m", "write bs=1M", "write", "1m", sweep=bs_point("1m"), direct="1"),
    fio("bs-4m", "write bs=4M", "write", "4m", sweep=bs_point("4m"), direct="1"),
)

# (target, workload) -> (metrics of the first repetition, caveats)
BASE: dict[tuple[str, str], dict[str, float]] = {}
for _target, _scale in (("native", 1.0), ("virtiofs", 0.45), ("9p", 0.43)):
    BASE[(_target, "random-read")] = {"read.iops": 20000 * _scale}
    BASE[(_target, "seq-write")] = {"write.bw": 2.0e9 * _scale}
    BASE[(_target, "lat-4k")] = {"read.iops": 30000 * _scale} | {
        f"read.lat_p{p:g}": (1e-6 if p < 50 else 2e-6 if p < 99 else 7e-5) / _scale for p in PERCENTILES
    }
BASE[("9p", "seq-write")] = {"write.bw": 2.0e9 * 1.02}  # within noise of native
BASE[("native", "extract")] = {"wall": 2.0}
BASE[("virtiofs", "extract")] = {"wall": 5.5}
BASE[("9p", "extract")] = {"wall": 32.0}
for _target, peak in (("native", 1 << 20), ("virtiofs", 4 << 20), ("9p", 64 << 10)):
    for _name, _bs in (("bs-4k", 4 << 10), ("bs-64k", 64 << 10), ("bs-1m", 1 << 20), ("bs-4m", 4 << 20)):
        _bw = 1.0e9 / (1 + abs(_bs.bit_length() - peak.bit_length()))
        BASE[(_target, _name)] = {"write.bw": _bw, "write.iops": _bw / _bs}

CAVEATS = {
    ("9p", "random-read"): (ODIRECT,),
    ("native", "lat-4k"): (PAGE_CACHE,),
    ("virtiofs", "lat-4k"): (PAGE_CACHE,),
    ("9p", "lat-4k"): (PAGE_CACHE,),
    ("virtiofs", "extract"): (EMULATED,),
}


def study_run(run_id: str = "20260101-120000-abcd", host: dict | None = None, targets: tuple[str, ...] = ()) -> RunData:
    labels = targets or ("native", "virtiofs", "9p")
    samples = []
    for (target, workload), metrics in BASE.items():
        if target not in labels:
            continue
        for round_, factor in enumerate(OWN_NOISE.get((target, workload), NOISE)):
            values = {k: v * (factor if k != "wall" else 2 - factor) for k, v in metrics.items()}
            samples.append(
                Sample(
                    target, workload, round_, True, values, CAVEATS.get((target, workload), ()), cache_action="dropped"
                )
            )
    if "9p" in labels:
        samples.append(Sample("9p", "seq-write", 3, False, {}, (), error="fio: No space left on device (ENOSPC)"))
    infos = {
        "native": TargetInfo(
            "ext4", "/srv", "/dev/nvme0n1p2", "rw,relatime", 50 * 2**30, 100 * 2**30, True, "accepted"
        ),
        "virtiofs": TargetInfo(
            "virtiofs", "/mnt/vfs", "share", "rw,relatime", 50 * 2**30, 100 * 2**30, True, "accepted"
        ),
        "9p": TargetInfo(
            "9p", "/mnt/9p", "share", "rw,trans=virtio,version=9p2000.L", 50 * 2**30, 100 * 2**30, False, "EINVAL"
        ),
    }
    return RunData(
        id=run_id,
        created_at=1767268800.0,
        finished_at=1767269400.0,
        status="complete",
        command="mountbench run native=/srv virtiofs=/mnt/vfs 9p=/mnt/9p --preset test",
        config=RunConfig(
            repeat=3, seed=7, baseline="native", drop_caches="auto", size=64 * 2**20, kind_options=DEFAULTS
        ),
        host=dict(host or HOST),
        targets=tuple(TargetRecord(Target(label, infos[label].mount_point), infos[label]) for label in labels),
        workloads=WORKLOADS,
        samples=tuple(samples),
    )
