"""Placement: does where a target's working file lands in memory stay with the target for a whole run?

Two directories of one filesystem (default two new directories in /dev/shm), R rounds. In each
round, in alternating order (a, b / b, a / ...), each target's 256 MiB working file is laid out anew
the way `--file-state per-round` did it before issue 31's spacer (kinds/fiofiles.set_aside: the last
round's file renamed, the new one written fully, then the old one removed), and then one
sequential-read sample (1M, depth 8, direct, 0.5 s) runs on each, back to back. With --spacer, a file
of random size (0-256 MiB) is written before each layout and removed after it, so that the new file
starts at a random place in what the allocator hands out (mountbench now does that with an allocated,
unwritten spacer: kinds/fiofiles.place_spacer).

It prints the per-round ratio b / a, the mean log ratio with its paired t statistic (|t| well above
2 in an A/A pair: an effect of the run that pairing within it cannot see), and the share of rounds
in which b was slower. Plain fio does the I/O.

usage: python bench/placement.py [--dir DIR] [--rounds 12] [--spacer] [--seed N]
       python bench/placement.py --smoke   (3 rounds of 64 MiB: the script works)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from _common import load

ASIDE = ".previous"


def write(path: Path, size_mib: int) -> None:
    """Write ``path`` fully (plain fio, sequential 1M writes), as mountbench's per-round layout does."""
    argv = ["fio", "--name=layout", f"--filename={path}", f"--size={size_mib}M", "--rw=write", "--bs=1M",
            "--end_fsync=1", "--output-format=json", "--output=/dev/null"]  # fmt: skip
    subprocess.run(argv, check=True, capture_output=True)


def lay_out(directory: Path, size_mib: int, spacer_mib: int) -> None:
    data = directory / "work.data"
    old = directory / ("work.data" + ASIDE)
    if data.exists():
        data.rename(old)
    spacer = directory / "spacer.data"
    if spacer_mib:
        write(spacer, spacer_mib)
    write(data, size_mib)
    old.unlink(missing_ok=True)
    spacer.unlink(missing_ok=True)


def sample(directory: Path, size_mib: int, runtime_s: float) -> float:
    """Bandwidth (bytes/s) of one sequential-read sample on the laid-out file."""
    argv = ["fio", "--name=s", f"--filename={directory / 'work.data'}", f"--size={size_mib}M", "--rw=read",
            "--bs=1M", "--iodepth=8", "--ioengine=libaio", "--direct=1", "--time_based=1",
            f"--runtime={runtime_s}", "--output-format=json"]  # fmt: skip
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    return float(json.loads(done.stdout)["jobs"][0]["read"]["bw_bytes"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/dev/shm"), help="the filesystem's directory")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--size", type=int, default=256, help="MiB per working file")
    parser.add_argument("--runtime", type=float, default=0.5)
    parser.add_argument("--spacer", action="store_true", help="a random-size file before each layout")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.size, args.runtime = 3, 64, 0.2
    rng = random.Random(args.seed)
    a = Path(tempfile.mkdtemp(prefix="placement-a-", dir=args.dir))
    b = Path(tempfile.mkdtemp(prefix="placement-b-", dir=args.dir))
    print(f"placement: {args.rounds} rounds on {args.dir}, spacer {'on' if args.spacer else 'off'} ({load()})")
    logs = []
    try:
        for index in range(args.rounds):
            order = [("a", a), ("b", b)] if index % 2 == 0 else [("b", b), ("a", a)]
            for _, directory in order:
                lay_out(directory, args.size, rng.randrange(0, args.size + 1) if args.spacer else 0)
            speed = {label: sample(directory, args.size, args.runtime) for label, directory in order}
            logs.append(math.log(speed["b"] / speed["a"]))
            print(f"  round {index + 1:2d} ({order[0][0]} first): b/a {speed['b'] / speed['a']:.3f}")
    finally:
        shutil.rmtree(a, ignore_errors=True)
        shutil.rmtree(b, ignore_errors=True)
    mean = statistics.fmean(logs)
    spread = statistics.stdev(logs) if len(logs) > 1 else math.nan
    t = mean / (spread / math.sqrt(len(logs))) if spread else math.nan
    slower = sum(1 for x in logs if x < 0) / len(logs)
    print(f"b/a geometric mean {math.exp(mean):.3f}, per-round spread {spread * 100:.1f} %, paired t {t:.2f} "
          f"(|t| > 2.2 at 11 df: an effect of the run), b slower in {slower:.0%} of rounds ({load()})")  # fmt: skip


if __name__ == "__main__":
    main()
