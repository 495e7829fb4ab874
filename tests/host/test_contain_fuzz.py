"""Fuzzing what a run starts (issue 47): generated job files (a grammar holding the escapes of the
issue's cases 1 and 2 among ordinary options), tarballs, imports and option values, with canary
files around the targets (beside them, in their parent, in $HOME and in /tmp). The suite fails on
any write outside the scratch directories and the run's own outputs, any traceback (an error that
is not a one-line refusal) and any hang.

Most cases go through the parser, the importer, the tarball check and the command line in-process
(cheap); a few hundred job files are really run by fio at tiny sizes (runtime 0.05 s), most of
them written straight into a workload so that no check stands between them and fio: there only the
kernel's fence (host/contain.py) keeps the canaries safe. With containment turned off
(``MOUNTBENCH_CONTAIN=off``, tests only) the same harness must find the known escapes; with it on,
none. ``MOUNTBENCH_FUZZ_SEED`` picks another seed (the default is fixed: CI sees the same cases)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from support import syscalls
from support.tools import needs_fio

from mountbench.errors import MountbenchError, UsageError
from mountbench.fio.binary import find_fio
from mountbench.fio.jobfile import FioJob
from mountbench.host import contain
from mountbench.host import targets as targets_mod
from mountbench.host.contain import Fence
from mountbench.kinds import fio as fio_kind
from mountbench.kinds.base import new_workload
from mountbench.model import RunSettings, Target, TargetContext, WorkloadFailed

SEED = int(os.environ.get("MOUNTBENCH_FUZZ_SEED", "47"))
PARSE_CASES = 1000  # job files through the parser and the job checks, in-process
FIO_CHECKED = 50  # of those accepted, checked by fio's own parser too (--parse-only --debug=parse)
FIO_RUNS = 200  # job files really run by fio: most written straight into a workload (no check)
TARBALLS = 60
IMPORTS = 200
OPTIONS = 60
CASE_LIMIT_S = 10.0  # one in-process case taking longer is a hang
FIO_WORKERS = 4

pytestmark = pytest.mark.slow


# --- the places, their canaries, and what changed ---------------------------------------------


@dataclass
class Place:
    """A target ``top/vic`` with a user's file in it, canaries beside it, in its parent, in $HOME
    (set for the test) and in a folder of /tmp; the fragment an include would read."""

    root: Path
    top: Path = field(init=False)
    vic: Path = field(init=False)
    home: Path = field(init=False)
    tmpdir: Path = field(init=False)
    fragment: Path = field(init=False)

    def __post_init__(self) -> None:
        self.top = self.root / "t"
        self.vic = self.top / "vic"
        self.home = self.root / "home"
        self.tmpdir = Path(f"/tmp/mb-fuzz-{os.getpid()}-{self.root.name}")
        for directory in (self.vic, self.home, self.tmpdir, self.top / "sib"):
            directory.mkdir(parents=True, exist_ok=True)
        (self.vic / "notes.txt").write_text("the user's notes\n")
        (self.top / "vic.canary").write_text("beside the target\n")
        (self.top / "keep.txt").write_text("in the parent\n")
        (self.top / "sib" / "data").write_text("a sibling's\n")
        (self.home / ".profile").write_text("home\n")
        (self.tmpdir / "canary").write_text("in /tmp\n")
        self.fragment = self.root / "fragment.fio"
        self.fragment.write_text(f"exec_prerun=touch {self.tmpdir}/INCLUDED\n")

    def watched(self) -> list[Path]:
        return [self.top, self.home, self.tmpdir, self.root / "fragment.fio"]

    def state(self) -> dict[str, str]:
        """Every entry of the watched places (scratch directories aside: each case removes its own)
        with a digest of what it holds."""
        found: dict[str, str] = {}
        for place in self.watched():
            entries = [place] if place.is_file() else sorted(place.rglob("*"))
            for path in entries:
                if any(part.startswith(".mountbench-") for part in path.parts):
                    continue
                if path.is_symlink():
                    found[str(path)] = "link:" + os.readlink(path)
                elif path.is_file():
                    found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    found[str(path)] = f"dir:{oct(path.stat().st_mode)}"
        return found

    def remove(self) -> None:
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def fill(self, text: str, case: int) -> str:
        return (
            text.replace("{parent}", str(self.top)).replace("{home}", str(self.home))
            .replace("{tmpdir}", str(self.tmpdir)).replace("{frag}", str(self.fragment)).replace("{case}", str(case))
        )  # fmt: skip


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Place]:
    needs_fio()
    made = Place(tmp_path)
    monkeypatch.setenv("HOME", str(made.home))  # fio's ${HOME}, and the parser's, lead here
    monkeypatch.setenv("EVILKEY", "exec_prerun")
    monkeypatch.setenv("MB_FUZZ_DIR", str(made.tmpdir))
    yield made
    made.remove()


@contextlib.contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """A case that does not end within ``seconds`` fails as a hang (SIGALRM, main thread only)."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"hang: {what} took over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- the grammar of job files ------------------------------------------------------------------

