"""Container fidelity: is `mountbench containers`' bind-mount figure what fio run by hand in a
container gives on the same kind of mount?

Blocks alternate (default 4 of each, the order flipping every block): a `mountbench containers
--mount bind` run of one workload (default rnd4k-q32-read, --repeat 3), then the same job run
by hand as plain ``fio`` command lines (``podman exec CONTAINER fio --name=... --directory=...``),
3 times, in a container of the bench's own: the lab's image (the host's fio), a bind mount of a
host directory at /mnt/bind, each run on a file preconditioned as mountbench does. Per block the
ratio is mountbench's median over the hand-run median; over the blocks, the median block ratio with
its distribution-free 95 % interval (order statistics: robust to one block the VM's memory drift
hit, which happened in 1 of 10 blocks here), and the geometric mean with its t-interval beside it.
The issue's bar: within 0.9-1.1.

usage: python bench/container_fidelity.py [--blocks 4] [--per-block 3] [--runtime 1] [--workload rnd4k-q32-read]
       python bench/container_fidelity.py --smoke   (one block of each, one sample: the script works)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import MOUNTBENCH, check, geometric_interval, load_runs, median_interval, timed

from mountbench.fio.jobfile import FioJob
from mountbench.kinds.fiofiles import precondition_job
from mountbench.labs.containers.containerlab import ContainerLab
from mountbench.labs.containers.mounts import MOUNT_TYPES
from mountbench.presets import load_preset

BAND = (0.9, 1.1)
SIZE = "64M"


def metric_of(workload: str) -> str:
    return "read.iops" if "read" in workload else "write.iops"


def by_hand(lab: ContainerLab, job: FioJob, runtime: float, metric: str, index: int) -> float:
    """Precondition a fresh file as mountbench does, then run the job as a plain fio command line
    in the container; the metric fio reports."""
    where = f"/mnt/bind/by-hand-{index}"
    lab.exec_output(["mkdir", "-p", where])
    sized = FioJob.from_spec({"section": job.section, "options": [[k, SIZE if k == "size" else v] for k, v in
                                                                  job.options]})  # fmt: skip
    assert lab.lab is not None
    podman = lab.lab.podman
    text = precondition_job(sized, Path(where), direct=True, extra=[])
    subprocess.run(podman.argv(["exec", "-i", lab.lab.names.container, "fio", "-"]), input=text, env=podman.env,
                   capture_output=True, text=True, check=True)  # fmt: skip
    args = ["fio", f"--name={job.section}", f"--directory={where}", "--output-format=json"]
    for key, value in sized.options:
        if key == "runtime":
            value = f"{round(runtime * 1000)}ms"
        args.append(f"--{key}" if value is None else f"--{key}={value}")
    out = lab.exec_output(args)
    lab.exec_output(["rm", "-rf", where])
    doc = json.loads(out[out.find("{") :])
    direction, key = metric.split(".")
    return float(doc["jobs"][0][direction][key])


def mountbench_block(workload: str, repeat: int, runtime: float, work: Path, index: int) -> tuple[list[float], float]:
    out = work / f"block-{index}.json"
    argv = [
        *MOUNTBENCH,
        "containers",
        "--mount",
        "bind",
        "--no-probe",
        "--only",
        workload,
        "--repeat",
        str(repeat),
        "--runtime",
        str(runtime),
        "--size",
        SIZE,
        "--db",
        str(work / "bench.sqlite"),
        "--json",
        str(out),
    ]
    wall, proc = timed(argv)
    check(proc)
    (run,) = load_runs(out)
    values = [s["metrics"][metric_of(workload)] for s in run["samples"] if s["target"] == "bind" and s["ok"]]
    return values, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=4, help="blocks of each side")
    parser.add_argument("--per-block", type=int, default=3, help="samples per block on each side")
    parser.add_argument("--runtime", type=float, default=1.0)
    parser.add_argument("--workload", default="rnd4k-q32-read", help="a workload of the quick preset")
    parser.add_argument("--smoke", action="store_true", help="one block of each side, one sample: the script works")
    args = parser.parse_args()
    if args.smoke:
        args.blocks, args.per_block, args.runtime = 1, 1, 0.3
    (workload,) = [w for w in load_preset("quick").workloads if w.name == args.workload]
    job, metric = FioJob.from_spec(workload.spec), metric_of(args.workload)
    work = Path(tempfile.mkdtemp(prefix="container-fidelity-"))
    ratios: list[float] = []
    started = time.monotonic()
    with ContainerLab([MOUNT_TYPES["bind"]], on_note=lambda line: print(line, file=sys.stderr)) as lab:
        for block in range(args.blocks):
            sides = ["mountbench", "by hand"] if block % 2 == 0 else ["by hand", "mountbench"]
            figures: dict[str, list[float]] = {}
            for side in sides:
                if side == "mountbench":
                    figures[side], wall = mountbench_block(args.workload, args.per_block, args.runtime, work, block)
                else:
                    figures[side] = [by_hand(lab, job, args.runtime, metric, block * 100 + i)
                                     for i in range(args.per_block)]  # fmt: skip
            ratio = statistics.median(figures["mountbench"]) / statistics.median(figures["by hand"])
            ratios.append(ratio)
            ours, theirs = statistics.median(figures["mountbench"]), statistics.median(figures["by hand"])
            order = " first, ".join(sides) + " second"
            print(f"block {block + 1}/{args.blocks} ({order}): {metric} mountbench {ours:,.0f} vs by hand "
                  f"{theirs:,.0f} -> ratio {ratio:.3f} (its mountbench run: {wall:.0f} s)")  # fmt: skip
    middle, low, high = median_interval(ratios)
    mean, mean_low, mean_high = geometric_interval(ratios)
    inside = BAND[0] <= low and high <= BAND[1]
    verdict = "within" if inside else "not shown within"
    print(f"{args.workload} {metric} in the container's bind mount, mountbench / fio by hand over {args.blocks} "
          f"alternating blocks: median ratio {middle:.3f} (95% CI {low:.3f}-{high:.3f}); {verdict} {BAND[0]}-{BAND[1]} "
          f"(geometric mean {mean:.3f}, t-interval {mean_low:.3f}-{mean_high:.3f}); "
          f"{time.monotonic() - started:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
