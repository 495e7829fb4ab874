"""First estimates: what a run says it will take, against what it took, for every preset a newcomer starts
with (issue 48: the tree preset said "at most 14m33s of I/O" and a first ETA of 13m05s for 288 s;
--until 10% "about 45 s" for 218 s; cdm 4m31s for 355 s).

Each case is one real run of `mountbench run` on two directories, a tmpfs (mounted here as root, else
/dev/shm) and one on /var/tmp's disk, in a database of its own (so nothing this machine took before is
known: the first estimate from the plan and the first samples alone) and then, with --history, again in the
same database (what this machine took before is known). Its stderr is read line by line as it comes:

- said: the opening line's estimate ("it takes about 36.0 s", "about 2m10s as this machine took before",
  "at most 302 s of I/O");
- first ETA: the first sample's line, its elapsed time plus its ETA (under --until or a budget an upper
  bound, "ETA ≤");
- real: from the start of the command to its last line.

The error is (estimate − real) / real; the goal is within ±50 % for the first ETA; under --until alone (whose
ETA is an upper bound: every round to --max-repeat) the opening line's range, the planned rounds' time to
every round's, must hold the real time within ±50 %. The machine's load is
printed: the figures are one run each on a shared machine.

usage: python bench/first_eta.py [--cases quick,cdm,tree,until10] [--history] [--smoke]
--smoke: the quick preset at --runtime 0.1 --repeat 1 with one workload, once (the test suite runs it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CASES = {
    "quick": [],
    "cdm": ["--preset", "cdm"],
    "tree": ["--preset", "tree"],
    "until10": ["--until", "10%"],
}
SMOKE = ["--runtime", "0.1", "--repeat", "1", "--only", "seq1m-q8-read", "--size", "16M"]
GOAL = 0.5


def seconds(text: str) -> float:
    """'54.0 s', '2m10s', '1h02m', '850 ms', '302 s' → seconds."""
    text = text.strip()
    if match := re.fullmatch(r"(\d+)h(\d+)m", text):
        return int(match[1]) * 3600 + int(match[2]) * 60
    if match := re.fullmatch(r"(\d+)m(\d+)s", text):
        return int(match[1]) * 60 + int(match[2])
    if match := re.fullmatch(r"([\d.]+) (ms|s)", text):
        return float(match[1]) / (1000 if match[2] == "ms" else 1)
    raise ValueError(text)


TIME = r"(\d+h\d+m|\d+m\d+s|[\d.]+ m?s)"


def opening_range(line: str) -> tuple[float, float] | None:
    """Under --until alone the opening line gives a range: the planned rounds, and every round to --max-repeat."""
    if match := re.search(rf"planned rounds about {TIME} .*?at most {TIME} if comparisons stay undecided", line):
        return seconds(match[1]), seconds(match[2])
    return None


def opening_estimate(line: str) -> tuple[str, float] | None:
    """What the opening line says the run takes: (how it says it, seconds)."""
    for pattern, how in (
        (rf"it takes about {TIME}", "about"),
        (rf"about {TIME} as this machine took before", "as before"),
        (rf"ends within its --budget of {TIME}", "within budget"),
        (rf"about {TIME} of I/O", "about (I/O)"),
        (rf"at most {TIME} of I/O", "at most (I/O)"),
    ):
        if match := re.search(pattern, line):
            return how, seconds(match[1])
    return None


def run_case(argv: list[str], env: dict[str, str]) -> dict[str, object]:
    """One run, its stderr read as it comes: the opening estimate, the first ETA, the real time."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    opening, first_eta, said, span = "", None, None, None
    buffered: list[str] = []
    for line in proc.stderr:
        if not opening:
            opening = line
        elif said is None and not re.match(r"\s+\d+/\d+ ", line):
            opening += line  # the opening sentence wraps over several lines
        if said is None and re.match(r"\s+\d+/\d+ ", line):
            said = opening_estimate(" ".join(opening.split()))
            said = said or ("none", float("nan"))
            span = opening_range(" ".join(opening.split()))
        buffered.append(line)
        joined = " ".join(" ".join(buffered[-3:]).split())
        if first_eta is None and (match := re.search(rf"(\d+ s|\d+m\d+s) elapsed, ETA ≤? ?{TIME}", joined)):
            first_eta = seconds(match[1].replace(" s", " s")) + seconds(match[2])
    proc.wait()
    real = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{''.join(buffered[-10:])}")
    return {"said": said, "first": first_eta, "real": real, "range": span}