NAMES = ["r", "w", "job", "seq-read", "a.b", "x_1"]
BAD_NAMES = [".", "..", "...", "a/b", "../../up", "~home", "s" * 300, "tab\tname", "$jobname", "bell\x07"]
SAFE = [
    "rw=read", "rw=write", "rw=randread", "rw=randwrite", "rw=randrw", "bs=4k", "bs=64k", "size=256k", "size=1m",
    "ioengine=psync", "ioengine=sync", "runtime=0.05", "time_based", "numjobs=1", "numjobs=2", "nrfiles=2",
    "direct=0", "thread", "group_reporting", "filename=data.bin", "filename_format=$jobname.$jobnum.$filenum",
    "filename_format=f.$filenum", "write_bw_log=bw", "log_avg_msec=10", "size=(128*2)k", "fsync=1", "iodepth=2",
    "stonewall", "description=plain words", "randrepeat=0", "unlink=1", "loops=2", "invalidate=1",
]  # fmt: skip
ESCAPES = [
    "filename_format=$jobname/notes.txt", "filename_format=$jobname$jobname/$jobname$jobname/vic.canary",
    "filename_format=../../keep.txt", "filename={parent}/keep.txt", "filename=../../sib/data", "filename=.",
    "filename=..", "filename=a/../../../keep.txt", "filename=ok:../../x.{case}",
    "write_bw_log={home}/bw{case}", "write_lat_log=${HOME}/lat{case}", "write_iolog=${HOME}/iolog{case}",
    "write_iops_log=../../../iops{case}", "write_hist_log=${MB_FUZZ_DIR}/hist{case}",
    "name=../../../evil-log{case}\nwrite_bw_log", "name=..", "name=.", "name={tmpdir}/named{case}",
    "iomem=mmapshared:{parent}/keep.txt", "mem=mmap:{home}/.profile", "mem=mmapshared:{tmpdir}/canary",
    "exec_prerun=touch {tmpdir}/PWNED{case}", "exec_postrun=touch {home}/PWNED{case}",
    "include={frag}", "include\t{frag}", "includeX{frag}", "  include {frag}", "include {frag}",
    "${EVILKEY}=touch {tmpdir}/ENV{case}", "opendir={parent}", "ioengine=external:/nonexistent.so",
    "trigger_file={tmpdir}/trigger", "verify_state_load=1", "read_iolog={home}/replay",
    "description=" + "x" * 8179 + "exec_prerun=touch {tmpdir}/LONG{case}", "size=9**9**9", "size=9^9^9",
    "size=" + "+".join(["1"] * 3000), "numjobs=1000000", "nrfiles=10000000", "startdelay=99999999999",
    "cgroup=mbfuzz", "uid=65534", "lockmem=1m", "ioscheduler=none", "write_iolog=../../../io{case}",
    "filename=/dev/null", "ioengine=exec", "size=${NOT_SET_ANYWHERE}", "rw=read\x1b[2J", "runtime=1e300",
]  # fmt: skip


