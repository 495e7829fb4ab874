"""The studies' headlines in the lab, checked by hand: for each seed study whose headline the
QEMU lab can reproduce, mountbench's figure and the study's own commands (dd, tar), timed
inside the same guest on the same mounts, side by side.

- S3: 9p `cache=loose` against no cache, a sequential buffered write as dd does it (bs=32k:
  the study's 6.6x), and the block size at which each writes fastest (the study: loose
  peaks at 4M). By hand: `dd if=/dev/zero of=FILE bs=BS count=N`; mountbench: a psync
  write job of the same size, swept over the same block sizes.
- S0: the order of the mounts extracting a source tree (the study: virtiofs 5.5 s, 9p 32 s,
  native 2 s). By hand: `tar -x --no-same-owner -f TREE`; mountbench: the tree preset's
  extract. The VM's own disk (virtio-blk, ext4) stands for native.
- S1: virtiofs against 9p reading a file sequentially with the guest's page cache dropped.
  By hand: `dd if=FILE of=/dev/null bs=1M` after `echo 3 > drop_caches`; mountbench: a
  buffered 1M sequential read with --drop-caches always.

Every figure is taken in one guest under the lab's accelerator (TCG here: KVM hangs on this
host), so it is emulated: absolute numbers are far below a real VM's, and what costs guest
CPU (9p's message handling, page-cache copies) is inflated most. The by-hand commands write
more than the study did (S3 wrote 10 blocks per point, too little to time): SIZE per point.

usage: python bench/studies_lab.py [--size 32M] [--tree git|tiny] [--repeat 2] [--smoke]
--smoke: 9p without and with cache=loose only, one block size, 4 MiB per point unless --size
says otherwise, the tiny tree, one round of mountbench on S3 only (the test suite runs it).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from mountbench.kinds.trees import generate
from mountbench.labs.qemu import Guest, parse_mount_spec
from mountbench.units import format_bytes, parse_size

MOUNTS = ("9p", "9p:cache=loose", "virtiofs", "disk")
SMOKE_MOUNTS = ("9p", "9p:cache=loose")
BLOCK_SIZES = ("4k", "32k", "256k", "1M", "4M")
HAND = re.compile(r"HAND (\S+) (\S+) (\S+) (\d+) (\d+)$")  # study, slug, what, exit status, nanoseconds
HAND_DD = re.compile(r"HANDDD (\S+) (\S+) (\S+) (\d+) .*copied, ([\d.e+-]+) s\b")  # dd's own seconds


def timed(study: str, slug: str, what: str, command: str) -> str:
    """Shell lines that run ``command`` and print its wall time in ns, by the guest's clock
    (as `time` would: the process's start-up under emulation included)."""
    return (f"s=$(date +%s%N); {command} >/dev/null 2>&1; rc=$?; e=$(date +%s%N); "
            f"echo HAND {study} {slug} {what} $rc $((e - s))")  # fmt: skip


def dd_timed(study: str, slug: str, what: str, command: str) -> str:
    """A dd, timed as the studies timed theirs: by dd's own report ("... copied, 1.23 s, ..."),
    which leaves out its start-up (tens of ms under TCG)."""
    return (f"out=$({command} 2>&1 | tail -n 1); rc=$?; "
            f"echo \"HANDDD {study} {slug} {what} $rc $out\"")  # fmt: skip


def by_hand_script(mounts: dict[str, str], size: int, block_sizes: tuple[str, ...], tree: Path) -> str:
    """The studies' own commands on every mount (slug -> guest path)."""
    lines = ["cd /tmp"]
    for slug, path in mounts.items():
        work = f"{path}/.studies-by-hand"
        lines.append(f"rm -rf {work}; mkdir -p {work}")
        if slug.startswith("9p"):  # S3: dd's write per block size
            for bs in block_sizes:
                count = max(1, size // parse_size(bs))
                lines.append("sync; echo 3 > /proc/sys/vm/drop_caches")
                lines.append(dd_timed("S3", slug, f"dd-bs={bs}", f"dd if=/dev/zero of={work}/dd bs={bs} count={count}"))
                lines.append(f"rm -f {work}/dd")
        # S0: extracting the tree
        lines.append("sync; echo 3 > /proc/sys/vm/drop_caches")
        lines.append(timed("S0", slug, "tar-x", f"tar -x --no-same-owner -f {shlex.quote(str(tree))} -C {work}"))
        # S1: a sequential read with the page cache dropped
        lines.append(f"dd if=/dev/zero of={work}/seq bs=1M count={max(1, size >> 20)} conv=fsync 2>/dev/null")
        lines.append("sync; echo 3 > /proc/sys/vm/drop_caches")
        lines.append(dd_timed("S1", slug, "dd-read", f"dd if={work}/seq of=/dev/null bs=1M"))
        lines.append(f"rm -rf {work}")
    return "\n".join(lines)


def job_files(directory: Path, size: int) -> tuple[Path, Path]:
    write = directory / "s3-dd.fio"
    write.write_text(f"[dd-write]\nrw=write\nioengine=psync\ndirect=0\nsize={size}\nbs=32k\n")
    read = directory / "s1-read.fio"
    read.write_text(f"[seq-read]\nrw=read\nioengine=psync\ndirect=0\nsize={size}\nbs=1M\n")
    return write, read


def mountbench_command(targets: list[str], args: list[str], out: str) -> str:
    argv = [sys.executable, "-m", "mountbench", "run", *targets, "--db", "/tmp/studies.sqlite", "--json", out, *args]
    env = "HOME=/tmp XDG_CACHE_HOME=/tmp/.cache XDG_DATA_HOME=/tmp/.data COLUMNS=160"
    return f"cd /tmp && env {env} {shlex.join(argv)} >/dev/null 2>/results/mb.err; echo MB $?"


def medians(document: dict, metric: str) -> dict[tuple[str, str], float]:
    """(workload, target) -> the median of ``metric`` over the run's ok samples."""
    found: dict[tuple[str, str], list[float]] = {}
    for sample in document["runs"][0]["samples"]:
        if sample["ok"] and metric in sample["metrics"]:
            found.setdefault((sample["workload"], sample["target"]), []).append(sample["metrics"][metric])
    return {key: sorted(v)[len(v) // 2] for key, v in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", help="bytes written or read per point (32M; 4M with --smoke)")
    parser.add_argument("--tree", default="git", help="tree profile for S0 (git: the study's 4,294 files)")
    parser.add_argument("--repeat", type=int, default=2, help="mountbench's rounds")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    size = parse_size(args.size or ("4M" if args.smoke else "32M"))
    mounts = SMOKE_MOUNTS if args.smoke else MOUNTS
    block_sizes = ("32k",) if args.smoke else BLOCK_SIZES
    tree_name, repeat = ("tiny", 1) if args.smoke else (args.tree, args.repeat)
    work = Path(tempfile.mkdtemp(prefix="studies-lab-", dir="/var/tmp"))
    try:
        run_all(args, size, mounts, block_sizes, tree_name, repeat, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_all(
    args: argparse.Namespace,
    size: int,
    mounts: tuple[str, ...],
    block_sizes: tuple[str, ...],
    tree_name: str,
    repeat: int,
    work: Path,
) -> None:
    tree = generate(tree_name, 1, work).path
    write_job, read_job = job_files(work, size)
    started = time.monotonic()
    hand: dict[tuple[str, str, str], float] = {}
    failed: list[str] = []
    docs: dict[str, dict] = {}
    with Guest([parse_mount_spec(m) for m in mounts]) as guest:
        ready = {m.slug: m.guest_path for m in guest.mounts if not m.guest_error}
        labels = {m.slug: m.label for m in guest.mounts}
        accel = guest.describe().accel

        def on_line(line: str) -> None:
            found, by_dd = HAND.search(line), HAND_DD.search(line)
            if found:
                study, slug, what, rc, ns = found.groups()
                seconds = int(ns) / 1e9
            elif by_dd:
                study, slug, what, rc, dd_s = by_dd.groups()
                seconds = float(dd_s)
            elif line.startswith("HANDDD"):
                failed.append(f"dd: {line}")
                return
            else:
                return
            if rc == "0":
                hand[(study, slug, what)] = seconds
            else:
                failed.append(f"{study} {slug} {what}: exit {rc}")

        guest.run_in_guest(by_hand_script(ready, size, block_sizes, tree), on_line)
        targets = [f"{slug}={path}" for slug, path in ready.items()]
        ninep = [t for t in targets if t.startswith("9p")]
        common = ["--repeat", str(repeat), "--drop-caches", "always"]
        runs = {
            "S3": (ninep, ["--job", str(write_job), "--sweep", "bs=" + ",".join(block_sizes), *common]),
            "S0": (targets, ["--preset", "tree", "--tree", tree_name, "--only", "extract", *common]),
            "S1": ([t for t in targets if t.startswith(("9p=", "virtiofs"))] or targets, ["--job", str(read_job),
                   *common]),
        }  # fmt: skip
        for study, (chosen, extra) in runs.items():
            if args.smoke and study != "S3":
                continue
            out = f"{guest.guest_results}/{study}.json"
            status: list[str] = []
            guest.run_in_guest(mountbench_command(chosen, extra, out), status.append)
            path = guest.results_path / f"{study}.json"
            if path.exists():
                docs[study] = json.loads(path.read_text())
            else:
                failed.append(f"mountbench {study}: {' '.join(status)[-200:]}")
    wall = time.monotonic() - started
    print(f"the studies in the lab ({accel or '?'}; {format_bytes(size)} per point, tree {tree_name}, "
          f"mountbench {repeat} round(s)); {wall:.0f} s")  # fmt: skip
    report(hand, docs, labels, block_sizes, size)
    for line in failed:
        print(f"FAILED {line}")
    if failed and args.smoke:
        sys.exit(1)


def report(hand: dict, docs: dict, labels: dict[str, str], block_sizes: tuple[str, ...], size: int) -> None:
    mb_s = lambda seconds: size / seconds / 1e6  # noqa: E731
    print("\nS3 (9p write as dd does it; study: cache=loose 6.6x faster at bs=32k, loose best at 4M)")
    print(f"  {'block':>6} {'target':<14} {'by hand MB/s':>13} {'mountbench MB/s':>16}")
    s3 = medians(docs["S3"], "write.bw") if "S3" in docs else {}
    for bs in block_sizes:
        for slug in ("9p", "9p-cache-loose"):
            own = hand.get(("S3", slug, f"dd-bs={bs}"))
            ours = next((v for (w, t), v in s3.items() if t == slug and w.endswith(f"bs={bs}")), None)
            print(f"  {bs:>6} {labels.get(slug, slug):<14} {mb_s(own) if own else float('nan'):>13.1f} "
                  f"{ours / 1e6 if ours else float('nan'):>16.1f}")  # fmt: skip
    none, loose = hand.get(("S3", "9p", "dd-bs=32k")), hand.get(("S3", "9p-cache-loose", "dd-bs=32k"))
    if none and loose:
        print(f"  loose vs none at 32k, by hand: {none / loose:.2f}x")
    if s3:
        none = next((v for (w, t), v in s3.items() if t == "9p" and w.endswith("bs=32k")), None)
        loose = next((v for (w, t), v in s3.items() if t == "9p-cache-loose" and w.endswith("bs=32k")), None)
        if none and loose:
            print(f"  loose vs none at 32k, mountbench: {loose / none:.2f}x")
    print("\nS0 (tar -x of the tree; study: native 2 s < virtiofs 5.5 s < sshfs 15.8 s < 9p 32 s)")
    s0 = medians(docs["S0"], "wall") if "S0" in docs else {}
    for slug, label in labels.items():
        own = hand.get(("S0", slug, "tar-x"))
        ours = next((v for (w, t), v in s0.items() if t == slug), None)
        print(f"  {label:<14} by hand {own if own else float('nan'):7.2f} s   mountbench {ours or float('nan'):7.2f} s")
    print("\nS1 (sequential read, page cache dropped; virtiofs against 9p)")
    s1 = medians(docs["S1"], "read.bw") if "S1" in docs else {}
    for slug, label in labels.items():
        own = hand.get(("S1", slug, "dd-read"))
        ours = next((v for (w, t), v in s1.items() if t == slug), None)
        if own or ours:
            print(f"  {label:<14} by hand {mb_s(own) if own else float('nan'):8.1f} MB/s   "
                  f"mountbench {ours / 1e6 if ours else float('nan'):8.1f} MB/s")  # fmt: skip


if __name__ == "__main__":
    main()
