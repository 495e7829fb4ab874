"""A/A for `run --against`: how often does a run on unchanged storage call its last run regressed?

On each filesystem (a directory on tmpfs, --shm, and one on the VM's disk, --disk) one run is made
(the default run, `mountbench run DIR`, unless options follow --), then --pairs more, each
`mountbench run DIR --against last --fail-on 10% --junit FILE`: each run against the one before it.
Nothing changed between them, so every comparison must come out within the threshold or undecided;
a pair that calls anything regressed (exit status 1) or improved is a false alarm. Counted per
filesystem and in total, from each run's exit status and JUnit file, with the machine's load.

Goal (issue 51): at most 5 % of the pairs called regressed.

usage: python bench/aa_against.py [--pairs 20] [--shm /dev/shm] [--disk /var/tmp] [--only tmpfs|disk]
       [--fail-on 10%] [-- extra options of the first run, e.g. -- --repeat 3]
       python bench/aa_against.py --smoke   (one short pair on tmpfs: the script works)
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from _common import MOUNTBENCH, load, timed

GOAL_SHARE = 0.05
VERDICT = re.compile(r": (regressed|improved|within ±[\d.]+%|undecided|no data):")


def verdicts(junit: Path) -> Counter:
    """Every comparison's verdict, from the testcases' system-out (one line a metric)."""
    found: Counter = Counter()
    for out in ET.parse(junit).getroot().iter("system-out"):
        for line in (out.text or "").splitlines():
            match = VERDICT.search(line)
            if match:
                found["within" if match.group(1).startswith("within") else match.group(1)] += 1
    return found


def chain(name: str, parent: Path, pairs: int, work: Path, extra: list[str], fail_on: str) -> tuple[int, int, Counter]:
    """One run, then ``pairs`` runs each against the one before, in a fresh directory under ``parent``:
    (pairs called regressed, pairs called improved, every comparison's verdict)."""
    directory = Path(tempfile.mkdtemp(prefix="aa-against-", dir=parent))
    db = ["--db", str(work / f"{name}.sqlite")]
    counts: Counter = Counter()
    regressed = improved = 0
    try:
        wall, proc = timed([*MOUNTBENCH, "run", str(directory), *db, *extra])
        if proc.returncode != 0:
            raise SystemExit(f"the first run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        print(f"  {name} run 0: {wall:5.1f} s, the first ({load()})", flush=True)
        for index in range(1, pairs + 1):
            junit = work / f"{name}-{index}.xml"
            wall, proc = timed([*MOUNTBENCH, "run", str(directory), *db, "--against", "last", "--fail-on", fail_on,
                                "--junit", str(junit)])  # fmt: skip
            if proc.returncode not in (0, 1):
                raise SystemExit(f"run {index} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
            found = verdicts(junit)
            counts += found
            regressed += proc.returncode == 1
            improved += found["improved"] > 0
            said = ", ".join(f"{verdict} {n}" for verdict, n in sorted(found.items()))
            print(f"  {name} pair {index}/{pairs}: {wall:5.1f} s, exit {proc.returncode}: {said} ({load()})",
                  flush=True)  # fmt: skip
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return regressed, improved, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20, help="pairs of runs per filesystem")
    parser.add_argument("--shm", default="/dev/shm", help="a directory on tmpfs")
    parser.add_argument("--disk", default="/var/tmp", help="a directory on the VM's disk")
    parser.add_argument("--only", choices=("tmpfs", "disk"), help="one filesystem only")
    parser.add_argument("--fail-on", default="10%", help="the threshold of every verdict")
    parser.add_argument("--smoke", action="store_true", help="one short pair on tmpfs: the script works")
    parser.add_argument("extra", nargs="*", help="options of the first run after --, e.g. -- --repeat 3")
    args = parser.parse_args()
    places = {"tmpfs": Path(args.shm), "disk": Path(args.disk)}
    pairs, extra = args.pairs, list(args.extra)
    if args.smoke:
        places, pairs = {"tmpfs": Path(args.shm)}, 1
        extra = ["--repeat", "2", "--runtime", "0.2", "--size", "16M", "--only", "seq1m-q8-read", *extra]
    elif args.only:
        places = {args.only: places[args.only]}
    work = Path(tempfile.mkdtemp(prefix="aa-against-work-"))
    started = time.monotonic()
    first = f"mountbench run DIR{' ' + ' '.join(extra) if extra else ''}"
    print(f"A/A against the last run: {first}, then {pairs} runs of DIR --against last --fail-on {args.fail_on} "
          f"on each filesystem ({load()})")  # fmt: skip
    total_regressed = total_improved = 0
    totals: Counter = Counter()
    try:
        for name, parent in places.items():
            regressed, improved, counts = chain(name, parent, pairs, work, extra, args.fail_on)
            totals += counts
            total_regressed += regressed
            total_improved += improved
            kinds = ", ".join(f"{verdict} {counts[verdict]}" for verdict in ("within", "undecided", "regressed",
                                                                             "improved", "no data"))  # fmt: skip
            print(f"{name:6} {sum(counts.values())} comparisons ({kinds}); pairs calling anything regressed: "
                  f"{regressed} of {pairs}, improved: {improved} of {pairs}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    all_pairs = pairs * len(places)
    ok = total_regressed <= GOAL_SHARE * all_pairs
    print(f"all    {sum(totals.values())} comparisons; pairs calling anything regressed: {total_regressed} of "
          f"{all_pairs} ({total_regressed / all_pairs:.1%}), improved: {total_improved}; goal (≤ {GOAL_SHARE:.0%} of "
          f"pairs regressed): {'met' if ok else 'NOT met'} ({time.monotonic() - started:.0f} s, {load()})")  # fmt: skip


if __name__ == "__main__":
    main()
