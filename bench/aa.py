"""A/A: how often does the default run call two directories of one filesystem different?

Two directories of one filesystem hold the same storage: every comparison between them
must come out "the same" or "undecided", never faster or slower, except for the share
that a 95 % interval allows by chance (5 %). For each filesystem (tmpfs, /dev/shm, and a
directory pair on the VM's disk, --disk) the default run (`mountbench run a=DIR b=DIR`,
preset quick under its default budget, no other option) is repeated --runs times; every
comparison of every run is counted by its verdict (better, worse, same, undecided,
unknown) from the run's JSON export. Printed per filesystem and in total: the share
called faster or slower, and the largest such factor.

Goal (issue 46): at most 5 % of the runs call anything faster or slower (issue 23's before: at most 5 % of
the comparisons, none at 1.10× or more). Say `-- --until 5%` for the adaptive runs.

usage: python bench/aa.py [--runs 10] [--disk /var/tmp] [--shm /dev/shm] [--only tmpfs|disk]
       [-- extra run options, e.g. -- --repeat 3]
       python bench/aa.py --smoke   (one short run on tmpfs: the script works)
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import MOUNTBENCH, check, load, timed

DIFFERENT = ("better", "worse")
GOAL_SHARE = 0.05


def verdicts(document: dict) -> list[tuple[str, str, str, float | None, str]]:
    """(workload, metric, verdict, factor, comparison) of every non-baseline row."""
    return [
        (row["workload"], row["metric"], row["verdict"], row["factor"], row["comparison"])
        for row in document["summary"]
        if row["target"] != row["baseline"]
    ]


def one_run(directories: tuple[Path, Path], work: Path, index: int, extra: list[str]) -> tuple[float, list]:
    out = work / f"aa-{index}.json"
    argv = [*MOUNTBENCH, "run", f"a={directories[0]}", f"b={directories[1]}", "--db", str(work / "db.sqlite")]
    wall, proc = timed([*argv, "--json", str(out), *extra])
    check(proc)
    return wall, verdicts(json.loads(out.read_text()))


def study(name: str, parent: Path, runs: int, work: Path, extra: list[str]) -> tuple[Counter, list, int]:
    """Every comparison of ``runs`` A/A runs in two fresh directories under ``parent``, and how many runs
    called anything different."""
    counts: Counter = Counter()
    called: list[tuple[int, str, str, float, str]] = []
    walls = []
    wrong_runs = 0
    a = Path(tempfile.mkdtemp(prefix="aa-a-", dir=parent))
    b = Path(tempfile.mkdtemp(prefix="aa-b-", dir=parent))
    try:
        for index in range(runs):
            wall, found = one_run((a, b), work, index, extra)
            walls.append(wall)
            for workload, metric, verdict, factor, text in found:
                counts[verdict] += 1
                if verdict in DIFFERENT:
                    called.append((index, workload, metric, factor or 1.0, text))
            run_calls = sum(1 for _, _, v, _, _ in found if v in DIFFERENT)
            wrong_runs += run_calls > 0
            print(f"  {name} run {index + 1}/{runs}: {wall:5.1f} s, {len(found)} comparisons, {run_calls} called "
                  f"different", flush=True)  # fmt: skip
    finally:
        shutil.rmtree(a, ignore_errors=True)
        shutil.rmtree(b, ignore_errors=True)
    print(f"  {name}: wall per run {min(walls):.1f}-{max(walls):.1f} s; runs calling anything different: "
          f"{wrong_runs} of {runs} ({load()})")  # fmt: skip
    return counts, called, wrong_runs


def report(name: str, counts: Counter, called: list) -> tuple[float, float]:
    total = sum(counts.values())
    share = len(called) / total if total else 0.0
    largest = max((factor for *_, factor, _ in called), default=1.0)
    kinds = ", ".join(f"{kind} {counts[kind]}" for kind in ("same", "undecided", "better", "worse", "unknown"))
    print(
        f"{name:6} {total:4d} comparisons ({kinds}): called faster/slower {len(called)} = {share:.1%}; "
        f"largest such factor {largest:.3f}×"
    )
    for index, workload, metric, _factor, text in called:
        print(f"         run {index + 1}: {workload} {metric}: {text}")
    return share, largest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="default runs per filesystem")
    parser.add_argument("--disk", default="/var/tmp", help="a directory on the VM's disk")
    parser.add_argument("--shm", default="/dev/shm", help="a directory on tmpfs")
    parser.add_argument("--only", choices=("tmpfs", "disk"), help="one filesystem only")
    parser.add_argument("--smoke", action="store_true", help="one short run on tmpfs: the script works")
    parser.add_argument("extra", nargs="*", help="run options after --, e.g. -- --repeat 3")
    args = parser.parse_args()
    extra = list(args.extra)
    places = {"tmpfs": Path(args.shm), "disk": Path(args.disk)}
    runs = args.runs
    if args.smoke:
        places, runs = {"tmpfs": Path(args.shm)}, 1
        extra = ["--repeat", "2", "--runtime", "0.2", "--size", "16M", "--only", "seq1m-q8-read", *extra]
    elif args.only:
        places = {args.only: places[args.only]}
    work = Path(tempfile.mkdtemp(prefix="aa-work-"))
    started = time.monotonic()
    print(f"A/A: the default run{' ' + ' '.join(extra) if extra else ''} on two directories of one filesystem, "
          f"{runs} runs each")  # fmt: skip
    totals: Counter = Counter()
    all_called: list = []
    wrong_runs = 0
    try:
        for name, parent in places.items():
            counts, called, wrong = study(name, parent, runs, work, extra)
            report(name, counts, called)
            totals += counts
            all_called += called
            wrong_runs += wrong
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report("all", totals, all_called)
    all_runs = runs * len(places)
    ok = wrong_runs <= GOAL_SHARE * all_runs
    print(
        f"runs calling anything faster/slower: {wrong_runs} of {all_runs}; goal (≤ {GOAL_SHARE:.0%} of runs): "
        f"{'met' if ok else 'NOT met'} ({time.monotonic() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
