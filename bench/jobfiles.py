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

--examples DIR runs every *.fio of DIR (fio's own examples: examples/ of fio's source, e.g.
/usr/share/doc/fio/examples where a distribution ships them) as a user would give it: a dry run
(accepted, refused with its one line, or a crash: any other exit or a traceback), then, with
--run, each accepted file for real (--repeat 1 --runtime 1 --size 16M) on a tmpfs directory. For
each accepted file it asks plain fio which jobs it runs together (fio's own "(g=N)" lines and
the files each job adds, --debug=file, on a copy shrunk to a few I/Os) and counts the sections
mountbench split apart that fio runs in one group, or that work on one file (a donorname= of one
section is a file of another); and it counts engines replaced (a job file's engine is never
replaced: a replaced one would be said by an engine-fallback caveat or an ioengine= mountbench set).

usage: python bench/jobfiles.py [--dir /dev/shm] [--pairs 5] [--before /path/to/python]
       python bench/jobfiles.py --examples /path/to/fio/examples [--run]
       python bench/jobfiles.py --smoke   (one pair of two cases, and the examples mode on two files)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
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


# --- fio's own example jobs (--examples) ---------------------------------------------------------

# a copy of a job file shrunk to a few I/Os, for asking plain fio how it groups the jobs: the options
# that decide grouping (stonewall, new_group, wait_for) and files (filename, filename_format) are kept
_FEW_IOS = [("size", "64k"), ("io_size", "64k"), ("number_ios", "2"), ("startdelay", "0"), ("ramp_time", "0"),
            ("runtime", "2"), ("time_based", "0"), ("rate", "0"), ("rate_iops", "0"), ("rate_min", "0"),
            ("rate_iops_min", "0"), ("thinktime", "0"), ("fill_device", "0"), ("loops", "1")]  # fmt: skip
_FIO_JOB_LINE = re.compile(r"^(.+?): \(g=(\d+)\): ")
_FIO_ADD_FILE = re.compile(r"^file\s+\d+\s+add file (.+)$")
_REASONS = (  # the kind of a refusal, by the words of its one line
    ("drives a device", "device engine"),
    ("opens the device or file its libblkio_path", "engine with a path of its own"),
    ("not enough space", "too little space as written (--size shrinks it)"),
    ("fill_device=1 writes until", "fill_device (needs --size)"),
    ("names a device", "device path"),
    ("over the network", "network engine"),
    ("object store", "object-store engine"),
    ("does no I/O", "no I/O"),
    ("is not in this fio", "engine missing from this fio"),
    ("not set in the environment", "environment variable unset"),
    ("is not among the fio options", "option outside the allowlist"),
    ("is not allowed", "option refused by name"),
    ("fio rejected", "fio rejected it"),
    ("invalid fio job", "fio rejected it"),
)


def refusal_kind(line: str) -> str:
    return next((kind for words, kind in _REASONS if words in line), "other")


