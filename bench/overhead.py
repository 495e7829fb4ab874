"""Overhead: wall time of the default `mountbench run` against the I/O it runs.

Prints three figures for the default comparison (this directory vs /dev/shm,
preset quick, 3 repetitions):
  - wall / sum of the fio jobs' configured runtimes   (target ≤ 1.10)
  - wall / sum of the fio processes' own wall times   (mountbench's own share)
  - fio's fixed cost per job (process wall − runtime), which plain fio pays too

usage: python bench/overhead.py [--dir DIR] [-- extra mountbench run args]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import MOUNTBENCH, check, load_runs, timed

from mountbench.fiojob import FioJob, duration_bound_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=".", help="directory to run in (the default target)")
    parser.add_argument("extra", nargs="*", help="extra arguments for mountbench run")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    out = tmp / "run.json"
    wall, proc = timed(
        [*MOUNTBENCH, "run", "--db", str(tmp / "db.sqlite"), "--json", str(out), *args.extra], cwd=args.dir
    )
    check(proc)
    (run,) = load_runs(out)
    runtimes = {w["name"]: duration_bound_s(FioJob.from_spec(w["spec"])) or 0.0 for w in run["workloads"]}
    configured = sum(runtimes[s["workload"]] for s in run["samples"])
    fio_wall = sum(s["wall_s"] for s in run["samples"])
    n = len(run["samples"])
    print(f"default run: {len(run['targets'])} targets, {len(run['workloads'])} workloads, {n} samples")
    print(f"wall time                          {wall:8.1f} s")
    print(
        f"sum of fio runtimes (configured)   {configured:8.1f} s   wall/runtime = {wall / configured:.3f} "
        f"(target ≤ 1.10)"
    )
    print(
        f"sum of fio process wall times      {fio_wall:8.1f} s   wall/fio wall = {wall / fio_wall:.3f} "
        "(mountbench's own share)"
    )
    print(f"fio's own fixed cost per job       {(fio_wall - configured) / n * 1000:8.0f} ms (paid by plain fio too)")
    print(f"default run completes in under 2 minutes: {'yes' if wall < 120 else 'NO'}")


if __name__ == "__main__":
    main()
