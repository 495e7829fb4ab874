"""The files an fio job works on: which they are, making every round see the same
state, and checking they are what the plan says.

- Which: fio names files ``filename`` (a list), ``filename_format`` ($jobname,
  $jobnum, $filenum) or ``<jobname>.<jobnum>.<filenum>``, in the scratch directory.
- Same state every round (``--file-state``): ``per-round`` (the default) lays the files
  out anew and writes them fully, untimed, before the first sample of each round that
  uses them (SNIA-style preconditioning), so no round writes into fresh unwritten
  extents; ``steady`` does that once, before the first sample of the run (the default
  before issue 23); ``fresh`` deletes them before every sample, so every sample lays
  them out anew (fio's own layout, extents left unwritten).
- Why a new layout every round, not one for the whole run: where a file's data lands
  (its extents on a disk, its pages and folio sizes in tmpfs) is fixed for as long as
  the file lives, and two files differ by more than rounds on one file do. With one
  layout per target, the rounds replicate only the noise of reading one file, the
  interval misses what differs between the files, and an A/A run (two directories of
  one filesystem) was called 1.15–1.24× different with tight intervals. A new layout
  every round makes the layout part of what the rounds replicate (bench/aa.py).
- Checks: a working file must exist at its planned size with no hole (SEEK_HOLE);
  fio leaves a full-size file of holes when the target fills during layout, and
  reading holes is faster than any storage. A damaged file is deleted, never reused.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mountbench.analysis.plausible import PLACEABLE_FSTYPES
from mountbench.fio import engines
from mountbench.fio.jobfile import FioJob, evaluate_size, fio_variables, render_job
from mountbench.host.scratch import OutsideScratch, open_beneath, rename_beneath, unlink_beneath
from mountbench.kinds.base import KindOption
from mountbench.model import Flag, KindOptions
from mountbench.units import format_bytes

FILE_STATES = ("per-round", "steady", "fresh")
PRECONDITIONED = ("per-round", "steady")  # the states whose files are written fully before they are used
# "reused": runs before mountbench 0.2 laid the files out with the first sample, then reused them
# (resumed as steady)
_FACTS = {
    "per-round": "fio working files laid out anew and written fully before each round (the layout is part of "
    "what the rounds replicate)",
    "steady": "fio working files written fully once before round 1 (every round reads the same files)",
    "fresh": "fio working files laid out anew for every sample",
    "reused": "fio working files laid out by the first sample and reused (round 1 may differ)",
}


@dataclass(frozen=True)
class FileState:
    """How every round sees fio's working files (--file-state): one of FILE_STATES, or "reused"
    in a run stored before there was a choice."""

    name: str

    def to_json(self) -> str:
        return self.name

    @classmethod
    def from_json(cls, value: Any) -> FileState | None:
        return cls(str(value)) if value else None

    def fact(self) -> str:
        return _FACTS.get(self.name, f"fio working files: {self.name}")

    def inputs(self) -> tuple[str, ...]:
        return ()

    def runs_as(self) -> str:
        """The state a runner keeps (a run stored before the choice resumes as steady)."""
        return self.name if self.name in FILE_STATES else "steady"


DEFAULT_FILE_STATE = FileState("per-round")

FILE_STATE_OPTION = KindOption(
    "file_state",
    (
        Flag("--file-state", "fio working files: laid out anew and written fully before each round (per-round), "
             "once before round 1 (steady), or laid out by fio for every sample (fresh)", choices=FILE_STATES),
    ),
    read=lambda raw: FileState.from_json(raw["file_state"]),
    from_json=FileState.from_json,
    default=DEFAULT_FILE_STATE,
    before=FileState("reused"),
)  # fmt: skip


def chosen_file_state(options: KindOptions) -> str:
    """The state fio's runner keeps: --file-state's, or the default."""
    value = options.get(FILE_STATE_OPTION.name)
    return (value if isinstance(value, FileState) else DEFAULT_FILE_STATE).runs_as()


# what decides which files a job lays out and how big they are
_LAYOUT_OPTIONS = ("size", "filesize", "nrfiles", "numjobs", "filename", "filename_format", "thread", "offset")
_METADATA_ENGINES = engines.FILE_OPERATIONS | engines.NO_IO  # no data files to lay out


@dataclass(frozen=True)
class WorkingFile:
    path: Path
    size: int | None  # bytes fio lays out; None when only fio can evaluate the size


def laid_out_bytes(size: int | None, file_state: str, first_in_round: bool, first_in_run: bool) -> int:
    """Bytes of working files (``size`` in all) a sample lays out before its timed part (issue 37:
    the plan counts them, engine/session.py with_layouts): ``per-round`` lays them out for the
    first sample of their file group in each round, ``steady`` for the first in the run,
    ``fresh`` for every sample."""
    lays_out = {"per-round": first_in_round, "steady": first_in_run}.get(file_state, True)
    return (size or 0) if lays_out else 0


def has_working_files(job: FioJob) -> bool:
    """Does the job lay out data files that it then reads or writes (not a metadata engine)?"""
    return engines.engine_name(job.get("ioengine")) not in _METADATA_ENGINES and job.get("filename") != "/dev/null"


def working_files(job: FioJob, scratch: Path, variables: Mapping[str, int]) -> list[WorkingFile] | None:
    """The files the job uses and their sizes (None for a size only fio can evaluate: a range,
    an environment variable); None when mountbench cannot tell the names (per-client names)."""
    if not has_working_files(job):
        return None
    numjobs = evaluate_size(job.get("numjobs") or "1", variables) or 1
    nrfiles = evaluate_size(job.get("nrfiles") or "1", variables) or 1
    names = _names(job, numjobs, nrfiles)
    if names is None:
        return None
    if job.get("filesize"):
        each = evaluate_size(job.get("filesize") or "", variables)
    else:
        total = evaluate_size(job.get("size") or "", variables)
        files_per_job = len((job.get("filename") or "").split(":")) if job.get("filename") else nrfiles
        each = total // files_per_job if total else None
    return [WorkingFile(scratch / name, each or None) for name in dict.fromkeys(names)]


def _names(job: FioJob, numjobs: int, nrfiles: int) -> list[str] | None:
    if job.get("filename"):
        return [name for name in (job.get("filename") or "").split(":") if name]
    pattern = job.get("filename_format") or "$jobname.$jobnum.$filenum"
    if "$clientuid" in pattern:
        return None
    return [
        pattern.replace("$jobname", job.section).replace("$jobnum", str(j)).replace("$filenum", str(f))
        for j in range(numjobs)
        for f in range(nrfiles)
    ]


def damage(files: list[WorkingFile]) -> str:
    """What is wrong with the working files ('' when nothing): missing, short, or with a hole.
    Filesystems that cannot report holes (SEEK_HOLE unsupported) are taken at their word."""
    for file in files:
        try:
            fd = os.open(file.path, os.O_RDONLY)
        except FileNotFoundError:
            return f"working file {file.path.name} is missing"
        except OSError as exc:
            return f"working file {file.path.name} cannot be opened ({exc.strerror})"
        try:
            size = os.fstat(fd).st_size
            planned = file.size or size
            if size < planned:
                return f"working file {file.path.name} has {format_bytes(size)} of {format_bytes(planned)}"
            try:
                hole = os.lseek(fd, 0, os.SEEK_HOLE)
            except OSError:
                continue  # no SEEK_HOLE here: nothing to say
            if hole < planned:
                return (
                    f"working file {file.path.name} has a hole at {format_bytes(hole)} of "
                    f"{format_bytes(planned)}: data never written there"
                )
        finally:
            os.close(fd)
    return ""


def remove(files: list[WorkingFile], scratch: Path) -> None:
    """Delete the working files, each resolved beneath ``scratch`` by descriptor: a name that
    would lead out of it (``[..]`` with ``filename_format=$jobname/x``) is left alone."""
    for file in files:
        with contextlib.suppress(OutsideScratch):
            unlink_beneath(scratch, file.path)


ASIDE_SUFFIX = ".previous-layout"


def set_aside(files: list[WorkingFile], scratch: Path) -> list[Path]:
    """Move the last round's files out of the way (renamed, still allocated) while the new layout
    is written, when the filesystem has room for both; else remove them at once. Removed first,
    their pages (tmpfs) or extents came straight back to the new file of the same directory: on
    this VM two directories of one tmpfs then kept the physical pages they started with, and
    with them a difference of up to 1.2x in sequential reads that every round of a run repeated
    (bench/aa.py). Kept until the new layout exists, they go to whatever is laid out next,
    another target's file as often as its own, so a run's rounds replicate the placement too."""
    present = [file for file in files if _beneath(scratch, file.path) and file.path.exists()]
    needed = sum(file.path.stat().st_size for file in present)
    try:
        usage = os.statvfs(present[0].path.parent) if present else None
    except OSError:
        usage = None
    room = usage is not None and usage.f_bavail * usage.f_frsize > 2 * needed + (64 << 20)
    if not room:
        remove(present, scratch)
        return []
    aside = []
    for file in present:
        target = file.path.with_name(file.path.name + ASIDE_SUFFIX)
        with contextlib.suppress(OutsideScratch):
            if rename_beneath(scratch, file.path, target):
                aside.append(target)
    return aside


def _beneath(scratch: Path, path: Path) -> bool:
    """Does ``path`` name something beneath ``scratch`` without climbing out (links are checked
    when it is touched)?"""
    try:
        parts = path.relative_to(scratch).parts
    except ValueError:
        return False
    return bool(parts) and ".." not in parts


SPACER_NAME = ".mountbench-placement-spacer"
SPACER_GRAIN = 64 << 10


def place_spacer(files: list[WorkingFile], scratch: Path, fstype: str, rng: random.Random) -> Path | None:
    """Before a layout: a file of random size (0 to the layout's size, allocated by fallocate, nothing
    written) beside the working files, removed once they are laid out (drop_aside), so that the new
    files start at a random place in what the filesystem hands out. Without it, the order of the
    targets' layouts (turned by one place each round, engine/plan.py) decides where each file lands,
    round after round: freed memory is handed out last-freed first, and in a quiet A/A run on one tmpfs
    the set-aside files passed b the same regions every other round (b slower in all 12 rounds). With
    it, where a file lands is drawn anew each round, and most of what it does to the samples is noise the
    rounds replicate: between quiet A/A runs the mean log ratio varied by 2.4 % at sequential I/O and 0.8 %
    at 4K beyond what their rounds explain, against 6.1 % and 1.5 % before; what is left is the run level
    every interval carries (analysis/runlevel.py). None on a filesystem whose fallocate would write
    (``fstype`` not in PLACEABLE_FSTYPES: a network or FUSE mount, whose server places the data) or with
    no room for it: the layout then goes where it would have gone."""
    planned = [file for file in files if file.size]
    if not planned or fstype not in PLACEABLE_FSTYPES:
        return None
    needed = sum(file.size or 0 for file in planned)
    directory = scratch
    try:
        usage = os.statvfs(directory)
    except OSError:
        return None
    spare = usage.f_bavail * usage.f_frsize - 2 * needed - (64 << 20)
    size = min(rng.randrange(0, needed + 1), spare) // SPACER_GRAIN * SPACER_GRAIN
    if size <= 0:
        return None
    path = directory / SPACER_NAME
    try:
        unlink_beneath(scratch, path)  # one a killed run left: ours, in our scratch directory
        descriptor = open_beneath(scratch, path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError:
        return None
    try:
        os.posix_fallocate(descriptor, 0, size)
    except OSError:
        os.close(descriptor)
        with contextlib.suppress(OSError):
            unlink_beneath(scratch, path)
        return None
    os.close(descriptor)
    return path


def drop_aside(paths: list[Path], scratch: Path) -> None:
    for path in paths:
        with contextlib.suppress(OutsideScratch):
            unlink_beneath(scratch, path)


def layout_block(job: FioJob, variables: Mapping[str, int]) -> int:
    """The block the layout writes with: the largest that divides every file's size, at most
    1 MiB (fio would refuse a size smaller than its block: ``size=8k`` lays out with 8 KiB)."""
    files = working_files(job, Path("."), variables) or []
    sizes = [file.size for file in files if file.size]
    block = LAYOUT_MAX_BLOCK
    for size in sizes:
        block = math.gcd(block, size)
    return max(block, 512)


LAYOUT_MAX_BLOCK = 1 << 20


def precondition_job(job: FioJob, scratch: Path, direct: bool, extra: list[tuple[str, str | None]]) -> str:
    """An fio job that writes every working file of ``job`` fully (sequential writes of
    layout_block, then fsync), under the same job name so default file names match."""
    return precondition_jobs([job], scratch, direct, extra)


def precondition_jobs(jobs: list[FioJob], scratch: Path, direct: bool, extra: list[tuple[str, str | None]]) -> str:
    """One preconditioning file for several jobs (sections run together): each job's files written
    once (a file two sections share is laid out by the first)."""
    variables = fio_variables()
    done: set[Path] = set()
    texts = []
    for job in jobs:
        files = {file.path for file in working_files(job, scratch, variables) or []}
        if files and files <= done:
            continue
        done |= files
        options: list[tuple[str, str | None]] = [(key, job.get(key)) for key in _LAYOUT_OPTIONS if job.get(key)]
        options += [
            ("rw", "write"),
            ("bs", str(layout_block(job, variables))),
            ("ioengine", "psync"),
            ("iodepth", "1"),
            ("direct", "1" if direct else "0"),
            ("end_fsync", "1"),
            ("group_reporting", "1"),
        ]
        texts.append(
            render_job(
                FioJob(job.section, tuple(options)),
                [("directory", str(scratch)), *extra],
                f"mountbench: preconditioning the working files of {job.section} (untimed)",
            )
        )
    return "\n".join(texts)


def sequential_fill_argv(file: WorkingFile) -> list[str] | None:
    """dd writing ``file`` as a new file, start to end (1 MiB blocks of random data, then fsync):
    the one way some mounts take a file. rclone's ``--vfs-cache-mode off`` refuses fio's
    layout (an existing file reopened for writing without O_TRUNC: EPERM), and it cannot seek
    in a file open for writing. None when the size is unknown or not whole MiB-free bytes."""
    if not file.size:
        return None
    blocks, rest = divmod(file.size, 1 << 20)
    if rest:
        return None
    return ["dd", "if=/dev/urandom", f"of={file.path}", "bs=1M", f"count={blocks}", "iflag=fullblock",
            "conv=fsync", "status=none"]  # fmt: skip