def fio_groups(job: Path, work: Path) -> list[tuple[str, int, set[str]]]:
    """Plain fio's view of the file: each job (name, fio's group, the files it adds), in order,
    from a run of a copy shrunk to a few I/Os in a directory of its own."""
    from mountbench.fio.jobfile import read_job_file, render_sections

    work.mkdir(parents=True, exist_ok=True)
    shrunk = work / job.name
    shrunk.write_text(render_sections(read_job_file(job), [("directory", str(work)), *_FEW_IOS]))
    try:
        proc = subprocess.run(["fio", "--debug=file", "--output-format=normal", str(shrunk)], cwd=work,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        text = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    jobs: list[tuple[str, int, set[str]]] = []
    pending: set[str] = set()
    for line in text.splitlines():
        added = _FIO_ADD_FILE.match(line)
        if added:
            pending.add(os.path.basename(added.group(1).strip()))
            continue
        found = _FIO_JOB_LINE.match(line)
        if found:
            jobs.append((found.group(1), int(found.group(2)), pending))
            pending = set()
        elif line.strip() == "..." and jobs:  # numjobs' clones of the job above
            jobs[-1][2].update(pending)
            pending = set()
    return jobs


def split_apart(job: Path, work: Path) -> list[str]:
    """Pairs of sections mountbench measures apart that plain fio runs in one group, or that work on
    one file (a file both add, or a donorname= that is the other's file or donor)."""
    from mountbench.fio.jobfile import merged_jobs, read_job_file
    from mountbench.fio.jobgroups import group_sections

    sections = read_job_file(job)
    order = [s for s in sections if not s.is_global]
    merged = merged_jobs(sections)
    workload_of: dict[int, int] = {}
    for number, group in enumerate(group_sections(sections, str(job))):
        for section in group.sections:
            if not section.is_global:
                workload_of[next(i for i, s in enumerate(order) if s is section)] = number
    queues: dict[str, list[int]] = {}
    for index, merged_job in enumerate(merged):
        queues.setdefault(merged_job.get("name") or merged_job.section, []).append(index)
    seen: dict[int, tuple[int, set[str]]] = {}
    for name, group, files in fio_groups(job, work):
        if queues.get(name):
            index = queues[name].pop(0)
            e4defrag = (merged[index].get("ioengine") or "").split(":")[0].strip() == "e4defrag"
            donor = merged[index].get("donorname") if e4defrag else None  # e4defrag's option alone
            seen[index] = (group, files | ({os.path.basename(donor)} if donor else set()))
    found = []
    for a in sorted(seen):
        for b in sorted(seen):
            if a < b and workload_of.get(a) != workload_of.get(b):
                (group_a, files_a), (group_b, files_b) = seen[a], seen[b]
                if group_a == group_b:
                    found.append(f"[{order[a].name}] and [{order[b].name}] (fio's group {group_a})")
                elif files_a & files_b:
                    found.append(f"[{order[a].name}] and [{order[b].name}] (both use {sorted(files_a & files_b)[0]})")
    return found


def replaced_engines(dry_run_stdout: str) -> list[str]:
    """ioengine= lines mountbench set, and engine-fallback words, in a dry run's job files."""
    found, setting = [], False
    for line in dry_run_stdout.splitlines():
        stripped = line.strip()
        if stripped.startswith("; set by mountbench"):
            setting = True
        elif stripped.startswith("["):
            setting = False
        elif setting and stripped.startswith("ioengine="):
            found.append(stripped)
        if "is not available here; ran" in stripped:
            found.append(stripped)
    return found


def run_example(job: Path, base: Path) -> str:
    """The file run for real, small and short: '' when every sample ran, else what went wrong."""
    target, out = base / "run-target", base / "run.json"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    out.unlink(missing_ok=True)
    argv = [*MOUNTBENCH, "run", str(target), "--job", str(job), "--repeat", "1", "--runtime", "1", "--size", "16M",
            "--json", str(out), "--db", str(base / "bench.sqlite")]  # fmt: skip
    _, proc = timed(argv, timeout=900)
    if "Traceback" in proc.stderr or proc.returncode not in (0, 1, 2):
        return f"CRASH (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}"
    if proc.returncode == 2:
        return f"refused when run: {proc.stderr.strip().splitlines()[-1][:100]}"
    samples = load_runs(out)[0]["samples"] if out.exists() else []
    failed = [s for s in samples if not s["ok"]]
    fallback = [c["text"] for s in samples for c in s["caveats"] if c["code"] == "engine-fallback"]
    said = []
    if failed:
        said.append(f"{len(failed)} of {len(samples)} samples failed: {failed[0]['error'][:100]}")
    if fallback:
        said.append(f"engine replaced: {fallback[0]}")
    return "; ".join(said)


def examples(directory: Path, base: Path, run: bool) -> None:
    files = sorted(directory.glob("*.fio"))
    if not files:
        sys.exit(f"no *.fio files in {directory}: give fio's examples/ directory")
    target = base / "target"
    target.mkdir()
    accepted, refused, crashes, replaced, failed_runs = [], [], [], [], []
    split: dict[str, list[str]] = {}
    kinds: dict[str, list[str]] = {}
    for job in files:
        argv = [*MOUNTBENCH, "run", str(target), "--job", str(job), "--dry-run", "--repeat", "1",
                "--db", str(base / "bench.sqlite")]  # fmt: skip
        _, proc = timed(argv, timeout=300)
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        if "Traceback" in proc.stderr or proc.returncode not in (0, 2):
            crashes.append(f"{job.name}: exit {proc.returncode}: {last[:120]}")
            continue
        if proc.returncode == 2:
            reason = last.removeprefix("mountbench: error: ")
            refused.append(f"{job.name}: {reason[:150]}")
            kinds.setdefault(refusal_kind(reason), []).append(job.name)
            continue
        accepted.append(job.name)
        engines = replaced_engines(proc.stdout)
        if engines:
            replaced.append(f"{job.name}: {engines[0]}")
        apart = split_apart(job, base / "fio-groups" / job.stem)
        if apart:
            split[job.name] = apart
        if run:
            problem = run_example(job, base)
            if problem.startswith("CRASH"):
                crashes.append(f"{job.name}: {problem}")
            elif problem:
                failed_runs.append(f"{job.name}: {problem}")
        print(f"{job.name}: accepted", file=sys.stderr, flush=True)
    print(f"fio's example jobs in {directory}: {len(files)} files (load average {os.getloadavg()[0]:.1f})")
    print(
        f"accepted {len(accepted)}, refused {len(refused)}, crashes {len(crashes)}; engines replaced "
        f"{len(replaced)}; files with sections split that fio runs together or that share a file {len(split)}"
    )
    print(f"accepted: {', '.join(accepted)}")
    for kind, names in sorted(kinds.items(), key=lambda item: -len(item[1])):
        print(f"refused, {kind} ({len(names)}): {', '.join(names)}")
    for title, lines in (("refusals", refused), ("crashes", crashes), ("engines replaced", replaced),
                         ("runs with failed samples", failed_runs)):  # fmt: skip
        if lines:
            print(f"{title}:")
            print("\n".join(f"  {line}" for line in lines))
    for name, pairs in split.items():
        print(f"split apart in {name}: {'; '.join(pairs)}")
    if run:
        print(f"run for real (--repeat 1 --runtime 1 --size 16M): {len(accepted) - len(failed_runs)} of "
              f"{len(accepted)} accepted files ran every sample")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/dev/shm"), help="a tmpfs directory to work in")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--before", help="python of another mountbench: print what it did with each case")
    parser.add_argument("--smoke", action="store_true", help="one pair of two cases")
    parser.add_argument("--only", nargs="*", default=(), help="these cases alone")
    parser.add_argument("--control", action="store_true", help="plain fio in mountbench's place (the noise floor)")
    parser.add_argument("--examples", type=Path, help="a directory of job files (fio's examples/): accepted or not")
    parser.add_argument("--run", action="store_true", help="with --examples: run each accepted file for real")
    args = parser.parse_args()
    if args.examples or args.smoke:
        base = Path(tempfile.mkdtemp(prefix="mountbench-bench-examples-", dir=args.dir))
        try:
            if args.smoke:  # two of the cases as a directory of examples: one accepted, one refused
                (base / "given").mkdir()
                for case in (CASES[1], CASES[-1]):
                    (base / "given" / f"{case.name}.fio").write_text(case.text)
            examples(args.examples or base / "given", base, args.run or args.smoke)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if args.examples:
            return
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
