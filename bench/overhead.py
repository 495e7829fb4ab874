"""Overhead: how much of the default `mountbench run`'s wall time is mountbench's own.

Every fio process the run starts (the --parse-only checks, the clock test, the
untimed preconditioning and the samples) goes through a wrapper that logs its start
and end, so the figures are:
  - mountbench's own share: wall / sum of every fio process's wall time (target <= 1.03);
  - fio's own floor per process: process wall - the job's configured runtime, for the
    samples (plain fio pays it too, so it is printed apart and not counted against
    mountbench);
  - wall / sum of the samples' configured runtimes, for reference.

usage: python bench/overhead.py [--dir DIR] [--smoke] [-- extra mountbench run args]

--smoke: one small workload, one round of 0.2 s, on --dir and a new directory in /dev/shm (the
default targets, /dev/shm itself included, may be another run's): seconds; the test suite runs it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import tempfile
from pathlib import Path

from _common import MOUNTBENCH, check, load_runs, timed

WRAPPER = """#!/bin/sh
start=$(date +%s.%N)
"{fio}" "$@"
status=$?
echo "$start $(date +%s.%N) $*" >> "{log}"
exit $status
"""

SMOKE = ["--only", "rnd4k-q1-read", "--repeat", "1", "--runtime", "0.2", "--size", "8M"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=".", help="directory to run in (the default target)")
    parser.add_argument("extra", nargs="*", help="extra arguments for mountbench run")
    parser.add_argument("--smoke", action="store_true", help="one small workload, one 0.2 s round")
    args = parser.parse_args()
    ram = None
    if args.smoke:
        # targets of its own: the default ones (here and /dev/shm itself) may be another run's
        ram = Path(tempfile.mkdtemp(prefix="overhead-ram-", dir="/dev/shm"))
        args.extra = [f"here={Path(args.dir).resolve()}", f"ram={ram}", *SMOKE, *args.extra]
    tmp = Path(tempfile.mkdtemp())
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    log = tmp / "fio-processes.log"
    real_fio = shutil.which("fio")
    assert real_fio, "fio is not installed"
    wrapper = bin_dir / "fio"
    wrapper.write_text(WRAPPER.format(fio=real_fio, log=log))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    out = tmp / "run.json"
    wall, proc = timed(
        [*MOUNTBENCH, "run", "--db", str(tmp / "db.sqlite"), "--json", str(out), *args.extra], cwd=args.dir, env=env
    )
    check(proc)
    (run,) = load_runs(out)
    processes = [line.split(" ", 2) for line in log.read_text().splitlines()]
    fio_total = sum(float(end) - float(start) for start, end, _ in processes)
    kinds = {"parse checks": 0.0, "clock test": 0.0, "samples": 0.0, "untimed (preconditioning, ...)": 0.0}
    for start, end, argv in processes:
        spent = float(end) - float(start)
        if "--parse-only" in argv:
            kinds["parse checks"] += spent
        elif "--cpuclock-test" in argv or argv.strip() in ("--version", "--enghelp"):
            kinds["clock test"] += spent
        elif "--output-format=json+" in argv:
            kinds["samples"] += spent
        else:
            kinds["untimed (preconditioning, ...)"] += spent
    runtimes = {w["name"]: w["description"]["duration_bound_s"] or 0.0 for w in run["workloads"]}
    configured = sum(runtimes[s["workload"]] for s in run["samples"])
    n = len(run["samples"])
    print(f"default run: {len(run['targets'])} targets, {len(run['workloads'])} workloads, {n} samples, "
          f"{len(processes)} fio processes")  # fmt: skip
    print(f"wall time                                {wall:8.1f} s")
    print(f"sum of every fio process's wall time     {fio_total:8.1f} s")
    for name, spent in kinds.items():
        print(f"  {name:38} {spent:8.1f} s")
    share = wall / fio_total
    verdict = "PASS" if share <= 1.03 else "FAIL"
    print(f"mountbench's own share: wall / fio       {share:8.3f}   (target <= 1.03: {verdict})")
    print(f"fio's own floor per sample               {(kinds['samples'] - configured) / n * 1000:8.0f} ms "
          "(process wall - configured runtime; plain fio pays it too)")  # fmt: skip
    print(f"wall / configured sample runtimes        {wall / configured:8.3f}")
    shutil.rmtree(tmp, ignore_errors=True)
    if ram is not None:
        shutil.rmtree(ram, ignore_errors=True)


if __name__ == "__main__":
    main()
