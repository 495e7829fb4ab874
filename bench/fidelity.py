"""Fidelity: do mountbench's numbers match plain fio's for the same jobs?

For the quick preset on a tmpfs directory, alternate a mountbench run (all six
workloads, one sample each) with the same six jobs as plain `fio` command lines,
N pairs, and print per workload the ratio of mountbench's median to plain
fio's median for IOPS and bandwidth. Target: every ratio within 0.97–1.03.

usage: python bench/fidelity.py [--dir /dev/shm] [--pairs 5] [--runtime 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _common import MOUNTBENCH, check, load_runs, timed

from mountbench.fiojob import FioJob
from mountbench.presets import load_preset


def plain_fio_args(job: FioJob, directory: Path, runtime: float | None) -> list[str]:
    args = ["fio", f"--name={job.section}", f"--directory={directory}", "--output-format=json"]
    for key, value in job.options:
        if key == "runtime" and runtime is not None:
            value = f"{round(runtime * 1000)}ms"
        args.append(f"--{key}" if value is None else f"--{key}={value}")
    return args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/dev/shm", help="a tmpfs directory (default /dev/shm)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=float, default=None, help="override the preset's runtime")
    parser.add_argument("--verbose", action="store_true", help="print every sample")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="fidelity-", dir=args.dir))
    raw_dir = base / "raw"
    raw_dir.mkdir()
    mb_dir = base / "mb"
    mb_dir.mkdir()
    db = Path(tempfile.mkdtemp()) / "bench.sqlite"
    preset = load_preset("quick")
    mb_values: dict[str, list[float]] = {}
    raw_values: dict[str, list[float]] = {}
    try:
        for pair in range(args.pairs):
            out = db.parent / f"pair{pair}.json"
            extra = ["--runtime", str(args.runtime)] if args.runtime else []
            check(
                timed(
                    [
                        *MOUNTBENCH,
                        "run",
                        str(mb_dir),
                        "--preset",
                        "quick",
                        "--repeat",
                        "1",
                        "--seed",
                        str(pair),
                        "--db",
                        str(db),
                        "--json",
                        str(out),
                        *extra,
                    ]
                )[1]
            )
            (run,) = load_runs(out)
            for sample in run["samples"]:
                for metric, value in sample["metrics"].items():
                    if metric.endswith((".iops", ".bw")):
                        mb_values.setdefault(f"{sample['workload']} {metric}", []).append(value)
            # plain fio gets what mountbench's scratch directory had: a fresh directory, and the
            # jobs in the same (shuffled) order, so both lay out and reuse files alike
            shutil.rmtree(raw_dir)
            raw_dir.mkdir()
            by_name = {w.name: w for w in preset.workloads}
            order = [s["workload"] for s in sorted(run["samples"], key=lambda s: s["started_at"])]
            for workload in (by_name[name] for name in order):
                job = FioJob.from_spec(workload.spec)
                proc = check(timed(plain_fio_args(job, raw_dir, args.runtime))[1])
                doc = json.loads(proc.stdout[proc.stdout.find("{") :])
                for direction in ("read", "write"):
                    stats = doc["jobs"][0][direction]
                    if stats["io_bytes"]:
                        raw_values.setdefault(f"{workload.name} {direction}.iops", []).append(stats["iops"])
                        raw_values.setdefault(f"{workload.name} {direction}.bw", []).append(stats["bw_bytes"])
            print(f"pair {pair + 1}/{args.pairs} done", file=sys.stderr)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"fidelity on {args.dir}: median of {args.pairs} interleaved pairs, mountbench / plain fio")
    print(f"{'workload metric':34} {'mountbench':>14} {'plain fio':>14} {'ratio':>7}")
    worst = 0.0
    for key in sorted(mb_values):
        mb, raw = statistics.median(mb_values[key]), statistics.median(raw_values[key])
        ratio = mb / raw
        worst = max(worst, abs(ratio - 1))
        print(f"{key:34} {mb:14.4g} {raw:14.4g} {ratio:7.3f}")
        if args.verbose:
            print(f"    mountbench {' '.join(f'{v:.4g}' for v in mb_values[key])}")
            print(f"    plain fio  {' '.join(f'{v:.4g}' for v in raw_values[key])}")
    verdict = "PASS" if worst <= 0.03 else "FAIL"
    print(f"largest deviation {worst:.1%} (target ≤ 3%): {verdict}")


if __name__ == "__main__":
    main()
