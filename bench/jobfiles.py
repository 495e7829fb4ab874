"""A user's job file, run by mountbench and by plain fio: are the figures fio's? (issue 32)

For every case of tests/support/jobfile_cases.py that runs, N interleaved pairs (default 5; in
odd pairs plain fio goes first): plain `fio --directory=D FILE` on the text as written, and
`mountbench run D2 --job FILE --repeat 1`, both on the same tmpfs. Each job's IOPS (each job
of a group, each clone without group_reporting; files created per second for filecreate) is compared
as mountbench / plain fio; per case the geometric mean of the pairs' ratios over all its jobs,
with the lowest and highest job. The acceptance band is 0.85-1.15. Cases mountbench refuses
are listed with the first line of the reason. Plain fio runs once, untimed, before the pairs,
and keeps its files: its writes then go to files already written, as mountbench's do to the
files it preconditions (writes into new files on tmpfs allocate pages as they go: 1.5-2x
slower, which measured the layouts, not the harnesses).

--control puts plain fio in mountbench's place: the same procedure shows this machine's noise.

--before PYTHON runs every case once with another mountbench (e.g. the main branch's
virtualenv) and prints what it did: the "before" column of the issue's table. Run it on a
small tmpfs: before the fix, fill_device filled the target and [../../evil] wrote above it.

usage: python bench/jobfiles.py [--dir /dev/shm] [--pairs 5] [--before /path/to/python]
       python bench/jobfiles.py --smoke   (one pair of two cases: the script works)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from _common import MOUNTBENCH, load_runs, timed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.jobfile_cases import CASES, Case

from mountbench.fio.parse import job_metrics, load_fio_json

BAND = (0.85, 1.15)


def plain_fio(job: Path, directory: Path) -> dict[str, float]:
    directory.mkdir(parents=True, exist_ok=True)
    _, proc = timed(["fio", "--output-format=json", f"--directory={directory}", str(job)])
    if proc.returncode != 0:
        sys.exit(f"plain fio failed on {job.name}: {proc.stderr.strip()[:300]}")
    document = load_fio_json(proc.stdout)
    return {key: value for key, value in job_metrics(document).items() if key.endswith(".iops")}


def mountbench(argv_head: list[str], job: Path, target: Path, case: Case, work: Path) -> tuple[int, str, list[dict]]:
    target.mkdir(parents=True, exist_ok=True)
    out = work / "run.json"
    out.unlink(missing_ok=True)
    argv = [*argv_head, "run", str(target), "--job", str(job), "--repeat", "1", "--json", str(out)]
    argv += ["--db", str(work / "bench.sqlite"), *case.args]
    _, proc = timed(argv, timeout=600)
    samples = load_runs(out)[0]["samples"] if out.exists() and proc.returncode == 0 else []
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return proc.returncode, last, samples


def mountbench_figures(samples: list[dict]) -> dict[str, float]:
    """Each job's IOPS as mountbench stored them: a group's per-job metrics, a lone job's own."""
    figures: dict[str, float] = {}
    for sample in samples:
        metrics = sample["metrics"]
        jobs = {k: v for k, v in metrics.items() if "/" in k and k.endswith(".iops")}
        if jobs:
            figures.update(jobs)
        else:
            name = sample["workload"].replace(".", "_")
            figures.update({f"{name}/{k}": v for k, v in metrics.items() if k.split(".")[-1] == "iops"})
    return figures


