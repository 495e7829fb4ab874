"""Job files written for issue 32's acceptance list: each exercises a feature that fio's own
example jobs use (concurrent sections, stonewall, wait_for, verify, rate, numjobs with and
without group_reporting, filesize, fill_device, startdelay, file-operation engines) and the
engines and names mountbench must refuse. Written here from the features, not copied.

Each case either runs as fio would (``workloads``: the workloads mountbench makes of it, and
``codes``: caveat codes its figures carry) or is refused before the first sample (``refused``:
words of the one-line reason). tests/kinds/test_fio_jobfiles.py runs them through mountbench on
tmpfs; bench/jobfiles.py compares the runnable ones with plain fio on the same text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_TIMED = "ioengine=psync\nruntime=1\ntime_based=1\n"


@dataclass(frozen=True)
class Case:
    name: str
    feature: str
    text: str
    workloads: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    refused: str = ""
    args: tuple[str, ...] = ()  # extra `mountbench run` options
    compare: bool = True  # bench/jobfiles.py compares it with plain fio
    extra: dict = field(default_factory=dict)


CASES = (
    Case(
        "concurrent",
        "two sections at once (no stonewall)",
        f"[global]\n{_TIMED}bs=4k\nsize=8m\n[seq-reader]\nrw=read\n[rand-reader]\nrw=randread\n",
        workloads=("concurrent",),
        codes=("job-grouping",),
    ),
    Case(
        "stonewall",
        "phases one after another, no shared files",
        f"[global]\n{_TIMED}size=8m\nstonewall\n[writes]\nrw=write\nbs=64k\n[reads]\nrw=randread\nbs=4k\n",
        workloads=("writes", "reads"),
        codes=("job-grouping",),
    ),
    Case(
        "wait-for",
        "a section that waits for another",
        f"[global]\n{_TIMED}size=8m\n[first]\nrw=write\nbs=64k\n[second]\nwait_for=first\nrw=randread\nbs=4k\n",
        workloads=("wait-for",),
        codes=("job-grouping",),
    ),
    Case(
        "verify",
        "a write phase and the verify phase that reads it back",
        f"[global]\n{_TIMED}filename=checked.dat\nsize=16m\nbs=4k\n"
        "[write-phase]\nrw=write\nverify=crc32c\ndo_verify=0\n[check-phase]\nstonewall\nrw=read\nverify=crc32c\n",
        workloads=("verify",),
        codes=("job-grouping", "verify-reads"),
    ),
    Case(
        "rate",
        "a rate-capped job",
        f"[capped]\n{_TIMED}rw=randread\nbs=4k\nsize=8m\nrate_iops=3000\n",
        workloads=("capped",),
        codes=("rate-capped",),
    ),
    Case(
        "numjobs-grouped",
        "numjobs=2 with group_reporting",
        f"[clones]\n{_TIMED}rw=randread\nbs=4k\nsize=4m\nnumjobs=2\ngroup_reporting=1\n",
        workloads=("clones",),
    ),
    Case(
        "numjobs-apart",
        "numjobs=2 without group_reporting",
        f"[clones]\n{_TIMED}rw=randread\nbs=4k\nsize=4m\nnumjobs=2\n",
        workloads=("clones",),
        extra={"metrics": ("clones/read.iops", "clones#2/read.iops")},
    ),
    Case(
        "filesize",
        "filesize and nrfiles without size",
        f"[files]\n{_TIMED}rw=randread\nbs=4k\nfilesize=2m\nnrfiles=4\n",
        workloads=("files",),
    ),
    Case(
        "filesize-scaled",
        "filesize alone, --size given",
        f"[files]\n{_TIMED}rw=read\nbs=4k\nfilesize=4m\nnrfiles=2\n",
        workloads=("files",),
        args=("--size", "2m"),
        compare=False,
    ),
    Case(
        "fill-device",
        "fill_device without --size",
        "[fill]\nioengine=psync\nrw=write\nbs=64k\nfill_device=1\n",
        refused="fill_device=1 writes until the target's filesystem is full",
    ),
    Case(
        "fill-device-sized",
        "fill_device with --size",
        "[fill]\nioengine=psync\nrw=write\nbs=64k\nfill_device=1\n",
        workloads=("fill",),
        codes=("size-replaced",),
        args=("--size", "4m"),
        compare=False,
    ),
    Case(
        "startdelay",
        "a section that starts a second later",
        f"[global]\n{_TIMED}size=4m\nbs=4k\n[now]\nrw=randread\n[later]\nrw=randread\nstartdelay=1\n",
        workloads=("startdelay",),
        codes=("job-grouping",),
    ),
    Case(
        "filecreate",
        "a file-operation engine",
        "[create]\nioengine=filecreate\nfallocate=none\nfilesize=4k\nnrfiles=3000\nopenfiles=1\n",
        workloads=("create",),
    ),
    Case(
        "twins",
        "two sections of one name (fio accepts it)",
        f"[global]\n{_TIMED}size=4m\nbs=4k\n[twin]\nrw=read\n[twin]\nstonewall\nrw=randread\n",
        workloads=("twins",),
        codes=("job-grouping",),
    ),
    Case(
        "cpu-beside-io",
        "a CPU-only section beside an I/O section",
        f"[global]\n{_TIMED}\n[io]\nrw=randread\nbs=4k\nsize=8m\n[burn]\nioengine=cpuio\ncpuload=10\n",
        workloads=("cpu-beside-io",),
        codes=("job-grouping", "no-io"),
        compare=False,  # a CPU burner beside: the pair's figures move with what else the host does
    ),
    Case(
        "comment",
        "an inline comment after a file name",
        f"[commented]\n{_TIMED}rw=randread\nbs=4k\nsize=4m\nfilename=data.bin ; or use /dev/sda\n",
        workloads=("commented",),
    ),
    Case(
        "tiny",
        "size=8k bs=4k: too short to time",
        "[tiny]\nioengine=psync\nrw=read\nbs=4k\nsize=8k\n",
        workloads=("tiny",),
        codes=("runtime-0",),
        compare=False,  # no rate to compare: I/Os over fio's 1 ms tick
    ),
    Case(
        "missing-engine",
        "an engine this fio lacks",
        "[d]\nioengine=dircreate\nnrfiles=10\n",
        refused="engine dircreate is not in this fio",
    ),
    Case(
        "network",
        "a network engine",
        "[send]\nioengine=net\nfilename=127.0.0.1/8888\nrw=write\nsize=1m\n",
        refused="over the network",
    ),
    Case(
        "object-store",
        "an object-store engine",
        "[put]\nioengine=http\nhttp_mode=s3\nhttp_host=127.0.0.1\nfilename=/bucket/key\nrw=write\nsize=1m\n",
        refused="object store",
    ),
    Case(
        "device",
        "a device engine",
        "[scsi]\nioengine=sg\nfilename=/dev/sg0\nrw=read\nsize=1m\n",
        refused="drives a device",
    ),
    Case("no-io", "the null engine alone", "[nothing]\nioengine=null\nrw=read\nsize=1g\n", refused="does no I/O"),
    Case(
        "escape",
        "a section name that climbs out",
        "[../../evil]\nrw=write\nsize=1m\n",
        refused="section name would place fio's files outside",
    ),
    Case(
        "unknown-waitee",
        "wait_for a section that is not there",
        "[a]\nrw=read\nsize=1m\nwait_for=ghost\n",
        refused="wait_for=ghost names no section",
    ),
)
