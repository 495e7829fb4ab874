"""The cloud lab's figures against the same measured by hand (issue 49), interleaved.

By hand (bench/_cloudhand.py): ``rclone serve webdav``, ``toxiproxy-server`` (no memory limit, one
proxy per RTT with the lab's wire: the bandwidth each way, the RTT on the requests) and one
``rclone mount`` per cache mode and RTT, started as plain commands; S4's random read as a plain
``fio`` command line on a 64 MiB file put straight on the remote (cold: the page cache dropped);
on ``full`` also warm (after one untimed read, only rclone's cache file evicted from the page
cache, as the lab does) and, for reference, warm with nothing evicted.

The lab: ``mountbench cloudlab`` as a user runs it (its default: off, minimal, writes and full at
0 and 20 ms, 3 rounds, the probe), timed.

Blocks alternate: by hand, the lab, by hand (``--blocks`` by-hand blocks around the lab runs). Then
per mount and phase: the lab's figure in each round, its median, the by-hand samples' range, and
whether the median falls inside it; per round of the lab: each cold figure over that mount's median
of every round, their geometric mean with its 95 % interval (a round that collapsed, as round 2 did
before, has an interval far from 1); per phase: the lab's median over the by-hand median, their
geometric mean with its interval.

usage: python bench/cloudlab_byhand.py [--blocks 2] [--per-block 1] [--lab-args "..."]
       python bench/cloudlab_byhand.py --smoke   (one mode at 0 ms, 4 MiB, one round: the script works)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import _cloudhand
from _cloudhand import HandLab, HandSample, sample
from _common import MOUNTBENCH, check, geometric_interval, load, timed

WORKLOAD = "random-read"
METRIC = "read.iops"


def by_hand_block(
    work: Path, modes: tuple[str, ...], rtts: tuple[int, ...], per_block: int, seed: int
) -> list[HandSample]:
    """One block by hand: every mount's cold samples, and full's warm ones, in a shuffled order."""
    plan = []
    for rtt in rtts:
        for mode in modes:
            phases = ["cold", "warm", "warm-kept"] if mode == "full" else ["cold"]
            plan += [(f"{mode}-{rtt}ms", phase) for phase in phases for _ in range(per_block)]
    random.Random(seed).shuffle(plan)
    found = []
    with HandLab(work, modes=modes, rtts=rtts) as lab:
        mounts = {m.label: m for m in lab.mounts}
        for label, phase in plan:
            got = sample(lab, mounts[label], phase)
            print(f"  by hand {label} {phase}: {got.iops:,.1f} IOPS (toxiproxy {got.toxiproxy_cpu_s:.2f} s CPU, "
                  f"{got.toxiproxy_rss / 2**20:.0f} MiB)", flush=True)  # fmt: skip
            found.append(got)
    return found


def lab_run(work: Path, lab_args: list[str], index: int) -> tuple[dict, float, str]:
    """``mountbench cloudlab`` with its own store; the run's JSON, its wall time and its notes."""
    out = work / f"lab-{index}.json"
    env = {**os.environ, "MOUNTBENCH_DB": str(work / "lab.sqlite"), "COLUMNS": "160"}
    took, done = timed([*MOUNTBENCH, "cloudlab", *lab_args, "--json", str(out)], env=env, timeout=4 * 3600)
    check(done)
    (run,) = json.loads(out.read_text())["runs"]
    return run, took, done.stderr


def lab_figures(run: dict) -> dict[tuple[str, str], dict[int, float]]:
    """(target, phase) -> {round: IOPS} of the lab's random read."""
    found: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for s in run["samples"]:
        if not s["ok"] or not s["workload"].startswith(WORKLOAD) or METRIC not in s["metrics"]:
            continue
        phase = "warm" if s["workload"].endswith("-warm") else "cold"
        found[(s["target"], phase)][s["round"]] = s["metrics"][METRIC]
    return found