def job_text(rng: random.Random) -> str:
    """One job file of the grammar: a [global] now and then, one to three sections, each of safe
    options with an escape or two among them most of the time."""
    lines = []
    if rng.random() < 0.05:
        lines.append("\ufeff")
    if rng.random() < 0.3:
        lines.append("[global]")
        lines += rng.sample(SAFE, 2)
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(BAD_NAMES) if rng.random() < 0.15 else rng.choice(NAMES)
        lines.append(f"[{name}]")
        lines += rng.sample(SAFE, rng.randint(1, 4))
        if rng.random() < 0.8:
            lines += rng.sample(ESCAPES, rng.randint(1, 2))
        lines.append("runtime=0.05")
    return "\n".join(lines).replace("\ufeff\n", "\ufeff") + "\n"


def one_line_refusal(exc: BaseException) -> str:
    """'' when ``exc`` is the kind of refusal the CLI prints as one line, else what is wrong."""
    if not isinstance(exc, MountbenchError):
        return f"not a refusal: {type(exc).__name__}: {exc}"
    if not str(exc).strip():
        return "an empty refusal"
    return ""


# --- in-process: the parser and the checks ------------------------------------------------------


def test_generated_job_files_are_refused_in_one_line_or_accepted_quickly(place: Place) -> None:
    rng = random.Random(SEED)
    runner = fio_kind.FioRunner(find_fio())
    accepted, refused, problems = [], 0, []
    for case in range(PARSE_CASES):
        text = place.fill(job_text(rng), case)
        path = place.root / "jobs" / f"case-{case}.fio"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        try:
            with time_limit(CASE_LIMIT_S, f"parsing case {case}"):
                workloads = fio_kind.KIND.load_job_file(path)
        except Exception as exc:
            problem = one_line_refusal(exc)
            if problem:
                problems.append(f"case {case}: {problem}\n{text[:300]}")
            refused += 1
            continue
        accepted.append((case, workloads))
    checked = 0
    for case, workloads in accepted[:FIO_CHECKED]:
        try:
            with time_limit(120, f"fio's parse of case {case}"):
                runner.check(workloads)
            checked += 1
        except Exception as exc:
            problem = one_line_refusal(exc)
            if problem:
                problems.append(f"case {case}: {problem}")
    assert not problems, "\n".join(problems[:10])
    assert refused > PARSE_CASES // 3 and accepted, (refused, len(accepted))  # the grammar reaches both sides
    assert checked > 0


# --- fio, for real ------------------------------------------------------------------------------


def _sample(place: Place, job: FioJob, case: int, runner: fio_kind.FioRunner) -> str:
    """One sample of ``job`` on the place's target, through the runner (setup and run, as a session
    takes it), its scratch directory made and removed; what happened, in a word or a message."""
    target = Target("vic", str(place.vic / f"c{case}"))  # a target each: cases run side by side
    run_id = f"20260101-000000-{case:04x}"
    scratch = targets_mod.create_scratch(target, run_id)
    workdir = place.root / "work" / str(case)
    workdir.mkdir(parents=True)
    ctx = TargetContext(target, targets_mod.inspect_target(target, scratch), scratch)
    settings = RunSettings(ram_bytes=psutil.virtual_memory().total, workdir=workdir)
    workload = new_workload(fio_kind.KIND, f"case{case}", "fuzz", "job:fuzz.fio", job.to_spec())
    try:
        prepared = runner.prepare(workload, ctx, settings)
        runner.setup(prepared, ctx, settings)
        runner.run(prepared, ctx, settings)
        return "ok"
    except WorkloadFailed as failure:
        return f"failed: {str(failure)[:120]}"
    finally:
        targets_mod.remove_scratch(scratch, run_id)


def bypassing_job(rng: random.Random, place: Place, case: int, escapes: list[str] | None = None) -> FioJob:
    """A job written straight into a workload, no check on the way: safe options, tiny and short,
    and one to three escapes of the grammar (or ``escapes``)."""
    chosen = escapes if escapes is not None else rng.sample(ESCAPES[:28], rng.randint(1, 3))
    options: list[tuple[str, str | None]] = [("rw", "randwrite"), ("size", "1m"), ("ioengine", "psync")]
    section = "j"
    for line in chosen:
        for piece in place.fill(line, case).split("\n"):
            key, sep, value = piece.strip().partition("=")
            if key.startswith("[") and key.endswith("]"):
                section = key[1:-1]
                continue
            options.append((key, value if sep else None))
    options += [("runtime", "50ms"), ("time_based", None)]
    if escapes is None and rng.random() < 0.3:
        section = rng.choice(["..", "."])
        options.append(("filename_format", "$jobname/notes.txt"))
    return FioJob(section, tuple(options))


