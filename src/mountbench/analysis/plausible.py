"""Numbers that cannot be what they claim, found across cells (pure).

- Direct writes faster than direct reads of the same pattern on one target: a volatile
  cache below the filesystem (a VM host's page cache under a virtual disk, a device's
  write cache) took the writes, so the durable write rate is unknown; the remedy is an
  fsync-terminated variant of the job (end_fsync=1), which counts the flush.
- A target faster than a RAM baseline (tmpfs): storage cannot outrun RAM, so a cache
  served the target's I/O.
- A mean latency below what a network or VM mount can do (a round trip through the
  mount takes MIN_MOUNT_LATENCY_S or more): a client-side cache answered.

Each becomes a caveat on the cells it affects, with its reason and remedy, so every
format shows it next to the number. (A sample too short to trust is the kind's own check:
kinds/fio.py.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mountbench import model
from mountbench.analysis import stats
from mountbench.analysis.metrics import describe
from mountbench.model import Caveat, Workload
from mountbench.units import sig3

MIN_FACTOR = 1.10  # smaller excesses can be the two jobs' own difference (a read-ahead, an allocation)
MIN_MOUNT_LATENCY_S = 10e-6
RAM_FSTYPES = frozenset({"tmpfs", "ramfs"})
# local block filesystems (a disk or a volume of this machine's own)
LOCAL_FSTYPES = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "jfs", "reiserfs", "bcachefs", "nilfs2", "overlay",
    "vfat", "msdos", "exfat", "ntfs3", "udf", "apfs", "hfs", "hfsplus", "ufs",
})  # fmt: skip
# filesystems whose fallocate allocates without writing (not glibc's emulation, a byte written per block):
# where kinds/fiofiles.place_spacer draws the place of each round's layout at random
PLACEABLE_FSTYPES = frozenset({"tmpfs", "ext4", "xfs", "btrfs", "f2fs", "bcachefs", "overlay"})
# mounts whose every uncached operation crosses a network or a VM boundary
REMOTE_FSTYPES = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "virtiofs", "ceph", "glusterfs", "lustre", "afs", "vboxsf",
    "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "fuse.gcsfuse", "fuse.glusterfs", "fuse.ceph-fuse", "prl_fs",
})  # fmt: skip

Key = tuple[str, str]  # (workload, target)


def write_faster_than_read(
    values: Mapping[tuple[str, str, str], Sequence[float]], workloads: Sequence[Workload], targets: Sequence[str]
) -> dict[Key, Caveat]:
    """``values``: (workload, metric, target) -> the cell's samples. For every writing workload
    whose pattern a reading one mirrors: a caveat on the write where it ran significantly
    faster (bandwidth or IOPS, by MIN_FACTOR or more) than the read on the same target."""
    readers = {w.description.pattern: w for w in workloads if w.description.directions == ("read",)}
    names = {w.name: w for w in workloads}
    found: dict[Key, Caveat] = {}
    for writer in workloads:
        origin = names.get(writer.name.removesuffix(FSYNC_SUFFIX)) if writer.name.endswith(FSYNC_SUFFIX) else None
        pattern = (origin or writer).description.pattern  # an fsync variant mirrors its origin's read
        reader = readers.get(pattern) if pattern and writer.description.directions == ("write",) else None
        if reader is None:
            continue
        for target in targets:
            for family in ("bw", "iops"):
                reads = values.get((reader.name, f"read.{family}", target))
                writes = values.get((writer.name, f"write.{family}", target))
                if not reads or not writes:
                    continue
                comparison = stats.compare(reads, writes)
                if comparison is None or comparison.verdict != stats.DIFFERS or comparison.low < MIN_FACTOR:
                    continue
                found[(writer.name, target)] = Caveat(
                    model.WRITE_CACHED,
                    f"direct writes ran {sig3(comparison.ratio)}× faster than direct reads of the same pattern "
                    f"({reader.title}): " + _cached_remedy(writer, names),
                )
                break
    return found


def faster_than_ram(
    values: Mapping[tuple[str, str, str], Sequence[float]],
    targets: Sequence[str],
    baseline: str,
    fstypes: Mapping[str, str],
) -> dict[tuple[str, str, str], Caveat]:
    """(workload, metric, target) -> a caveat where a target ran significantly faster (by
    MIN_FACTOR or more) than a RAM baseline on a speed or latency metric."""
    if fstypes.get(baseline) not in RAM_FSTYPES:
        return {}
    found = {}
    for (workload, metric, target), own in values.items():
        base = values.get((workload, metric, baseline))
        info = describe(metric)
        if target == baseline or fstypes.get(target) in RAM_FSTYPES or not base:
            continue  # RAM against RAM is an A/A pair, not a cache
        if info.unit not in ("IOPS", "B/s", "s") or "cpu" in metric:
            continue
        comparison = stats.compare(base, own)
        if comparison is None or comparison.verdict != stats.DIFFERS:
            continue
        better = comparison.low if info.higher_is_better else 1 / comparison.high
        if better >= MIN_FACTOR:
            found[(workload, metric, target)] = Caveat(
                model.FASTER_THAN_RAM,
                f"faster than the RAM baseline ({baseline}, {fstypes[baseline]}): storage cannot outrun RAM, so a "
                "cache served these (the page cache under buffered I/O, a VM host's cache under a virtual disk, "
                "a client cache on a network mount); the figure is the cache's, not the storage's",
            )
    return found


def below_mount_latency(latencies: Mapping[Key, float], fstypes: Mapping[str, str]) -> dict[Key, Caveat]:
    """``latencies``: (workload, target) -> the median of the samples' mean I/O latency (s).
    A caveat where a remote or VM mount answered faster than a round trip through it can."""
    found = {}
    for (workload, target), latency in latencies.items():
        fstype = fstypes.get(target, "")
        if fstype in REMOTE_FSTYPES and 0 < latency < MIN_MOUNT_LATENCY_S:
            found[(workload, target)] = Caveat(
                model.LATENCY_FLOOR,
                f"a mean latency of {sig3(latency * 1e6)} µs through {fstype} is below what a network or VM mount "
                f"can do (a round trip takes {MIN_MOUNT_LATENCY_S * 1e6:g} µs or more): a client-side cache "
                "answered; use direct I/O on a mount that honours it, or a working set larger than its cache",
            )
    return found


FSYNC_SUFFIX = "-fsync"  # the name of a workload's fsync-terminated variant (run --fsync-writes)


def _cached_remedy(writer: Workload, workloads: Mapping[str, Workload]) -> str:
    """What the write-cached caveat says of the durable rate: where it is, or how to get it."""
    if writer.name.endswith(FSYNC_SUFFIX):
        return ("even ending with fsync (end_fsync=1), so the flush did not reach stable storage either (a cache "
                "below that ignores or absorbs flushes: a VM disk with cache=unsafe, a device without power-loss "
                "protection); the durable write rate is unknown")  # fmt: skip
    base = ("a volatile cache below (a VM host's page cache under a virtual disk, a device's write cache) took "
            "them, so the durable write rate is unknown")  # fmt: skip
    variant = workloads.get(writer.name + FSYNC_SUFFIX)
    if variant is not None:
        return f"{base} from this row; {variant.title} counts the flush (end_fsync=1): the durable rate"
    return f"{base}; --fsync-writes runs each write again ending with fsync (end_fsync=1), which counts the flush"
