"""Image fidelity: does mountbench in its image (the Containerfile), on a bind mount and a named
volume, give the figures `mountbench run` gives on the same two directories from the host?

It builds the image (scripts/build-image.sh, in a Podman state directory of its own, removed at
the end; or uses MOUNTBENCH_IMAGE (a tag) in MOUNTBENCH_IMAGE_STATE as they are), makes a host
directory and a named volume, then alternates pairs of runs with the same options (the quick
preset, --repeat, --runtime, --size): `mountbench run bind=DIR volume=VOLUME` on the host (the
volume by its directory in Podman's storage) and `podman run --rm -v DIR:/host -v VOLUME:/vol
IMAGE run bind=/host volume=/vol` in a fresh container, the order flipping every pair (host
first, container first, ...) so drift hits both sides alike. Both sides run fio 3.33 of Debian
bookworm on the same disk; what differs is the container (its mount namespace, cgroup, overlay
root) and the image's own Python and libraries.

Per pair and cell (target × workload): the ratio container / host of the medians of the cell's
headline metric (MB/s or IOPS). Per pair, the geometric mean of its cells: one figure per pair,
as cells of a pair share its moment; over the pairs, their geometric mean with its t-interval
and their median with a distribution-free interval. Per cell, the median over the pairs. The
issue's bar: within 0.9-1.1.

usage: python bench/image_fidelity.py [--pairs 6] [--repeat 3] [--runtime 1] [--size 64M] [--only GLOB]
       python bench/image_fidelity.py --smoke   (one pair, one workload, 0.3 s jobs: the script works)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from _common import MOUNTBENCH, check, geometric_interval, load, load_runs, median_interval, timed

from mountbench.labs.containers.podman import Podman

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "build-image.sh"
BAND = (0.9, 1.1)
TAG = "localhost/mountbench:fidelity"
VOLUME = "mbvol-fidelity"
TARGETS = ("bind", "volume")


@contextlib.contextmanager
def image() -> Iterator[tuple[Podman, str]]:
    """(podman with the image's settings, the image's tag): the one named by MOUNTBENCH_IMAGE in
    MOUNTBENCH_IMAGE_STATE as it is, or one built now in a state directory removed afterwards."""
    given, given_state = os.environ.get("MOUNTBENCH_IMAGE"), os.environ.get("MOUNTBENCH_IMAGE_STATE")
    if given and given_state:
        state = Path(given_state)
        print(f"image: {given} in {state}, as it is")
        yield Podman(state / "containers.conf", state / "storage.conf"), given
        return
    state = Path(tempfile.mkdtemp(prefix="image-fidelity-")) / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTAINERS_")}
    try:
        wall, proc = timed([str(SCRIPT), "--state", str(state), "--tag", TAG], env=env)
        check(proc)
        for line in proc.stdout.splitlines():
            if line.startswith(("wheel:", "base:", "image:")):
                print(line)
        print(f"image built in {wall:.0f} s")
        yield Podman(state / "containers.conf", state / "storage.conf"), TAG
    finally:
        subprocess.run([str(SCRIPT), "--remove", "--state", str(state)], env=env, capture_output=True, timeout=300)
        with contextlib.suppress(OSError):
            state.parent.rmdir()


def headline(run: dict, workload: str) -> str:
    """The workload's headline metric in the direction it moves (read.bw, write.iops, ...)."""
    (described,) = [w["description"] for w in run["workloads"] if w["name"] == workload]
    directions = tuple(described["directions"])
    return next(m for m in described["headline"] if m.startswith(directions))


def medians(run: dict) -> dict[tuple[str, str], float]:
    """(target, workload) -> the median of the headline metric over the cell's samples."""
    cells: dict[tuple[str, str], list[float]] = {}
    for sample in run["samples"]:
        if sample["ok"]:
            metric = headline(run, sample["workload"])
            cells.setdefault((sample["target"], sample["workload"]), []).append(sample["metrics"][metric])
    return {cell: statistics.median(values) for cell, values in cells.items()}


def run_options(args: argparse.Namespace) -> list[str]:
    only = [flag for pattern in args.only for flag in ("--only", pattern)]
    return ["--preset", "quick", *only, "--repeat", str(args.repeat), "--runtime", str(args.runtime), "--size",
            args.size]  # fmt: skip