def make_targets(place: Place, cases: list[tuple[int, FioJob]]) -> None:
    """Each case's own target inside the place's (made before the canaries are looked at)."""
    for case, _job in cases:
        (place.vic / f"c{case}").mkdir(exist_ok=True)


def run_fio_cases(place: Place, cases: list[tuple[int, FioJob]], file_state: str = "fresh") -> list[str]:
    """Every case run by fio, FIO_WORKERS at a time; their outcomes, in order. A case past its limit
    fails. ``fresh``: fio lays the files out in the sample; ``per-round``: a preconditioning fio job
    writes them first (as a run does by default)."""
    runner = fio_kind.FioRunner(find_fio(), file_state=file_state)
    deadline = time.monotonic() + 240
    with ThreadPoolExecutor(max_workers=FIO_WORKERS) as pool:
        futures = [pool.submit(_sample, place, job, case, runner) for case, job in cases]
        return [f.result(timeout=max(1.0, deadline - time.monotonic())) for f in futures]


def test_jobs_fio_really_runs_write_nothing_outside(place: Place, monkeypatch: pytest.MonkeyPatch) -> None:
    """FIO_RUNS job files run by fio with containment on: those the checks accept, run as a run runs
    them, and most written straight into a workload. The canaries, $HOME's and /tmp's included, stay."""
    monkeypatch.delenv(contain.ENV, raising=False)
    assert contain.containment().contained, contain.containment().fact()
    rng = random.Random(SEED + 1)
    cases: list[tuple[int, FioJob]] = []
    case = 0
    while len(cases) < FIO_RUNS // 4:  # accepted by every check: what a run would run
        case += 1
        path = place.root / "accepted.fio"
        path.write_text(place.fill(job_text(rng), case))
        try:
            (workload, *_rest) = fio_kind.KIND.load_job_file(path)
        except MountbenchError:
            continue
        if len(fio_kind.jobs_of(workload)) == 1:
            cases.append((case, fio_kind.FioJob.from_spec(workload.spec)))
    cases += [(10_000 + n, bypassing_job(rng, place, 10_000 + n)) for n in range(FIO_RUNS - len(cases))]
    make_targets(place, cases)
    before = place.state()
    outcomes = run_fio_cases(place, cases)
    after = place.state()
    assert changed(before, after) == [], (changed(before, after), outcomes[:5])
    assert sum(o == "ok" for o in outcomes) > 10 and sum(o != "ok" for o in outcomes) > 10  # both sides reached


# the escapes of the cases 1 and 2, each as fio ran it before the checks stopped it
KNOWN = {
    "section-dotdot": ["[..]", "filename_format=$jobname/notes.txt"],
    "section-dot": ["[.]", "filename_format=$jobname$jobname/$jobname$jobname/vic.canary"],
    "include": ["include={frag}"],
    "env-home-log": ["write_iolog=${HOME}/x{case}"],
    "name-climbs": ["name=../../t/evil-log{case}\nwrite_bw_log"],  # logs are named from the run's work folder
    "mapped-memory": ["iomem=mmapshared:{parent}/keep.txt"],
    "program": ["exec_prerun=touch {tmpdir}/PWNED{case}"],
}


@pytest.mark.parametrize("contained", [True, False], ids=["contained", "off"])
def test_the_known_escapes_are_found_without_containment_and_none_with_it(
    place: Place, monkeypatch: pytest.MonkeyPatch, contained: bool
) -> None:
    """The proof the harness finds what it looks for: with containment forced off every known
    escape changes a file outside (fio does what the job says); with it on, none does."""
    if contained:
        monkeypatch.delenv(contain.ENV, raising=False)
    else:
        monkeypatch.setenv(contain.ENV, "off")
    rng = random.Random(SEED + 2)
    found = {}
    for index, (name, escape) in enumerate(KNOWN.items()):
        cases = [(20_000 + index, bypassing_job(rng, place, 20_000 + index, escape))]
        make_targets(place, cases)
        before = place.state()
        run_fio_cases(place, cases, file_state="per-round")  # the sections' escape is the layout's (case 1)
        found[name] = changed(before, place.state())
    if contained:
        assert all(not paths for paths in found.values()), found
    else:
        assert all(paths for paths in found.values()), {name: paths for name, paths in found.items() if not paths}


