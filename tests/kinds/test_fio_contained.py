"""What the kernel fences when a job file's check is bypassed (issue 47, cases 1 and 2): fio's jobs
are born inside a fence that lets them write the target's scratch directory and the run's own work
folder only, so a job that climbs out with its section name, writes a log by an absolute path,
maps memory from a file or runs a program changes nothing outside; and mountbench's own deletion
of the working files stays beneath the scratch directory. With containment turned off (tests only)
the same jobs do reach outside, which is what proves the fence holds them."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from support.tools import needs_fio

from mountbench.fio.binary import find_fio
from mountbench.fio.jobfile import FioJob
from mountbench.host import contain
from mountbench.host import targets as targets_mod
from mountbench.kinds import fio as fio_kind
from mountbench.kinds.base import new_workload
from mountbench.model import RunSettings, Target, TargetContext, WorkloadFailed

# each bypasses the job checks (written straight into a workload, as a damaged store might hold it)
ESCAPES = {
    "section-dotdot": ("..", [("filename_format", "$jobname/notes.txt")]),
    "absolute-log": ("j", [("write_bw_log", "{outside}/bw"), ("log_avg_msec", "10")]),
    "absolute-iolog": ("j", [("write_iolog", "{outside}/iolog")]),
    "mapped-memory": ("j", [("iomem", "mmapshared:{outside}/mapped")]),
    "program": ("j", [("exec_prerun", "touch {outside}/PWNED")]),
    "climbing-file": ("j", [("filename", "../../outside/data")]),
}


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


@pytest.fixture
def place(tmp_path: Path):
    """A target ``t/vic`` with a user's file in it, a canary beside it; the run's work folder."""
    top = tmp_path / "t"
    vic = top / "vic"
    vic.mkdir(parents=True)
    (vic / "notes.txt").write_text("the user's notes\n")
    (top / "vic.canary").write_text("beside\n")
    workdir = tmp_path / "work"
    workdir.mkdir()
    return top, vic, workdir


def _contents(top: Path) -> dict[str, bytes | None]:
    """Every entry under ``top`` and what each file holds (a directory's own mtime aside: the run's
    scratch directory comes and goes inside the target)."""
    return {str(p.relative_to(top)): (p.read_bytes() if p.is_file() else None) for p in sorted(top.rglob("*"))}


def _sample(vic: Path, workdir: Path, section: str, options: list[tuple[str, str]], outside: Path) -> str:
    runner = fio_kind.FioRunner(find_fio())
    target = Target("vic", str(vic))
    scratch = targets_mod.create_scratch(target, "20260101-000000-c0de")
    ctx = TargetContext(target, targets_mod.inspect_target(target, scratch), scratch)
    settings = RunSettings(ram_bytes=psutil.virtual_memory().total, workdir=workdir)
    filled = [(key, value.replace("{outside}", str(outside))) for key, value in options]
    job = FioJob(section, (("rw", "randwrite"), ("size", "1m"), ("runtime", "0.1"), *filled))
    workload = new_workload(fio_kind.KIND, "escape", "escape", "job:escape.fio", job.to_spec())
    try:
        prepared = runner.prepare(workload, ctx, settings)
        runner.setup(prepared, ctx, settings)
        runner.run(prepared, ctx, settings)
        return "ok"
    except WorkloadFailed as failure:
        return str(failure)
    finally:
        targets_mod.remove_scratch(scratch, "20260101-000000-c0de")


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_a_job_that_bypasses_the_checks_changes_nothing_outside(place, escape, monkeypatch):
    monkeypatch.delenv(contain.ENV, raising=False)
    top, vic, workdir = place
    outside = top / "outside"
    outside.mkdir()
    before = _contents(top)
    section, options = ESCAPES[escape]
    _sample(vic, workdir, section, options, outside)
    assert _contents(top) == before, escape


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_without_containment_the_same_job_reaches_outside(place, escape, monkeypatch):
    """The proof that the test above tests something: turned off, each escape changes a file outside
    (mountbench's own deletion still stays beneath: that is not the kernel's part)."""
    monkeypatch.setenv(contain.ENV, "off")
    top, vic, workdir = place
    outside = top / "outside"
    outside.mkdir()
    before = _contents(top)
    section, options = ESCAPES[escape]
    _sample(vic, workdir, section, options, outside)
    assert _contents(top) != before, escape
