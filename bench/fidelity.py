"""Fidelity: are mountbench's numbers plain fio's numbers? An equivalence test.

For each workload of the quick preset and each target directory, N interleaved pairs
(default 20): one `mountbench run --only W --repeat 1 --keep` sample, then at once
the same job as a plain `fio` command line on the very file mountbench just measured
(mountbench preconditioned it: written fully before its sample, so both harnesses
write into the same steady file). Per workload the pooled ratio mountbench / plain
fio is the geometric mean of the pairs' ratios, with a 95 % t-interval on their
logarithms; the target is that interval inside 0.97-1.03 (equivalence, TOST-style).

--control puts plain fio in mountbench's place (after the same preconditioning job),
so the same procedure shows this machine's own noise floor next to the figures.

Why pairs on one file: on tmpfs in a VM how fast a file reads depends on where its
pages landed (one 256 MiB file read at 5.8-6.1 GB/s, another at 7.0-8.8 GB/s);
comparing two harnesses on two files measures the files.

usage: python bench/fidelity.py [--dir /dev/shm --dir /var/tmp] [--pairs 20] [--runtime 1] [--control]
       python bench/fidelity.py --smoke --dir DIR   (one pair of one workload: the script works)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import MOUNTBENCH, check, load_runs, timed
from scipy.special import stdtrit

from mountbench.fio.jobfile import FioJob
from mountbench.kinds.fiofiles import precondition_job
from mountbench.presets import load_preset

BAND = (0.97, 1.03)


def plain_fio(job: FioJob, directory: Path, runtime: float | None) -> dict[str, float]:
    """The job as a plain fio command line: its IOPS and bandwidth per direction."""
    args = ["fio", f"--name={job.section}", f"--directory={directory}", "--output-format=json"]
    for key, value in job.options:
        if key == "runtime" and runtime is not None:
            value = f"{round(runtime * 1000)}ms"
        args.append(f"--{key}" if value is None else f"--{key}={value}")
    proc = check(timed(args)[1])
    doc = json.loads(proc.stdout[proc.stdout.find("{") :])
    found = {}
    for direction in ("read", "write"):
        stats = doc["jobs"][0][direction]
        if stats["io_bytes"]:
            found[f"{direction}.iops"] = stats["iops"]
            found[f"{direction}.bw"] = stats["bw_bytes"]
    return found


def precondition(job: FioJob, directory: Path) -> None:
    """The untimed job mountbench runs before a file's first sample."""
    text = precondition_job(job, directory, direct=True, extra=[])
    subprocess.run(["fio", "-"], input=text, capture_output=True, text=True, check=True)


def mountbench_sample(directory: Path, workload: str, db: Path, out: Path, runtime: float | None) -> tuple:
    argv = [*MOUNTBENCH, "run", str(directory), "--keep", "--preset", "quick", "--only", workload, "--repeat", "1"]
    argv += ["--db", str(db), "--json", str(out)] + (["--runtime", str(runtime)] if runtime else [])
    check(timed(argv)[1])
    ((sample,),) = (run["samples"] for run in load_runs(out))
    (scratch,) = directory.glob(".mountbench-*")
    return {k: v for k, v in sample["metrics"].items() if k.endswith((".iops", ".bw"))}, scratch


def pooled(ratios: list[float]) -> tuple[float, float, float]:
    """Geometric mean of the ratios and its 95 % t-interval."""
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), math.nan, math.nan
    half = float(stdtrit(len(logs) - 1, 0.975)) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", action="append", help="a target directory (repeatable; default /dev/shm, /var/tmp)")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--runtime", type=float, default=1.0, help="every job's runtime (s)")
    parser.add_argument("--control", action="store_true", help="plain fio on both sides: this machine's noise floor")
    parser.add_argument("--smoke", action="store_true", help="one pair of one workload: the script works")
    args = parser.parse_args()
    if args.smoke:
        args.pairs, args.runtime = 1, 0.2
    directories = [Path(d) for d in (args.dir or ["/dev/shm", "/var/tmp"])]
    db = Path(tempfile.mkdtemp()) / "bench.sqlite"
    preset = load_preset("quick")
    first = "plain fio (control)" if args.control else "mountbench"
    for base_dir in directories:
        base = Path(tempfile.mkdtemp(prefix="fidelity-", dir=base_dir))
        ratios: dict[str, list[float]] = {}
        try:
            for pair in range(args.pairs):
                workloads = list(preset.workloads)
                random.Random(pair).shuffle(workloads)
                if args.smoke:
                    workloads = [w for w in preset.workloads if w.name == "seq1m-q8-read"]
                for workload in workloads:
                    job = FioJob.from_spec(workload.spec)
                    target = base / f"t{pair}-{workload.name}"
                    target.mkdir()
                    if args.control:
                        scratch = target / "control"
                        scratch.mkdir()
                        precondition(job, scratch)
                        one = plain_fio(job, scratch, args.runtime)
                    else:
                        out = db.parent / f"pair{pair}-{workload.name}.json"
                        one, scratch = mountbench_sample(target, workload.name, db, out, args.runtime)
                    other = plain_fio(job, scratch, args.runtime)  # right after, on the same file
                    for metric, value in one.items():
                        if other.get(metric):
                            ratios.setdefault(f"{workload.name} {metric}", []).append(value / other[metric])
                    shutil.rmtree(target)
                print(f"{base_dir}: pair {pair + 1}/{args.pairs}", file=sys.stderr)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        print(f"fidelity on {base_dir}: {args.pairs} interleaved pairs per workload, {first} / plain fio, "
              f"{args.runtime:g} s jobs")  # fmt: skip
        print(f"{'workload metric':30} {'ratio':>7} {'95% CI':>17}  verdict")
        all_logs: list[float] = []
        for key in sorted(ratios):
            ratio, low, high = pooled(ratios[key])
            all_logs += ratios[key]
            inside = BAND[0] <= low and high <= BAND[1]
            print(f"{key:30} {ratio:7.3f} {low:8.3f}-{high:<8.3f}  {'equivalent' if inside else 'not shown'}")
        ratio, low, high = pooled(all_logs)
        print(f"{'all workloads pooled':30} {ratio:7.3f} {low:8.3f}-{high:<8.3f}")


if __name__ == "__main__":
    main()