# --- tarballs --------------------------------------------------------------------------------------


def tarball(rng: random.Random, place: Place, path: Path) -> None:
    """A tarball of a tree with, most of the time, something in it that reaches out or should not be
    made: links out, names that climb, device nodes, FIFOs, set-ID bits, foreign owners."""

    def add(tar: tarfile.TarFile, name: str, kind: bytes = tarfile.REGTYPE, **extra: object) -> None:
        info = tarfile.TarInfo(name)
        info.type = kind
        data = b"payload\n" if kind == tarfile.REGTYPE else b""
        info.size = len(data)
        for key, value in extra.items():
            setattr(info, key, value)
        tar.addfile(info, io.BytesIO(data) if data else None)

    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        add(tar, "tree", tarfile.DIRTYPE, mode=0o755)
        add(tar, "tree/a.txt", mode=0o644)
        for _ in range(rng.randint(0, 3)):
            pick = rng.randrange(10)
            if pick == 0:
                add(tar, "tree/out", tarfile.SYMTYPE, linkname=str(place.top))
                add(tar, "tree/out/keep.txt")
            elif pick == 1:
                add(tar, "tree/up", tarfile.SYMTYPE, linkname="../../../../keep.txt")
            elif pick == 2:
                add(tar, "../../keep.txt")
            elif pick == 3:
                add(tar, str(place.tmpdir / "abs.txt"))
            elif pick == 4:
                add(tar, "tree/null", tarfile.CHRTYPE, devmajor=1, devminor=3)
            elif pick == 5:
                add(tar, "tree/fifo", tarfile.FIFOTYPE)
            elif pick == 6:
                add(tar, "tree/suid", mode=0o4755)
            elif pick == 7:
                add(tar, "tree/owned", uid=1234, gid=1234)
            elif pick == 8:
                add(tar, "tree/hard", tarfile.LNKTYPE, linkname=str(place.top / "keep.txt"))
            else:
                add(tar, "tree/b.txt", mode=0o600)


def test_generated_tarballs_extract_inside_the_scratch_directory_only(place: Place) -> None:
    from mountbench.kinds import tree as tree_kind
    from mountbench.kinds.trees import from_tarball

    rng = random.Random(SEED + 3)
    before = place.state()
    problems = []
    for case in range(TARBALLS):
        path = place.root / "tarballs" / f"t{case}.tar"
        path.parent.mkdir(exist_ok=True)
        tarball(rng, place, path)
        work = place.root / "tarwork" / str(case)
        work.mkdir(parents=True)
        try:
            archive = from_tarball(path, work)
        except Exception as exc:
            problem = one_line_refusal(exc)
            if problem:
                problems.append(f"tarball {case}: {problem}")
            continue
        run_id = f"20260101-000001-{case:04x}"
        scratch = targets_mod.create_scratch(Target("vic", str(place.vic)), run_id)
        dest = scratch / "extract"
        dest.mkdir()
        with contextlib.suppress(WorkloadFailed):
            tree_kind._extract(archive, dest, Fence.of([scratch]))
        for made in dest.rglob("*"):
            st = made.lstat()
            if not (made.is_symlink() or made.is_file() or made.is_dir() or made.is_fifo()) or st.st_mode & 0o6000:
                problems.append(f"tarball {case}: {made} is a device or keeps a set-ID bit ({oct(st.st_mode)})")
            if st.st_uid != os.geteuid():
                problems.append(f"tarball {case}: {made} belongs to uid {st.st_uid}")
        targets_mod.remove_scratch(scratch, run_id)
    assert not problems, "\n".join(problems[:10])
    assert changed(before, place.state()) == []


# --- imports -----------------------------------------------------------------------------------------