def compare(
    case: Case, job: Path, base: Path, pairs: int, control: bool = False
) -> tuple[float, float, float, int, float]:
    for directory in ("plain", "control"):  # an untimed first run lays plain fio's files out
        shutil.rmtree(base / directory, ignore_errors=True)
        plain_fio(job, base / directory)
    ratios: dict[str, list[float]] = {}
    for index in range(pairs):
        order = ("fio", "mountbench") if index % 2 == 0 else ("mountbench", "fio")
        found: dict[str, dict[str, float]] = {}
        for harness in order:
            if harness == "fio":
                found[harness] = plain_fio(job, base / "plain")
            elif control:  # plain fio in mountbench's place: this machine's own noise floor
                found[harness] = plain_fio(job, base / "control")
            else:
                code, last, samples = mountbench(MOUNTBENCH, job, base / "mb", case, base)
                if code != 0 or not all(s["ok"] for s in samples):
                    sys.exit(f"mountbench failed on {case.name}: {last}")
                found[harness] = mountbench_figures(samples)
        for key in found["fio"].keys() & found["mountbench"].keys():
            if found["fio"][key] > 0:
                ratios.setdefault(key, []).append(found["mountbench"][key] / found["fio"][key])
    if not ratios:
        sys.exit(f"{case.name}: no figure of plain fio's matched mountbench's")
    per_key = {key: math.exp(sum(map(math.log, values)) / len(values)) for key, values in ratios.items()}
    for key, values in sorted(ratios.items()):
        print(f"  {case.name} {key}: {' '.join(f'{v:.2f}' for v in values)}", file=sys.stderr, flush=True)
    pooled = math.exp(sum(map(math.log, per_key.values())) / len(per_key))
    median = statistics.median(value for values in ratios.values() for value in values)
    return pooled, min(per_key.values()), max(per_key.values()), len(per_key), median


def before(python: str, case: Case, job: Path, base: Path) -> str:
    code, last, samples = mountbench([python, "-m", "mountbench"], job, base / "before", case, base)
    if code == 2:
        return f"refused: {last.removeprefix('mountbench: error: ')[:90]}"
    failed = [s for s in samples if not s["ok"]]
    workloads = sorted({s["workload"] for s in samples})
    if code != 0 or failed:
        return f"ran, failed (exit {code}): {(failed[0]['error'] if failed else last)[:80]}"
    return f"ran as {len(workloads)} workload(s): {', '.join(workloads)[:60]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/dev/shm"), help="a tmpfs directory to work in")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--before", help="python of another mountbench: print what it did with each case")
    parser.add_argument("--smoke", action="store_true", help="one pair of two cases")
    parser.add_argument("--only", nargs="*", default=(), help="these cases alone")
    parser.add_argument("--control", action="store_true", help="plain fio in mountbench's place (the noise floor)")
    args = parser.parse_args()
    cases = [c for c in CASES if not c.refused and c.compare][:2] if args.smoke else list(CASES)
    cases = [c for c in cases if c.name in args.only] if args.only else cases
    pairs = 1 if args.smoke else args.pairs
    base = Path(tempfile.mkdtemp(prefix="mountbench-bench-jobfiles-", dir=args.dir))
    rows = []
    try:
        for case in cases:
            job = base / f"{case.name}.fio"
            job.write_text(case.text)
            then = before(args.before, case, job, base) if args.before else ""
            if case.refused:
                code, last, _ = mountbench(MOUNTBENCH, job, base / "mb", case, base)
                now = f"refused: {last.removeprefix('mountbench: error: ')[:90]}" if code == 2 else f"exit {code}"
                rows.append((case, then, now, None))
            elif not case.compare:
                code, last, samples = mountbench(MOUNTBENCH, job, base / "mb", case, base)
                codes = sorted({c["code"] for s in samples for c in s["caveats"]})
                now = f"ran ({', '.join(codes)})" if code == 0 else f"exit {code}: {last[:80]}"
                rows.append((case, then, now, None))
            else:
                now = "plain fio (control)" if args.control else "ran as fio would"
                rows.append((case, then, now, compare(case, job, base, pairs, args.control)))
            print(f"{case.name}: done", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"mountbench / plain fio, each job's IOPS, {pairs} interleaved pair(s) per case; band {BAND}")
    print(f"(geometric mean over pairs and jobs; load average during the run: {os.getloadavg()[0]:.1f})")
    for case, then, now, ratio in rows:
        figure = "-"
        if ratio:
            figure = (
                f"{ratio[0]:.3f} (jobs {ratio[1]:.2f}-{ratio[2]:.2f}, {ratio[3]} figures; median pair {ratio[4]:.2f})"
            )
        inside = "" if ratio is None else ("  in band" if BAND[0] <= ratio[0] <= BAND[1] else "  OUT OF BAND")
        print(f"{case.name:18} {case.feature[:44]:44} {figure}{inside}")
        print(f"{'':18}   now: {now}")
        if then:
            print(f"{'':18}   before: {then}")
    print(json.dumps({case.name: ratio[0] for case, _, _, ratio in rows if ratio}, sort_keys=True))


if __name__ == "__main__":
    main()
