"""Fidelity: do mountbench's numbers match plain fio's for the same jobs?

For the quick preset on a tmpfs directory, alternate mountbench and plain `fio`
command lines job by job: each of the six workloads, in a shuffled order, is one
`mountbench run --only W` sample followed at once by the same job as plain fio;
N pairs of each. Print per workload the ratio of mountbench's median to plain
fio's median for IOPS and bandwidth. Target: every ratio within 0.97–1.03.

Plain fio runs on the very file mountbench just measured (the run is made with
--keep and fio is pointed at its scratch directory). This matters on tmpfs in a
VM: how fast a file reads depends on where its pages landed in memory. Measured
here, one 256 MiB file read at 5.8-6.1 GB/s every time and another at 7.0-8.8
GB/s, alternating; comparing two harnesses on two different files measures the
files, not the harnesses. Pairing job by job keeps the two samples of a pair
seconds apart, so the machine's drift hits both.

--control puts plain fio in mountbench's place: the deviations it prints are
what this machine's noise alone produces with the same procedure.

usage: python bench/fidelity.py [--dir /dev/shm] [--pairs 5] [--runtime 3] [--control]
"""

from __future__ import annotations

import argparse
import json
import random
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


def add_plain(values: dict[str, list[float]], name: str, job: FioJob, directory: Path, runtime: float | None) -> None:
    """Run the job as a plain fio command line and keep its IOPS and bandwidth."""
    proc = check(timed(plain_fio_args(job, directory, runtime))[1])
    doc = json.loads(proc.stdout[proc.stdout.find("{") :])
    for direction in ("read", "write"):
        stats = doc["jobs"][0][direction]
        if stats["io_bytes"]:
            values.setdefault(f"{name} {direction}.iops", []).append(stats["iops"])
            values.setdefault(f"{name} {direction}.bw", []).append(stats["bw_bytes"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/dev/shm", help="a tmpfs directory (default /dev/shm)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=float, default=None, help="override the preset's runtime")
    parser.add_argument("--verbose", action="store_true", help="print every sample")
    parser.add_argument(
        "--control", action="store_true", help="plain fio on both sides: how far two identical harnesses differ here"
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="fidelity-", dir=args.dir))
    mb_dir = base / "mb"
    mb_dir.mkdir()
    db = Path(tempfile.mkdtemp()) / "bench.sqlite"
    preset = load_preset("quick")
    mb_values: dict[str, list[float]] = {}
    raw_values: dict[str, list[float]] = {}
    extra = ["--runtime", str(args.runtime)] if args.runtime else []
    try:
        for pair in range(args.pairs):
            workloads = list(preset.workloads)
            random.Random(pair).shuffle(workloads)
            for workload in workloads:
                job = FioJob.from_spec(workload.spec)
                if args.control:  # plain fio in mountbench's place: the machine's own noise floor
                    scratch = mb_dir / ".mountbench-control"
                    scratch.mkdir()
                    add_plain(mb_values, workload.name, job, scratch, args.runtime)
                else:
                    out = db.parent / f"pair{pair}-{workload.name}.json"
                    argv = [*MOUNTBENCH, "run", str(mb_dir), "--keep", "--preset", "quick", "--only", workload.name]
                    argv += ["--repeat", "1", "--db", str(db), "--json", str(out), *extra]
                    check(timed(argv)[1])
                    ((sample,),) = (run["samples"] for run in load_runs(out))
                    for metric, value in sample["metrics"].items():
                        if metric.endswith((".iops", ".bw")):
                            mb_values.setdefault(f"{workload.name} {metric}", []).append(value)
                    (scratch,) = mb_dir.glob(".mountbench-*")
                # right after, plain fio runs the same job on the file just measured
                add_plain(raw_values, workload.name, job, scratch, args.runtime)
                shutil.rmtree(scratch)
            print(f"pair {pair + 1}/{args.pairs} done", file=sys.stderr)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    first = "plain fio (control)" if args.control else "mountbench"
    print(f"fidelity on {args.dir}: median of {args.pairs} interleaved pairs, {first} / plain fio")
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
