"""Where the variance is: how much a fio figure varies at each level of the experiment, so
the design repeats where the variance arises (Kalibera & Jones, "Rigorous benchmarking in
reasonable time", ISMM 2013).

For each directory and workload, R rounds; in each round the working file is laid out anew
(as `--file-state per-round` does) and K samples run back to back on it, each with fio's
interval log (100 ms). On the logarithm of the figure (IOPS or bandwidth), the variance
splits into three nested levels:

  - between rounds (a new layout, and whatever drifted meanwhile),
  - between back-to-back samples of one round (same file, seconds apart),
  - within a sample (fio's 100 ms intervals around the sample's own mean).

It prints each level's standard deviation (in % of the figure, as log sd x 100) and its
share of a sample's total variance, then what that means for the design: with the round
as the unit of replication, a round's extra samples only average the within-round part.

Plain fio does the I/O (no mountbench in the timed path), so the figures are the storage's.

usage: python bench/variance.py [--dir DIR ...] [--rounds R] [--samples K] [--runtime S] [--smoke]
--smoke: one directory in /dev/shm, 2 rounds x 2 samples of 0.3 s: seconds; the test suite runs it.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

WORKLOADS = {
    "rnd4k-q1-read": ("randread", "4k", 1, "iops"),
    "rnd4k-q32-write": ("randwrite", "4k", 32, "iops"),
    "seq1m-q8-read": ("read", "1M", 8, "bw"),
}
INTERVAL_MS = 100


def job_text(name: str, directory: Path, size_mib: int, runtime_s: float, log_stem: Path) -> str:
    rw, bs, depth, _ = WORKLOADS[name]
    return "\n".join(
        [
            f"[{name}]",
            f"directory={directory}",
            "filename=variance.data",
            f"size={size_mib}M",
            f"rw={rw}",
            f"bs={bs}",
            "ioengine=libaio",
            f"iodepth={depth}",
            "direct=1",
            "time_based=1",
            f"runtime={int(runtime_s * 1000)}ms",
            "clocksource=clock_gettime",
            f"write_iops_log={log_stem}",
            f"write_bw_log={log_stem}",
            f"log_avg_msec={INTERVAL_MS}",
            "per_job_logs=0",
            "",
        ]
    )


def lay_out(directory: Path, size_mib: int) -> None:
    """A new file, written fully (the way per-round preconditioning lays one out)."""
    path = directory / "variance.data"
    path.unlink(missing_ok=True)
    subprocess.run(
        ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={size_mib}", "conv=fsync", "status=none"], check=True
    )


def direct_works(directory: Path) -> bool:
    probe = subprocess.run(
        ["dd", "if=/dev/zero", f"of={directory / 'odirect.probe'}", "bs=4k", "count=1", "oflag=direct",
         "status=none"],
        capture_output=True,
    )  # fmt: skip
    (directory / "odirect.probe").unlink(missing_ok=True)
    return probe.returncode == 0


def one_sample(name: str, directory: Path, size_mib: int, runtime_s: float, work: Path) -> tuple[float, list[float]]:
    """(the sample's figure, its 100 ms interval values), both in the workload's unit."""
    stem = work / f"log-{name}"
    job = work / f"{name}.fio"
    text = job_text(name, directory, size_mib, runtime_s, stem)
    if not direct_works(directory):
        text = text.replace("direct=1", "direct=0")
    job.write_text(text)
    done = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True, text=True, check=True)
    data = json.loads(done.stdout[done.stdout.index("{") :])
    _rw, _bs, _depth, metric = WORKLOADS[name]
    side = "write" if "write" in WORKLOADS[name][0] else "read"
    stats = data["jobs"][0][side]
    figure = float(stats["iops"] if metric == "iops" else stats["bw_bytes"])
    log = Path(f"{stem}_{metric}.log")
    values = []
    for line in log.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and float(parts[1]) > 0:
            values.append(float(parts[1]) * (1 if metric == "iops" else 1024))  # bw log: KiB/s
    for extra in work.glob("log-*"):
        extra.unlink()
    return figure, values


def components(rounds: list[list[tuple[float, list[float]]]]) -> dict[str, float]:
    """Variances on the log scale at each level (method of moments on the nested design)."""
    logs = [[math.log(figure) for figure, _ in samples] for samples in rounds]
    round_means = [statistics.fmean(r) for r in logs]
    within_round = statistics.fmean(statistics.variance(r) for r in logs) if all(len(r) > 1 for r in logs) else 0.0
    k = min(len(r) for r in logs)
    between_rounds = max(0.0, statistics.variance(round_means) - within_round / k) if len(logs) > 1 else 0.0
    intervals = [
        statistics.variance([math.log(v) for v in values]) for samples in rounds for _, values in samples
        if len(values) > 2
    ]  # fmt: skip
    within_sample = statistics.fmean(intervals) if intervals else 0.0
    return {
        "between rounds": between_rounds,
        "between back-to-back samples": within_round,
        "within a sample": within_sample,
    }


def report(name: str, label: str, parts: dict[str, float], rounds: int, samples: int, runtime_s: float) -> None:
    sample_total = parts["between rounds"] + parts["between back-to-back samples"]
    print(f"{label} · {name} ({rounds} rounds x {samples} samples of {runtime_s:g} s)")
    for level, variance in parts.items():
        share = (
            f"{100 * variance / sample_total:5.1f} % of a sample's"
            if level != "within a sample" and sample_total
            else ""
        )
        print(f"  {level:<30} sd {100 * math.sqrt(variance):6.2f} %  {share}")
    intervals_per_sample = max(1, int(runtime_s * 1000 / INTERVAL_MS))
    implied = math.sqrt(parts["within a sample"] / intervals_per_sample) if parts["within a sample"] else 0.0
    print(f"  (a sample's mean over {intervals_per_sample} intervals would vary by ~{100 * implied:.2f} % from "
          "within-sample noise alone, if intervals were independent)")  # fmt: skip
    if sample_total:
        rounds_share = parts["between rounds"] / sample_total
        verdict = (
            "rounds (new layouts) carry most of it: replicate rounds, not samples within a round"
            if rounds_share >= 0.5
            else "back-to-back samples vary as much as rounds do: a round is a fair unit, and longer samples help"
        )
        print(f"  -> {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", action="append", type=Path, default=[])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--runtime", type=float, default=1.0)
    parser.add_argument("--size", type=int, default=256, help="MiB")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed")
    names = list(WORKLOADS)
    made: list[Path] = []
    if args.smoke:
        args.rounds, args.samples, args.runtime, args.size = 2, 2, 0.3, 16
        names = names[:1]
    if not args.dir:
        made.append(Path(tempfile.mkdtemp(prefix="mountbench-variance-", dir="/dev/shm")))
        args.dir = made[:]
    try:
        for directory in args.dir:
            work = Path(tempfile.mkdtemp(prefix="mountbench-variance-work-"))
            scratch = Path(tempfile.mkdtemp(prefix=".mountbench-variance-", dir=directory))
            try:
                for name in names:
                    rounds = []
                    for _ in range(args.rounds):
                        lay_out(scratch, args.size)
                        rounds.append([one_sample(name, scratch, args.size, args.runtime, work)
                                       for _ in range(args.samples)])  # fmt: skip
                    report(name, str(directory), components(rounds), args.rounds, args.samples, args.runtime)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
                shutil.rmtree(work, ignore_errors=True)
    finally:
        for path in made:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
