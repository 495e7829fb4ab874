"""Scaling of `quick` with 1, 2 and 3 clients on this machine, and what the client/server
machinery costs: three network namespaces, `mountbench serve` in each, one run of
`mountbench run --client ×3 --clients 1,2,3` on a tmpfs and on a directory of this
machine's disk. Prints, per target and workload, the aggregate and per-client figures
with the efficiency against linear, then mountbench's wall time against the sum of fio's
own runtimes. Root only (namespaces, tmpfs).

    .venv/bin/python bench/clients_scaling.py [--disk DIR] [--repeat N] [--runtime S] [--size SIZE] [--smoke]

--smoke: one small workload (8 MiB, 0.2 s), one round, on the tmpfs only: seconds (the test
suite runs it so a broken bench fails CI).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support import netns, realmounts

from mountbench.fio.parse import load_fio_json
from mountbench.store import Store
from mountbench.units import format_count, format_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--disk", default="/work", help="a directory on this machine's disk (default /work)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runtime", help="override the preset's 2.5 s per job")
    parser.add_argument("--size", help="override the preset's 256 MiB working set")
    parser.add_argument("--smoke", action="store_true", help="one small workload, one short round")
    args = parser.parse_args()
    only: list[str] = []
    if args.smoke:
        args.repeat, args.runtime, args.size, only = 1, "0.2", "8M", ["--only", "rnd4k-q1-read"]
    with tempfile.TemporaryDirectory(prefix="mountbench-bench-") as home, realmounts.tmpfs("1g") as ram:
        disk = Path(tempfile.mkdtemp(prefix="mountbench-bench-disk-", dir=home if args.smoke else args.disk))
        targets = [f"tmpfs={ram}"] if args.smoke else [f"tmpfs={ram}", f"disk={disk}"]
        env = dict(os.environ, MOUNTBENCH_DB=str(Path(home) / "results.sqlite"))
        try:
            with netns.clients(3) as spaces:
                servers = [ns.serve(env=env) for ns in spaces]
                command = [sys.executable, "-m", "mountbench", "run", *[f"--client={s.client}" for s in servers],
                           "--clients", "1,2,3", *targets, "--preset", "quick",
                           "--repeat", str(args.repeat)]  # fmt: skip
                command += ["--runtime", args.runtime] if args.runtime else []
                command += ["--size", args.size] if args.size else []
                command += only
                print("$", " ".join(command[2:]).replace(sys.executable, "mountbench"), flush=True)
                t0 = time.monotonic()
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                wall = time.monotonic() - t0
                if done.returncode != 0:
                    sys.exit(f"mountbench failed ({done.returncode}): {done.stderr[-2000:]}")
        finally:
            subprocess.run(["rm", "-rf", str(disk)], check=False)
        with Store(Path(env["MOUNTBENCH_DB"])) as store:
            run = store.load_run("last", with_raw=True)
    report(run, wall)


def report(run, wall: float) -> None:
    by_cell: dict[tuple[str, str, int], list] = {}
    workloads = {w.name: w for w in run.workloads}
    for sample in run.samples:
        workload = workloads[sample.workload]
        base = workload.spec["job"]["name"]
        count = int(workload.description.sweep.number)
        by_cell.setdefault((sample.target, base, count), []).append(sample)
    print(f"\nrun {run.id}: {len(run.samples)} samples, {sum(not s.ok for s in run.samples)} failed\n")
    for target in run.target_labels():
        print(f"== {target}")
        bases = list(dict.fromkeys(base for t, base, _ in by_cell if t == target))
        for base in bases:
            metric = next(m for m in workloads[f"{base}-c1"].description.headline
                          if any(m in s.metrics for s in by_cell[(target, base, 1)]))  # fmt: skip
            show = format_rate if metric.endswith(".bw") else (lambda v: f"{format_count(v)} IOPS")
            one = statistics.median(s.metrics[metric] for s in by_cell[(target, base, 1)] if s.ok)
            cells = []
            for count in (1, 2, 3):
                samples = [s for s in by_cell[(target, base, count)] if s.ok]
                aggregate = statistics.median(s.metrics[metric] for s in samples)
                per_client = {}
                for s in samples:
                    for part in s.clients:
                        per_client.setdefault(part.client, []).append(part.metrics[metric])
                each = "/".join(show(statistics.median(v)) for v in per_client.values())
                cells.append(f"{count}: {show(aggregate)} [{each}] {aggregate / (one * count):.0%}")
            print(f"  {base:16} {metric:11} " + " | ".join(cells))
    fio_s = sum(_fio_runtime(s) for s in run.samples)
    sample_s = sum(s.wall_s for s in run.samples)
    print(
        f"\nwall time of the whole run {wall:.1f} s; sum of the samples' timed parts {sample_s:.1f} s; "
        f"sum of fio's own runtimes (the longest client of each sample) {fio_s:.1f} s "
        f"({wall / fio_s:.2f}x overall, {sample_s / fio_s:.2f}x per sample)"
    )


def _fio_runtime(sample) -> float:
    try:
        stats = load_fio_json(sample.raw)["client_stats"]
    except (ValueError, KeyError):
        return 0.0
    return max((e["job_runtime"] for e in stats if e["jobname"] != "All clients"), default=0) / 1000


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("run as root: it creates network namespaces and a tmpfs")
    main()