def compare(runs: list[dict], hand: list[HandSample]) -> None:
    by_hand: dict[tuple[str, str], list[float]] = defaultdict(list)
    for got in hand:
        by_hand[(got.label, got.phase)].append(got.iops)
    print("\nper mount and phase (IOPS): the lab's rounds | its median | by hand: min-max (n) | within")
    for index, run in enumerate(runs):
        figures = lab_figures(run)
        inside = outside = 0
        for (target, phase), rounds in sorted(figures.items()):
            if target == "local":
                continue
            # a mode without a read cache has no warm phase of its own: its warm figure is a read from the remote
            hand_phase = phase if target.startswith("full-") else "cold"
            values = by_hand.get((target, hand_phase), [])
            median = statistics.median(rounds.values())
            within = bool(values) and min(values) <= median <= max(values)
            inside, outside = inside + within, outside + (not within and bool(values))
            shown = " ".join(f"{rounds[r]:,.1f}" for r in sorted(rounds))
            hand_text = f"{min(values):,.1f}-{max(values):,.1f} ({len(values)})" if values else "-"
            print(f"  run {index + 1} {target:12} {phase}: {shown} | {median:,.1f} | {hand_text} | "
                  f"{'yes' if within else 'NO'}")  # fmt: skip
        kept = by_hand.get((next((t for t, _ in figures if t.startswith("full-")), ""), "warm-kept"), [])
        if kept:
            print(f"  (full warm by hand with nothing evicted: {min(kept):,.1f}-{max(kept):,.1f})")
        print(f"run {index + 1}: {inside} of {inside + outside} lab medians within the by-hand range")
        cold = {t: r for (t, p), r in figures.items() if p == "cold" and t != "local"}
        rounds_seen = sorted({r for values in cold.values() for r in values})
        for rnd in rounds_seen if len(rounds_seen) > 1 else []:
            # each mount's cold figure in this round over its median of every round (with 3 rounds, the
            # median of the two others is their mean: one slow sample elsewhere would move it)
            ratios = [values[rnd] / statistics.median(values.values()) for values in cold.values() if rnd in values]
            mean, low, high = geometric_interval(ratios)
            differs = not (low <= 1.0 <= high) if not math.isnan(low) else False
            print(f"run {index + 1} round {rnd + 1}: cold over each mount's median of every round, geometric mean "
                  f"{mean:.3f} (95% CI {low:.3f}-{high:.3f}, {len(ratios)} mounts): "
                  f"{'DIFFERS from the others by more than its noise' if differs else 'within its noise'}")  # fmt: skip
        for phase in ("cold", "warm"):
            ratios = []
            for (target, p), rounds in figures.items():
                hand_phase = phase if target.startswith("full-") else "cold"
                values = by_hand.get((target, hand_phase), [])
                if p == phase and target != "local" and values:
                    ratios.append(statistics.median(rounds.values()) / statistics.median(values))
            if ratios:
                mean, low, high = geometric_interval(ratios)
                print(f"run {index + 1} {phase}: the lab's median over the by-hand median, geometric mean {mean:.3f} "
                      f"(95% CI {low:.3f}-{high:.3f}, {len(ratios)} mounts; each "
                      f"{min(ratios):.2f}-{max(ratios):.2f})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=2, help="by-hand blocks (the lab runs between them)")
    parser.add_argument("--per-block", type=int, default=1, help="by-hand samples per mount and phase in a block")
    parser.add_argument("--lab-args", default="", help="extra arguments for mountbench cloudlab")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    modes, rtts = ("off", "minimal", "writes", "full"), (0, 20)
    lab_args = shlex.split(args.lab_args)
    if args.smoke:
        modes, rtts = ("full",), (0,)
        _cloudhand.FILE_BYTES = 4 * 1024**2
        args.blocks, args.per_block = 2, 1
        lab_args = ["--mode", "full", "--rtt", "0", "--repeat", "1", "--size", "4M", "--only", WORKLOAD,
                    "--no-probe", *lab_args]  # fmt: skip
    if os.geteuid() != 0:
        sys.exit("run as root: the page cache is dropped before every cold sample, by hand as in the lab")
    print(f"cloud lab against by hand, {args.blocks} by-hand blocks around {args.blocks - 1} lab run(s); {load()}")
    hand: list[HandSample] = []
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="cloudlab-byhand-") as tmp:
        work = Path(tmp)
        for block in range(args.blocks):
            start = time.monotonic()
            print(f"by hand, block {block + 1}/{args.blocks}; {load()}", flush=True)
            hand += by_hand_block(work / f"hand-{block}", modes, rtts, args.per_block, seed=block)
            print(f"  ({time.monotonic() - start:.0f} s)")
            if block < args.blocks - 1:
                print(f"the lab: mountbench cloudlab {' '.join(lab_args)}; {load()}", flush=True)
                run, took, notes = lab_run(work, lab_args, block)
                runs.append(run)
                for line in notes.splitlines():
                    if line.startswith("cloudlab:"):
                        print(f"  {line}")
                print(f"  the lab's run took {took:.0f} s ({took / 60:.1f} min); {load()}", flush=True)
    cpu = [h.toxiproxy_cpu_s for h in hand]
    print(f"by hand: toxiproxy's CPU per timed sample {min(cpu):.2f}-{max(cpu):.2f} s (no memory limit, never "
          f"restarted; up to {max(h.toxiproxy_rss for h in hand) / 2**20:.0f} MiB)")  # fmt: skip
    compare(runs, hand)


if __name__ == "__main__":
    main()