@contextlib.contextmanager
def tmpfs_dir() -> Iterator[Path]:
    """A tmpfs directory of the bench's own: mounted here as root, else one in /dev/shm."""
    root = Path(tempfile.mkdtemp(prefix="mb-first-eta-"))
    mounted = False
    try:
        if os.geteuid() == 0:
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2g", "mb-first-eta", str(root)], check=True)
            mounted = True
            yield root
        else:
            shm = Path(tempfile.mkdtemp(prefix="mb-first-eta-", dir="/dev/shm"))
            try:
                yield shm
            finally:
                shutil.rmtree(shm, ignore_errors=True)
    finally:
        if mounted:
            subprocess.run(["umount", str(root)], check=False)
        shutil.rmtree(root, ignore_errors=True)


def error(estimate: float | None, real: float) -> str:
    if estimate is None or estimate != estimate:
        return "–"
    return f"{(estimate - real) / real * 100:+.0f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated: {', '.join(CASES)}")
    parser.add_argument("--history", action="store_true", help="run each case again, knowing the first run")
    parser.add_argument("--smoke", action="store_true", help="one tiny run, no goal")
    args = parser.parse_args()
    cases = ["quick"] if args.smoke else [c.strip() for c in args.cases.split(",") if c.strip()]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; one run each (a shared machine)")
    print(f"{'case':<10} {'history':<8} {'opening says':<26} {'first ETA':>10} {'real':>8}  error (goal ±50 %)")
    missed = []
    with tmpfs_dir() as ram, tempfile.TemporaryDirectory(prefix="mb-first-eta-", dir="/var/tmp") as disk:
        for case in cases:
            with tempfile.TemporaryDirectory(prefix="mb-first-eta-db-") as db:
                env = dict(os.environ) | {"MOUNTBENCH_DB": str(Path(db) / "results.sqlite")}
                env.pop("COLUMNS", None)
                argv = [sys.executable, "-m", "mountbench", "run", f"ram={ram}", f"disk={disk}", *CASES[case]]
                argv += SMOKE if args.smoke else []
                for history in (False, True) if args.history else (False,):
                    found = run_case(argv, env)
                    how, said = found["said"] or ("none", float("nan"))
                    first, real = found["first"], found["real"]
                    print(f"{case:<10} {'yes' if history else 'no':<8} {how + ' ' + f'{said:.0f} s':<26} "
                          f"{first if first is not None else float('nan'):>8.0f} s {real:>6.0f} s  "
                          f"opening {error(said, real)}, first ETA {error(first, real)}")  # fmt: skip
                    span = found["range"]
                    if span:  # --until alone: the planned rounds' time to every round's, an upper bound
                        print(f"{'':<10} {'':<8} opening range {span[0]:.0f}–{span[1]:.0f} s: the real time "
                              f"{'inside' if span[0] * (1 - GOAL) <= real <= span[1] * (1 + GOAL) else 'outside'}"
                              " (±50 %); the first ETA is its upper bound")  # fmt: skip
                        inside = span[0] * (1 - GOAL) <= real <= span[1] * (1 + GOAL)
                    else:
                        inside = first is not None and abs(first - real) <= GOAL * real
                    if not inside:
                        missed.append(f"{case} ({'with' if history else 'without'} history)")
    if args.smoke:
        print("smoke: no goal")
        return
    print("first ETAs within ±50 %: " + ("all" if not missed else f"all but {', '.join(missed)}"))


if __name__ == "__main__":
    main()