BAD_VALUES: list[object] = [1e18, 10**400, -1, 1e300, "x\x1b[2J", None, [], {}, True, "", "running", 2**63,
                            "../../etc", float("1e308") * 10 if False else 1e308]  # fmt: skip
FIELDS: list[Callable[[dict], tuple[dict, str]]] = [
    lambda run: (run, "created_at"), lambda run: (run, "finished_at"), lambda run: (run, "status"),
    lambda run: (run, "command"), lambda run: (run, "origin"), lambda run: (run["host"], "machine_id"),
    lambda run: (run["samples"][0], "wall_s"), lambda run: (run["samples"][0], "started_at"),
    lambda run: (run["samples"][0]["metrics"], "read.iops"), lambda run: (run["samples"][0], "round"),
    lambda run: (run["targets"][0]["info"], "free_bytes"), lambda run: (run["config"], "repeat"),
    lambda run: (run["config"], "runtime"), lambda run: (run["samples"][0], "error"),
]  # fmt: skip


def test_generated_imports_are_refused_or_stored_and_never_resumed(tmp_path: Path) -> None:
    from mountbench.engine import request as runrequest
    from mountbench.records.export import read_document
    from mountbench.report.document import make_document
    from mountbench.report.methodology import run_facts
    from mountbench.store import Store

    needs_fio()
    fio = find_fio()
    source = json.loads((Path(__file__).parents[1] / "data" / "exports" / "default-run.json").read_text())
    rng = random.Random(SEED + 4)
    problems = []
    stored = 0
    for case in range(IMPORTS):
        document = json.loads(json.dumps(source))
        run = document["runs"][0]
        run["id"] = f"20250101-120000-{case:04x}"
        for _ in range(rng.randint(1, 2)):
            holder, key = rng.choice(FIELDS)(run)
            holder[key] = rng.choice(BAD_VALUES)
        path = tmp_path / f"import-{case}.json"
        path.write_text(json.dumps(document))
        try:
            with time_limit(CASE_LIMIT_S, f"import {case}"):
                (loaded,) = read_document(path)
                with Store(tmp_path / "db.sqlite") as store:
                    store.import_run(loaded, origin=f"imported from {path.name}")
                    back = store.load_run(loaded.id)
                    store.list_runs()
                make_document([back])
                run_facts(back)
            stored += 1
        except Exception as exc:
            problem = one_line_refusal(exc)
            if problem:
                problems.append(f"import {case}: {problem}")
            continue
        try:
            runrequest.from_stored(back, fio)
            problems.append(f"import {case}: an imported run was accepted for resuming")
        except UsageError as exc:
            if "imported" not in str(exc):
                problems.append(f"import {case}: refused for another reason: {exc}")
    assert not problems, "\n".join(problems[:10])
    assert 0 < stored < IMPORTS


# --- option values -----------------------------------------------------------------------------------

OPTION_VALUES = {
    "--size": ["1", "huge", "1e400", "-4M", "", "9" * 400, "4M\x1b[2J", "0x10M"],
    "--runtime": ["nan", "inf", "-1", "1e300", "0.05", "", "1\n2"],
    "--repeat": ["0", "-1", "99999999999999999999", "x"],
    "--client": ["a\nb", "localhost", "[::1", "host:99999", "node\x07", "ssh://", "@"],
    "--only": ["x\x1b[2J", "*", "nope", ""],
    "--sweep": ["bs=1k..1T", "bs=", "iodepth=1,1e9", "x=1"],
    "--baseline": ["nope", "\x1b"],
    "--watch": ["nginx\x07", "/usr/bin/x", ""],
}


def test_generated_option_values_are_refused_in_one_line_or_dry_run(place: Place) -> None:
    from click.testing import CliRunner

    from mountbench.cli.main import cli

    rng = random.Random(SEED + 5)
    problems = []
    before = place.state()
    for _ in range(OPTIONS):
        option = rng.choice(sorted(OPTION_VALUES))
        value = rng.choice(OPTION_VALUES[option])
        target = rng.choice([str(place.vic), f"x={place.vic}", f"{place.vic}/../vic", "/proc/self", f"{place.top}/a:b"])
        args = ["run", target, "--dry-run", "--preset", "quick", "--only", "rnd4k-q1-read", option, value]
        if option == "--only":
            args = ["run", target, "--dry-run", "--preset", "quick", "--only", value]
        with time_limit(60, f"run {' '.join(args)!r}"):
            result = CliRunner().invoke(cli, args, env={"MOUNTBENCH_DB": str(place.root / "opt.sqlite")})
        exc = result.exception
        if exc is not None and not isinstance(exc, SystemExit):
            problem = one_line_refusal(exc)
            if problem:
                problems.append(f"{args!r}: {problem}")
    assert not problems, "\n".join(problems[:10])
    assert changed(before, place.state()) == []
    assert not (place.root / "opt.sqlite").exists()  # a dry run or a refusal makes no database


