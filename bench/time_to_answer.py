"""Time to a trustworthy answer: how long adaptive repetitions take to decide every cell of
the quick preset, and whether their verdicts agree with a long reference run.

Two pairs of real targets:
  far:   the VM's disk (--disk, default /var/tmp) against tmpfs (/dev/shm);
  close: two directories on that same disk (no real difference expected).
For each pair: one adaptive run (`--until 5%`, and one `--budget 45s`), and one
reference run of 10 rounds x 5 s. Per cell the verdict is faster / slower / same
(the ratio's interval excludes 1 or not); agreement is the share of cells whose
adaptive verdict equals the reference's. A confident wrong verdict is one that says
faster where the reference says slower or the reverse.

Goal here: the far pair decided in <= 45 s with >= 95 % agreement; the close pair
'same' or a correct small difference, never a confident wrong one.

usage: python bench/time_to_answer.py [--disk /var/tmp] [--reference-rounds 10] [--reference-runtime 5] [--smoke]

--smoke: the far pair only, one small workload, a 2-round reference of 0.2 s jobs, adaptive runs capped at 3
rounds and a 10 s budget: seconds, no verdict worth reading (the test suite runs it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from _common import MOUNTBENCH, check, timed


def verdicts(document: dict) -> dict[tuple[str, str], str]:
    """(workload, metric) -> faster | slower | same | undecided, for the non-baseline target."""
    found = {}
    for row in document["summary"]:
        if row["target"] == row["baseline"] or row["ratio"] is None:
            continue
        better_up = row["higher_is_better"]
        if row["ratio_low"] is None:
            found[(row["workload"], row["metric"])] = "undecided"
        elif row["significant"]:
            higher = row["ratio"] > 1
            found[(row["workload"], row["metric"])] = "faster" if higher == better_up else "slower"
        else:
            found[(row["workload"], row["metric"])] = "same"
    return found


def run(label: str, targets: list[str], extra: list[str], work: Path) -> tuple[float, dict, dict]:
    out = work / f"{label}.json"
    argv = [*MOUNTBENCH, "run", *targets, "--preset", "quick", "--db", str(work / "db.sqlite"), "--json", str(out)]
    wall, proc = timed([*argv, *extra])
    check(proc)
    document = json.loads(out.read_text())
    rounds = {}
    for sample in document["runs"][0]["samples"]:
        key = (sample["target"], sample["workload"])
        rounds[key] = rounds.get(key, 0) + 1
    return wall, document, rounds


def compare(name: str, adaptive: dict, reference: dict) -> tuple[float, int]:
    agree = wrong = 0
    for key, expected in reference.items():
        got = adaptive.get(key, "missing")
        agree += got == expected
        wrong += {got, expected} == {"faster", "slower"}
        marker = (
            "" if got == expected else ("   <-- CONFIDENTLY WRONG" if {got, expected} == {"faster", "slower"} else "")
        )
        print(f"  {name:8} {key[0]:18} {key[1]:11} adaptive {got:9} reference {expected:9}{marker}")
    return agree / max(1, len(reference)), wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--disk", default="/var/tmp", help="a directory on the VM's disk")
    parser.add_argument("--reference-rounds", type=int, default=10)
    parser.add_argument("--reference-runtime", type=float, default=5.0)
    parser.add_argument("--budget", default="45s")
    parser.add_argument("--smoke", action="store_true", help="the far pair, one small workload, capped runs")
    args = parser.parse_args()
    common: list[str] = []
    if args.smoke:
        args.reference_rounds, args.reference_runtime, args.budget = 2, 0.2, "10s"
        common = ["--only", "rnd4k-q1-read", "--size", "8M", "--max-repeat", "3"]
    work = Path(tempfile.mkdtemp(prefix="time-to-answer-"))
    disk_a = Path(tempfile.mkdtemp(prefix="tta-a-", dir=args.disk))
    disk_b = Path(tempfile.mkdtemp(prefix="tta-b-", dir=args.disk))
    ram = Path(tempfile.mkdtemp(prefix="tta-ram-", dir="/dev/shm")) if args.smoke else Path("/dev/shm")
    pairs = {"far": [f"ram={ram}", f"disk={disk_a}"], "close": [f"a={disk_a}", f"b={disk_b}"]}
    if args.smoke:  # and a directory of its own in /dev/shm: /dev/shm itself may be another run's target
        del pairs["close"]
    try:
        for name, targets in pairs.items():
            print(f"== {name} pair: {' vs '.join(targets)}")
            reference_wall, reference, _ = run(
                f"{name}-reference",
                targets,
                ["--repeat", str(args.reference_rounds), "--runtime", str(args.reference_runtime), *common],
                work,
            )
            expected = verdicts(reference)
            print(f"reference: {args.reference_rounds} rounds x {args.reference_runtime:g} s in {reference_wall:.0f} s")
            for mode, extra in (("until", ["--until", "5%"]), ("budget", ["--budget", args.budget])):
                extra += [*common, "--runtime", "0.2"] if args.smoke else []
                wall, document, rounds = run(f"{name}-{mode}", targets, extra, work)
                agreement, wrong = compare(mode, verdicts(document), expected)
                spread = f"{min(rounds.values())}-{max(rounds.values())} rounds per cell"
                print(
                    f"{name} {mode:6}: {wall:6.1f} s to the answer ({spread}); agreement with the reference "
                    f"{agreement:.0%}; confidently wrong: {wrong}"
                )
    finally:
        shutil.rmtree(disk_a, ignore_errors=True)
        shutil.rmtree(disk_b, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
        if args.smoke:
            shutil.rmtree(ram, ignore_errors=True)


if __name__ == "__main__":
    main()
