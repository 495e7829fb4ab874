"""Tree workloads: generation speed, and extract timing against hyperfine.

1. The git profile (4,294 files, 43 MB) must generate in under 1 s on tmpfs.
2. mountbench's `extract` time against
   hyperfine --warmup 1 'tar -x --no-same-owner -f T -C DIR' --prepare 'rm -rf DIR; mkdir DIR; sync'
   (sync: mountbench starts every tree sample with no writeback backlog)
   on the same target, interleaved in N pairs: the ratio of medians must lie in 0.95–1.05.

usage: python bench/tree_extract.py [--dir /dev/shm] [--pairs 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import MOUNTBENCH, check, load_runs, timed

from mountbench.runners.tree import TreeRunner
from mountbench.trees import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/dev/shm", help="target directory (default /dev/shm)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3, help="samples per side in each pair")
    args = parser.parse_args()

    gen_times = []
    for _ in range(3):
        where = Path(tempfile.mkdtemp(dir="/dev/shm"))
        start = time.monotonic()
        generate("git", 1, where)
        gen_times.append(time.monotonic() - start)
        shutil.rmtree(where)
    print(
        f"git profile generation on tmpfs: {', '.join(f'{t:.2f}' for t in gen_times)} s "
        f"(target < 1 s: {'PASS' if max(gen_times) < 1 else 'FAIL'})"
    )

    archive = TreeRunner().archive({"profile": "git", "seed": 1})  # the very tar mountbench extracts
    if shutil.which("hyperfine") is None:
        raise SystemExit("hyperfine is not installed (apt-get install hyperfine)")
    base = Path(tempfile.mkdtemp(prefix="tree-bench-", dir=args.dir))
    db = Path(tempfile.mkdtemp()) / "db.sqlite"
    mb_times: list[float] = []
    hf_times: list[float] = []
    try:
        target = base / "mb"
        target.mkdir()
        dest = base / "hf"
        for pair in range(args.pairs):
            out = db.parent / f"p{pair}.json"
            check(
                timed(
                    [
                        *MOUNTBENCH,
                        "run",
                        str(target),
                        "--tree",
                        "git",
                        "--only",
                        "extract",
                        "--repeat",
                        str(args.runs),
                        "--db",
                        str(db),
                        "--json",
                        str(out),
                    ]
                )[1]
            )
            mb_times += [s["metrics"]["wall"] for s in load_runs(out)[0]["samples"]]
            hf_json = db.parent / f"h{pair}.json"
            check(
                timed(
                    [
                        "hyperfine",
                        "--warmup",
                        "1",
                        "--runs",
                        str(args.runs),
                        "--export-json",
                        str(hf_json),
                        "--prepare",
                        f"rm -rf {dest}; mkdir {dest}; sync",
                        f"tar -x --no-same-owner -f {archive.path} -C {dest}",
                    ]
                )[1]
            )
            hf_times += json.loads(hf_json.read_text())["results"][0]["times"]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("  mountbench samples (ms):", " ".join(f"{t * 1000:.0f}" for t in mb_times))
    print("  hyperfine samples (ms): ", " ".join(f"{t * 1000:.0f}" for t in hf_times))
    mb, hf = statistics.median(mb_times), statistics.median(hf_times)
    ratio = mb / hf
    print(f"extract on {args.dir}, {args.pairs} interleaved pairs × {args.runs} runs:")
    print(
        f"  mountbench median {mb * 1000:.1f} ms, hyperfine median {hf * 1000:.1f} ms, ratio {ratio:.3f} "
        f"(target 0.95–1.05: {'PASS' if 0.95 <= ratio <= 1.05 else 'FAIL'})"
    )


if __name__ == "__main__":
    main()