# --- strace: a second witness ----------------------------------------------------------------------

STRACE = shutil.which("strace")
STRACED_CASES = 24


@contextlib.contextmanager
def traced(log: Path) -> Iterator[None]:
    """strace following this process (every thread) and every child started while the block runs."""
    assert STRACE is not None
    tracer = subprocess.Popen([STRACE, "-f", "-qq", "-y", "-e", "trace=" + ",".join(syscalls.TRACED), "-o", str(log),
                               "-p", str(os.getpid())], stdin=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 20
    while not all(_traced(task) for task in Path("/proc/self/task").iterdir()):
        assert tracer.poll() is None and time.monotonic() < deadline, "strace did not attach"
        time.sleep(0.05)
    try:
        yield
    finally:
        tracer.send_signal(signal.SIGINT)  # detaches from every process it follows
        tracer.wait(timeout=60)


def _traced(task: Path) -> bool:
    with contextlib.suppress(OSError):
        for line in (task / "status").read_text().splitlines():
            if line.startswith("TracerPid:"):
                return int(line.split()[1]) != 0
    return True  # the thread ended


def writes_outside(place: Place, log: Path) -> list[str]:
    """The writes of the trace beyond the cases' scratch directories, their work folders and /dev/null."""
    found = syscalls.writes(log.read_text(errors="replace").splitlines(), os.getcwd())
    beyond = syscalls.outside(found, [str(place.root / "work"), "/dev/null"])

    def in_scratch(path: str) -> bool:
        return path.startswith(f"{place.vic}/") and "/.mountbench-" in path

    return [str(w) for w in beyond if not all(in_scratch(p) for p in w.paths)]


@pytest.mark.skipif(STRACE is None, reason="needs strace (apt-get install strace)")
@pytest.mark.parametrize("contained", [True, False], ids=["contained", "off"])
def test_strace_sees_no_write_outside_the_fence_and_finds_the_escapes_without_it(
    place: Place, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, contained: bool
) -> None:
    """Issue 47's strace over the fuzz cases: while fio runs the known escapes and generated jobs written
    straight into a workload, strace follows this process and every child (fio, its exec_prerun, ...).
    With containment on, no successful call that makes, changes, renames or removes a file touches
    anything but a scratch directory, a case's work folder or /dev/null; forced off, the same trace
    shows the escapes' writes outside (the witness sees what it looks for)."""
    if contained:
        monkeypatch.delenv(contain.ENV, raising=False)
    else:
        monkeypatch.setenv(contain.ENV, "off")
    rng = random.Random(SEED + 3)
    known = [(30_000 + i, bypassing_job(rng, place, 30_000 + i, escape)) for i, escape in enumerate(KNOWN.values())]
    generated = [(31_000 + n, bypassing_job(rng, place, 31_000 + n)) for n in range(STRACED_CASES if contained else 0)]
    make_targets(place, known + generated)
    log = tmp_path / "strace.log"
    with traced(log):
        outcomes = run_fio_cases(place, known, file_state="per-round") + run_fio_cases(place, generated)
    beyond = writes_outside(place, log)
    if contained:
        assert beyond == [], (beyond[:20], outcomes[:5])
    else:
        assert any(f"{place.tmpdir}/PWNED" in w for w in beyond), beyond[:20]  # exec_prerun's touch
        assert any(str(place.home) in w for w in beyond), beyond[:20]  # write_iolog=${HOME}/x
    print(f"strace: {sum(1 for _ in log.open())} lines; writes outside: {len(beyond)}")
