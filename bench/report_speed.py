"""Report speed: how long do Markdown (with PNG charts written), HTML (inline SVG charts), PDF (the page
printed by headless Chromium) and CSV take for a three-target default run, and `show` as a user starts it?

The run is a real one (tests/data/exports/three-targets.json: the quick preset's default run on a tmpfs, a
local disk and a second tmpfs, 54 samples). Each format is timed from the stored records to the finished
file (summaries, charts, text), best of N, after a first rendering (imports, font cache): target under 3 s
each on a quiet machine. `show` is timed as a command, a new process each time (imports included): target
under 1 s. The machine's load is printed with the figures: on a busy one, charts are drawn one at a time.

--synthetic: a run of 10 targets × 10 workloads × 10 rounds instead (every sample with fio's full metric
set), the old shape of this bench.

usage: python bench/report_speed.py [--times 3] [--synthetic [--targets 10] [--workloads 10] [--repeat 10]]
                                    [--smoke]

--smoke: rendered once, no time limit (the test suite runs it so a broken bench fails CI).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mountbench.cli.formats.as_md import write_charts
from mountbench.kinds import make_workload
from mountbench.model import RunConfig, RunData, Sample, Target, TargetInfo, TargetRecord, Workload
from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.csvexport import samples_csv, summary_csv
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown

LIMIT_S = 3.0
SHOW_LIMIT_S = 1.0
RECORDED = Path(__file__).resolve().parents[1] / "tests" / "data" / "exports" / "three-targets.json"
PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)
SHAPES = [  # (name, rw, bs, extra options)
    ("bs-4k", "write", "4k", {}),
    ("bs-64k", "write", "64k", {}),
    ("bs-1m", "write", "1m", {}),
    ("bs-4m", "write", "4m", {}),
    ("seq1m-q8-read", "read", "1M", {"iodepth": "8"}),
    ("rnd4k-q32-read", "randread", "4k", {"iodepth": "32"}),
    ("rnd4k-q32-write", "randwrite", "4k", {"iodepth": "32"}),
    ("rnd4k-q1-read", "randread", "4k", {"iodepth": "1"}),
    ("rnd4k-q1-write", "randwrite", "4k", {"iodepth": "1"}),
    ("latency", "randread", "4k", {"percentile_list": ":".join(map(str, PERCENTILES)), "iodepth": "1"}),
]


def workloads(count: int) -> list[Workload]:
    found = []
    for i in range(count):
        name, rw, bs, extra = SHAPES[i % len(SHAPES)]
        name = name if i < len(SHAPES) else f"{name}-{i}"
        options = [["rw", rw], ["bs", bs], ["ioengine", "libaio"], ["direct", "1"], ["size", "256M"]]
        options += [[k, v] for k, v in extra.items()]
        found.append(make_workload(name, "fio", name, "preset:bench", {"section": name, "options": options}))
    return found


def metrics(rng: random.Random, rw: str, speed: float) -> dict[str, float]:
    out: dict[str, float] = {"cpu.usr": rng.uniform(1, 20), "cpu.sys": rng.uniform(5, 60)}
    for direction in ("read", "write") if rw in ("rw", "randrw") else ("write" if "write" in rw else "read",):
        iops = speed * rng.lognormvariate(0, 0.08)
        out |= {f"{direction}.iops": iops, f"{direction}.bw": iops * 4096, f"{direction}.bytes": iops * 4096 * 3}
        out[f"{direction}.lat_mean"] = 1 / iops
        out |= {f"{direction}.lat_p{p:g}": (1 + p / 20) / iops for p in PERCENTILES}
    return out


def synthetic_run(targets: int, count: int, repeat: int, seed: int = 1) -> RunData:
    rng = random.Random(seed)
    labels = [f"target{i}" for i in range(targets)]
    info = TargetInfo("ext4", "/", "/dev/sda1", "rw,relatime", 10**11, 2 * 10**11, True, "accepted")
    chosen = workloads(count)
    samples = []
    for round_ in range(repeat):
        for t, label in enumerate(labels):
            for w in chosen:
                rw = dict(w.spec["options"])["rw"]
                speed = 1000 * (t + 1) * rng.uniform(0.9, 1.1)
                samples.append(Sample(label, w.name, round_, True, metrics(rng, rw, speed), cache_action="none"))
    return RunData(
        id="bench-run",
        created_at=1.7e9,
        finished_at=1.7e9 + 3600,
        status="complete",
        command="mountbench run (synthetic)",
        config=RunConfig(repeat=repeat, seed=seed, baseline=labels[0], drop_caches="auto"),
        host={"hostname": "bench", "os": "Linux", "cpu_model": "cpu", "cpu_count": 2, "ram_bytes": 2**33},
        targets=tuple(TargetRecord(Target(label, f"/mnt/{label}"), info) for label in labels),
        workloads=tuple(chosen),
        samples=tuple(samples),
    )


def render_md(run: RunData, directory: Path) -> str:
    report = build_report([run])
    written = write_charts(report, directory, "report", "png")
    text = render_markdown(report, {chart.key: path.name for chart, path in written})
    (directory / "report.md").write_text(text)
    return text


def render_page(run: RunData, directory: Path) -> str:
    text = render_html(build_report([run]))
    (directory / "report.html").write_text(text)
    return text


def render_csv(run: RunData, directory: Path) -> str:
    report = build_report([run])
    text = summary_csv(report) + samples_csv(report)
    (directory / "report.csv").write_text(text)
    return text


def render_pdf(run: RunData, directory: Path) -> bytes:
    from mountbench.cli.pdf import html_to_pdf

    printed = html_to_pdf(render_html(build_report([run]), phone=False), directory / "report.pdf")
    (directory / "report.pdf").write_bytes(printed)
    return printed


def best_of(times: int, function, *args) -> float:
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - start)
    return best


def time_show(document: Path, directory: Path, times: int) -> float:
    """`mountbench show RUN` as a user runs it: a new process each time, best of ``times``."""
    env = dict(os.environ) | {"MOUNTBENCH_DB": str(directory / "results.sqlite")}
    argv = [sys.executable, "-m", "mountbench"]
    subprocess.run([*argv, "import", str(document)], env=env, check=True, capture_output=True)
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        subprocess.run([*argv, "show", "last"], env=env, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", action="store_true", help="a synthetic run instead of the recorded one")
    parser.add_argument("--targets", type=int, default=10)
    parser.add_argument("--workloads", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--times", type=int, default=3, help="take the best of this many renderings")
    parser.add_argument("--smoke", action="store_true", help="rendered once, no time limit")
    args = parser.parse_args()
    if args.smoke:
        args.targets, args.workloads, args.repeat, args.times = 2, 2, 1, 1
    if args.synthetic:
        run = synthetic_run(args.targets, args.workloads, args.repeat)
        what = f"{args.targets * args.workloads} (target, workload) pairs × {args.repeat} repetitions (synthetic)"
    else:
        (run,) = read_document(RECORDED)
        what = f"a recorded default run of {len(run.targets)} targets ({RECORDED.name})"
    print(f"{what} = {len(run.samples)} samples; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    slow = False
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        render_page(run, directory)  # warm-up: imports, font cache
        formats = [
            ("markdown + PNG charts", render_md),
            ("html + SVG charts", render_page),
            ("csv (summary + samples)", render_csv),
        ]
        if not args.smoke and any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
            formats.append(("pdf (page printed)", render_pdf))
        for name, function in formats:
            seconds = best_of(args.times, function, run, directory)
            verdict = "smoke: no limit" if args.smoke else "ok" if seconds < LIMIT_S else f"SLOW (limit {LIMIT_S:g} s)"
            slow = slow or (seconds >= LIMIT_S and not args.smoke)
            print(f"  {name:<26} {seconds:6.2f} s  {verdict}")
        charts = len(list(directory.glob("report-*.png")))
        size = (directory / "report.html").stat().st_size
        print(f"  ({charts} PNG charts; HTML page {size / 1e6:.2f} MB, self-contained)")
        if not args.synthetic:
            seconds = time_show(RECORDED, directory, args.times)
            limit = "ok" if seconds < SHOW_LIMIT_S else f"SLOW (limit {SHOW_LIMIT_S:g} s)"
            limit = "smoke: no limit" if args.smoke else limit
            slow = slow or (seconds >= SHOW_LIMIT_S and not args.smoke)
            print(f"  {'show (a new process)':<26} {seconds:6.2f} s  {limit}")
    sys.exit(1 if slow else 0)


if __name__ == "__main__":
    main()
