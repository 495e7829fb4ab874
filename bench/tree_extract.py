"""Tree workloads: generation speed, and extract timing against hyperfine.

1. The git profile (4,294 files, 43 MB) must generate in under 1 s on tmpfs.
2. mountbench's `extract` time (`mountbench run DIR --only extract --warmup 1`) against
   hyperfine --warmup 1 'tar -x --no-same-owner -f T -C DIR' --prepare 'rm -rf DIR; mkdir DIR; sync'
   (sync: mountbench starts every tree sample with no writeback backlog; --cleanup removes
   hyperfine's last tree, as mountbench removes its own) on the same target, interleaved
   in N pairs: the ratio of medians must lie in 0.95–1.05.

   Both sides warm up once: on ext4 here a run's first extraction is ~18% slower than
   the next. On a VM, extraction time also drifts with the machine's state over seconds
   (on this one samples cluster near 75 or 95 ms on tmpfs for a second or more), so the
   pairs are fine-grained (one sample a side, who goes first alternating), and the
   median of the per-pair ratios is printed too: it cancels that drift.

usage: python bench/tree_extract.py [--dir /dev/shm] [--pairs 60] [--runs 1] [--verbose] [--smoke]

--smoke: the tiny tree, generated once, one pair: seconds, no verdict worth reading (the test
suite runs it so a broken bench fails CI).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import MOUNTBENCH, check, load_runs, timed

from mountbench.kinds.tree import TreeRunner
from mountbench.kinds.trees import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/dev/shm", help="target directory (default /dev/shm)")
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--runs", type=int, default=1, help="samples per side in each pair")
    parser.add_argument("--verbose", action="store_true", help="print every pair's samples")
    parser.add_argument("--smoke", action="store_true", help="the tiny tree, generated once, one pair")
    args = parser.parse_args()
    profile, generations = ("tiny", 1) if args.smoke else ("git", 3)
    if args.smoke:
        args.pairs = 1

    gen_times = []
    for _ in range(generations):
        where = Path(tempfile.mkdtemp(dir="/dev/shm"))
        start = time.monotonic()
        generate(profile, 1, where)
        gen_times.append(time.monotonic() - start)
        shutil.rmtree(where)
    print(
        f"{profile} profile generation on tmpfs: {', '.join(f'{t:.2f}' for t in gen_times)} s "
        f"(target < 1 s: {'PASS' if max(gen_times) < 1 else 'FAIL'})"
    )

    archive = TreeRunner().archive({"profile": profile, "seed": 1})  # the very tar mountbench extracts
    if shutil.which("hyperfine") is None:
        raise SystemExit("hyperfine is not installed (apt-get install hyperfine)")
    base = Path(tempfile.mkdtemp(prefix="tree-bench-", dir=args.dir))
    work = Path(tempfile.mkdtemp())
    mb_times: list[float] = []
    hf_times: list[float] = []
    paired: list[float] = []  # each pair's mountbench median ÷ its hyperfine median
    try:
        target = base / "mb"
        target.mkdir()
        dest = base / "hf"
        for pair in range(args.pairs):
            # alternate who goes first, so neither always follows the other's clean-up
            sides = [_mountbench, _hyperfine] if pair % 2 == 0 else [_hyperfine, _mountbench]
            found = {side.__name__: side(args.runs, archive.path, target, dest, work, pair, profile) for side in sides}
            mb_times += found["_mountbench"]
            hf_times += found["_hyperfine"]
            paired.append(statistics.median(found["_mountbench"]) / statistics.median(found["_hyperfine"]))
            if args.verbose:
                print(f"  pair {pair}: mountbench {_ms(found['_mountbench'])} | hyperfine {_ms(found['_hyperfine'])}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    print("  mountbench samples (ms):", _ms(mb_times))
    print("  hyperfine samples (ms): ", _ms(hf_times))
    mb, hf = statistics.median(mb_times), statistics.median(hf_times)
    ratio = mb / hf
    low, high = _bootstrap_ratio_ci(mb_times, hf_times)
    print(f"extract on {args.dir}, {args.pairs} interleaved pairs × {args.runs} runs:")
    print(
        f"  mountbench median {mb * 1000:.1f} ms, hyperfine median {hf * 1000:.1f} ms, ratio {ratio:.3f} "
        f"(95% bootstrap CI {low:.3f}–{high:.3f}; target 0.95–1.05: {'PASS' if 0.95 <= ratio <= 1.05 else 'FAIL'})"
    )
    pair_ratio = statistics.median(paired)
    plow, phigh = _bootstrap_median_ci(paired)
    print(
        f"  paired: median of the {len(paired)} per-pair ratios {pair_ratio:.3f} "
        f"(95% bootstrap CI {plow:.3f}–{phigh:.3f}; "
        f"target 0.95–1.05: {'PASS' if 0.95 <= pair_ratio <= 1.05 else 'FAIL'})"
    )


def _mountbench(runs: int, tar: Path, target: Path, dest: Path, work: Path, pair: int, profile: str) -> list[float]:
    out = work / f"p{pair}.json"
    argv = [*MOUNTBENCH, "run", str(target), "--tree", profile, "--only", "extract", "--repeat", str(runs)]
    argv += ["--warmup", "1"]  # as hyperfine's side does
    check(timed([*argv, "--db", str(work / "db.sqlite"), "--json", str(out)])[1])
    return [s["metrics"]["wall"] for s in load_runs(out)[0]["samples"]]


def _hyperfine(runs: int, tar: Path, target: Path, dest: Path, work: Path, pair: int, profile: str) -> list[float]:
    out = work / f"h{pair}.json"
    argv = ["hyperfine", "--warmup", "1", "--runs", str(runs), "--export-json", str(out)]
    d, t = shlex.quote(str(dest)), shlex.quote(str(tar))
    argv += ["--prepare", f"rm -rf {d}; mkdir {d}; sync", f"tar -x --no-same-owner -f {t} -C {d}"]
    # like mountbench, leave no tree behind: the other side's next sample must not find one
    argv += ["--cleanup", f"rm -rf {d}"]
    check(timed(argv)[1])
    return json.loads(out.read_text())["results"][0]["times"]


def _bootstrap_ratio_ci(a: list[float], b: list[float], rounds: int = 10_000) -> tuple[float, float]:
    """95% percentile-bootstrap interval of median(a) / median(b)."""
    rng = np.random.default_rng(1)
    xa, xb = np.asarray(a), np.asarray(b)
    ratios = np.median(rng.choice(xa, (rounds, len(xa))), axis=1) / np.median(rng.choice(xb, (rounds, len(xb))), axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def _bootstrap_median_ci(values: list[float], rounds: int = 10_000) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    x = np.asarray(values)
    low, high = np.percentile(np.median(rng.choice(x, (rounds, len(x))), axis=1), [2.5, 97.5])
    return float(low), float(high)


def _ms(times: list[float]) -> str:
    return " ".join(f"{t * 1000:.0f}" for t in times)


if __name__ == "__main__":
    main()