def on_host(args: argparse.Namespace, work: Path, volume: Path, index: int) -> tuple[dict, float]:
    out = work / f"host-{index}.json"
    argv = [*MOUNTBENCH, "run", f"bind={work / 'host'}", f"volume={volume}", *run_options(args), "--db",
            str(work / "host.sqlite"), "--json", str(out)]  # fmt: skip
    wall, proc = timed(argv)
    check(proc)
    (run,) = load_runs(out)
    return run, wall


def in_container(args: argparse.Namespace, podman: Podman, tag: str, work: Path, index: int) -> tuple[dict, float]:
    out = f"container-{index}.json"
    argv = podman.argv(["run", "--rm", "-v", f"{work / 'host'}:/host", "-v", f"{VOLUME}:/vol", "-v",
                        f"{work / 'results'}:/results", tag, "run", "bind=/host", "volume=/vol", *run_options(args),
                        "--json", f"/results/{out}"])  # fmt: skip
    wall, proc = timed(argv, env=podman.env)
    check(proc)
    (run,) = load_runs(work / "results" / out)
    return run, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=6, help="pairs of runs (host and container)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of each run")
    parser.add_argument("--runtime", type=float, default=1.0, help="seconds of every fio job")
    parser.add_argument("--size", default="64M", help="working-set size")
    parser.add_argument("--only", action="append", default=[], help="workloads of the quick preset (glob)")
    parser.add_argument("--smoke", action="store_true", help="one pair, one workload, 0.3 s jobs: the script works")
    args = parser.parse_args()
    if args.smoke:
        args.pairs, args.repeat, args.runtime, args.size, args.only = 1, 1, 0.3, "4M", ["rnd4k-q1-read"]
    print(f"start: {load()} ({os.cpu_count()} CPUs)")
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="image-fidelity-work-"))
    (work / "host").mkdir()
    (work / "results").mkdir()
    with image() as (podman, tag):
        podman.run(["volume", "create", VOLUME])
        try:
            volume = Path(podman.run(["volume", "inspect", "--format", "{{.Mountpoint}}", VOLUME]).strip())
            pair_ratios: list[float] = []
            cell_ratios: dict[tuple[str, str], list[float]] = {}
            for index in range(args.pairs):
                sides = ["host", "container"] if index % 2 == 0 else ["container", "host"]
                runs, walls = {}, {}
                for side in sides:
                    if side == "host":
                        runs[side], walls[side] = on_host(args, work, volume, index)
                    else:
                        runs[side], walls[side] = in_container(args, podman, tag, work, index)
                host, inside = medians(runs["host"]), medians(runs["container"])
                ratios = {cell: inside[cell] / host[cell] for cell in host if cell in inside and host[cell] > 0}
                for cell, ratio in ratios.items():
                    cell_ratios.setdefault(cell, []).append(ratio)
                pair, _, _ = geometric_interval(list(ratios.values()))
                pair_ratios.append(pair)
                by_target = "; ".join(
                    f"{target} " + ", ".join(f"{w} {r:.3f}" for (t, w), r in sorted(ratios.items()) if t == target)
                    for target in TARGETS
                )  # fmt: skip
                print(f"pair {index + 1}/{args.pairs} ({sides[0]} first; host {walls['host']:.0f} s, container "
                      f"{walls['container']:.0f} s): container / host {pair:.3f} (geometric mean of {len(ratios)} "
                      f"cells) · {by_target}")  # fmt: skip
        finally:
            podman.run(["volume", "rm", "--force", VOLUME], check=False)
    shutil.rmtree(work)
    print("per cell, container / host over the pairs (median, 95% distribution-free interval):")
    for (target, workload), ratios in sorted(cell_ratios.items()):
        middle, low, high = median_interval(ratios)
        print(f"  {target:<7} {workload:<16} {middle:.3f} ({low:.3f}-{high:.3f}) from {len(ratios)} pairs")
    mean, low, high = geometric_interval(pair_ratios)
    middle, m_low, m_high = median_interval(pair_ratios)
    inside_band = BAND[0] <= low and high <= BAND[1]
    verdict = "within" if inside_band else "not shown within"
    print(f"container / host over {args.pairs} interleaved pairs ({len(cell_ratios)} cells each, "
          f"quick preset, --repeat {args.repeat} --runtime {args.runtime:g} "
          f"--size {args.size}): geometric mean {mean:.3f} (95% t-interval {low:.3f}-{high:.3f}); {verdict} "
          f"{BAND[0]}-{BAND[1]}; median pair {middle:.3f} ({m_low:.3f}-{m_high:.3f}); "
          f"{time.monotonic() - started:.0f} s; end: {load()}")  # fmt: skip


if __name__ == "__main__":
    main()
