"""Time to a trustworthy answer: how long adaptive repetitions take to decide every cell of
the quick preset, and whether their verdicts agree with a long reference run.

Two pairs of real targets:
  far:   the VM's disk (--disk, default /var/tmp) against tmpfs (/dev/shm);
  close: two directories on that same disk (no real difference expected).
For each pair: the default run (a plain `mountbench run A B`: quick under its default
budget), one adaptive run (`--until 5%`) and one `--budget 45s`, and one reference run
of 10 rounds x 5 s. Per cell the verdict is the run's own (better, worse, same,
undecided: three verdicts, analysis/stats.py); agreement is the share of cells whose
verdict equals the reference's, and "decided agreement" the share among the cells both
decided (better/worse/same). A confident wrong verdict is one that says better where
the reference says worse or the reverse, or better/worse where the reference says same.

Goal here: the far pair's default run answers in <= 45 s with >= 95 % agreement; the
close pair never a confident wrong verdict.

usage: python bench/time_to_answer.py [--disk /var/tmp] [--reference-rounds 10] [--reference-runtime 5]
       python bench/time_to_answer.py --smoke   (tiny runs: the script works)
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from _common import MOUNTBENCH, check, timed


def verdicts(document: dict) -> dict[tuple[str, str], str]:
    """(workload, metric) -> better | worse | same | undecided | unknown, for the non-baseline target."""
    return {
        (row["workload"], row["metric"]): row["verdict"]
        for row in document["summary"]
        if row["target"] != row["baseline"] and row["ratio"] is not None
    }


DECIDED = ("better", "worse", "same")


def confidently_wrong(got: str, expected: str) -> bool:
    return got in ("better", "worse") and expected in DECIDED and got != expected


def run(label: str, targets: list[str], extra: list[str], work: Path) -> tuple[float, dict, dict]:
    out = work / f"{label}.json"
    argv = [*MOUNTBENCH, "run", *targets, "--db", str(work / "db.sqlite"), "--json", str(out)]
    wall, proc = timed([*argv, *extra])
    check(proc)
    document = json.loads(out.read_text())
    rounds = {}
    for sample in document["runs"][0]["samples"]:
        key = (sample["target"], sample["workload"])
        rounds[key] = rounds.get(key, 0) + 1
    return wall, document, rounds


def compare(name: str, adaptive: dict, reference: dict) -> tuple[float, float, int]:
    """(agreement, agreement among the cells both decided, confidently wrong verdicts)."""
    agree = wrong = both = both_agree = 0
    for key, expected in reference.items():
        got = adaptive.get(key, "missing")
        agree += got == expected
        if got in DECIDED and expected in DECIDED:
            both += 1
            both_agree += got == expected
        bad = confidently_wrong(got, expected)
        wrong += bad
        marker = "   <-- CONFIDENTLY WRONG" if bad else ""
        print(f"  {name:8} {key[0]:18} {key[1]:11} {got:9} reference {expected:9}{marker}")
    return agree / max(1, len(reference)), both_agree / max(1, both), wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--disk", default="/var/tmp", help="a directory on the VM's disk")
    parser.add_argument("--reference-rounds", type=int, default=10)
    parser.add_argument("--reference-runtime", type=float, default=5.0)
    parser.add_argument("--budget", default="45s")
    parser.add_argument("--smoke", action="store_true", help="tiny runs of one workload: the script works")
    args = parser.parse_args()
    modes: dict[str, list[str]] = {"default": [], "until": ["--until", "5%"], "budget": ["--budget", args.budget]}
    reference_extra = ["--repeat", str(args.reference_rounds), "--runtime", str(args.reference_runtime)]
    if args.smoke:
        tiny = ["--only", "seq1m-q8-read", "--size", "16M"]
        modes = {"until": ["--until", "50%", "--max-repeat", "3", "--runtime", "0.2", *tiny]}
        reference_extra = ["--repeat", "2", "--runtime", "0.2", *tiny]
    work = Path(tempfile.mkdtemp(prefix="time-to-answer-"))
    disk_a = Path(tempfile.mkdtemp(prefix="tta-a-", dir=args.disk))
    disk_b = Path(tempfile.mkdtemp(prefix="tta-b-", dir=args.disk))
    pairs = {"far": ["ram=/dev/shm", f"disk={disk_a}"], "close": [f"a={disk_a}", f"b={disk_b}"]}
    if args.smoke:
        pairs = {"far": pairs["far"]}
    try:
        for name, targets in pairs.items():
            print(f"== {name} pair: {' vs '.join(targets)}", flush=True)
            reference_wall, reference, _ = run(f"{name}-reference", targets, reference_extra, work)
            expected = verdicts(reference)
            print(f"reference: {reference_extra} in {reference_wall:.0f} s", flush=True)
            for mode, extra in modes.items():
                wall, document, rounds = run(f"{name}-{mode}", targets, extra, work)
                agreement, decided, wrong = compare(mode, verdicts(document), expected)
                spread = f"{min(rounds.values())}-{max(rounds.values())} rounds per cell"
                print(
                    f"{name} {mode:7}: {wall:6.1f} s to the answer ({spread}); agreement with the reference "
                    f"{agreement:.0%} (where both decided: {decided:.0%}); confidently wrong: {wrong}",
                    flush=True,
                )
    finally:
        shutil.rmtree(disk_a, ignore_errors=True)
        shutil.rmtree(disk_b, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
