"""fio job files: parse them into one option list per job, read their sizes and
durations, and render the exact job text that runs on a target.

fio itself stays the authority on meaning: mountbench only reads the few
options it needs to plan (size, numjobs, runtime, direct, ioengine) and passes
every option through untouched, so ``$ncpus``, ``$mb_memory`` and arithmetic
keep working because fio evaluates them.
"""

from __future__ import annotations

import ast
import operator
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mountbench.errors import UsageError
from mountbench.fio import engines
from mountbench.units import parse_seconds, parse_size

Option = tuple[str, str | None]  # (key, value); value None for a bare flag like "thread"

# Options that name where files go. mountbench owns them: every job writes only
# inside the target's scratch directory.
_PLACEMENT_KEYS = {"directory"}
_ALIASES = {"timeout": "runtime", "buffered": "buffered", "filesize": "filesize"}


@dataclass(frozen=True)
class FioJob:
    """One fio job (a section), with the global options in force for it merged in front."""

    section: str
    options: tuple[Option, ...]

    def get(self, key: str) -> str | None:
        """The last value given for ``key`` (fio: later assignments win); None if absent.

        A bare flag returns "1".
        """
        found: str | None = None
        for name, value in self.options:
            if _canonical(name) == key:
                found = "1" if value is None else value
        return found

    def to_spec(self) -> dict:
        return {"section": self.section, "options": [[k, v] for k, v in self.options]}

    @classmethod
    def from_spec(cls, spec: Mapping) -> FioJob:
        return cls(spec["section"], tuple((k, v) for k, v in spec["options"]))


def _canonical(key: str) -> str:
    key = key.strip().lower()
    return _ALIASES.get(key, key)


@dataclass(frozen=True)
class Section:
    """One section of a job file as written: ``[global]`` or a job, its own options only."""

    name: str
    options: tuple[Option, ...]

    @property
    def is_global(self) -> bool:
        return self.name == "global"


def strip_comment(line: str) -> str:
    """The line as fio reads it: everything from the first ``;`` or ``#`` on is a comment
    (fio's strip_blank_end), so ``filename=sda ; or use /dev/sda`` names ``sda``."""
    cut = min((i for i in (line.find(";"), line.find("#")) if i >= 0), default=len(line))
    return line[:cut].strip()


def parse_sections(text: str, origin: str = "<job file>") -> list[Section]:
    """The file's sections in order, as fio reads them (comments stripped); every job
    section is checked for placement with the globals in force for it merged in front."""
    sections: list[tuple[str, list[Option]]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw)
        if not line:
            continue
        if line.startswith("["):
            name = line[1:].partition("]")[0].strip()
            if not name:
                raise UsageError(f"{origin}:{lineno}: empty section name []; name each job, e.g. [random-read]")
            sections.append((name, []))
            continue
        if line.startswith("include "):
            raise UsageError(f"{origin}:{lineno}: 'include' is not supported; paste the included options into the file")
        if not sections:
            raise UsageError(
                f"{origin}:{lineno}: option before any [section]; start the file with [global] or [jobname]"
            )
        key, sep, value = line.partition("=")
        sections[-1][1].append((key.strip(), value.strip() if sep else None))
    found = [Section(name, tuple(options)) for name, options in sections]
    jobs = merged_jobs(found)
    if not jobs:
        raise UsageError(f"{origin}: no job sections; add at least one [jobname] section")
    for job in jobs:
        check_placement(job, origin)
    return found


def merged_jobs(sections: Iterable[Section]) -> list[FioJob]:
    """One FioJob per job section, the options of every ``[global]`` before it merged in front
    (fio: a global section applies to the jobs after it)."""
    global_opts: list[Option] = []
    jobs = []
    for section in sections:
        if section.is_global:
            global_opts += section.options
        else:
            jobs.append(FioJob(section.name, (*global_opts, *section.options)))
    return jobs


def parse_job_text(text: str, origin: str = "<job file>") -> list[FioJob]:
    """Split a job file into jobs. A ``[global]`` section applies to the jobs after it."""
    return merged_jobs(parse_sections(text, origin))


JOB_FILE_LIMIT = 1 << 20  # 1 MiB: a job file of thousands of sections; /dev/zero never ends


def load_job_file(path: Path) -> list[FioJob]:
    """The jobs of a job file, globals merged (read_job_file)."""
    return merged_jobs(read_job_file(path))


def read_job_file(path: Path) -> list[Section]:
    """Read a job file's sections as written: a regular file of at most JOB_FILE_LIMIT bytes (a
    device or FIFO is refused without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UsageError(f"job file {path} is not a regular file; give an fio job file (INI text)")
            os.set_blocking(fd, True)
            data = stream.read(JOB_FILE_LIMIT + 1)
        if len(data) > JOB_FILE_LIMIT:
            raise UsageError(f"job file {path} is larger than 1 MiB (or never ends); give an fio job file (INI text)")
        text = data.decode()
    except FileNotFoundError:
        raise UsageError(f"job file {path} does not exist; check the path given to --job") from None
    except (UnicodeDecodeError, ValueError):
        raise UsageError(f"job file {path} is not a text file; give an fio job file (INI text)") from None
    except OSError as exc:
        raise UsageError(f"cannot read job file {path}: {exc.strerror or exc}") from None
    return parse_sections(text, origin=str(path))


# Options whose value names a file fio creates or opens: relative to the scratch
# directory (filename*) or to fio's private working directory (logs), never absolute
# and never climbing out with "..".
_PATH_OPTIONS = {
    "filename", "filename_format", "write_iolog", "read_iolog", "write_bw_log", "write_lat_log",
    "write_iops_log", "write_hist_log", "replay_redirect", "trigger_file", "merge_blktrace_file", "donorname",
}  # fmt: skip
# Options that reach outside the scratch directory by design, change the system, or run programs.
_FORBIDDEN_OPTIONS = {
    "opendir": "reads a directory tree outside the scratch directory",
    "exec_prerun": "runs another program",
    "exec_postrun": "runs another program",
    "trigger_cmd": "runs another program",
    "trigger": "runs another program",
    "create_serialize_cmd": "runs another program",
    "cgroup": "creates a control group outside the scratch directory",
    "ioscheduler": "changes the I/O scheduler of the target's device",
    "profile": "runs one of fio's built-in profiles in place of the file's jobs",
}
_FORBIDDEN_ENGINES = ("exec", "external")


def check_placement(job: FioJob, origin: str) -> None:
    """Refuse a job that could write, read or delete outside the scratch directory, change
    the system or run a program, or that has no files in a directory to measure (a network,
    object-store or device engine): its section name, its engine and every occurrence of
    every path option are checked."""
    where = f"{origin}: [{job.section}]"
    if "/" in job.section or job.section.startswith("~"):
        raise UsageError(
            f"{where} the section name would place fio's files outside the scratch directory (fio names "
            "files and logs after the section); rename the section without '/'"
        )
    for key, value in job.options:
        if _canonical(key) == "ioengine" and value and value.split(":")[0].strip() in _FORBIDDEN_ENGINES:
            raise UsageError(f"{where} ioengine={value} is not allowed (it runs other code); choose an I/O engine")
    problem = engines.placement_problem(engines.engine_name(job.get("ioengine")))
    if problem:
        raise UsageError(f"{where} {problem}")
    for key, value in job.options:
        name = _canonical(key)
        if name in _FORBIDDEN_OPTIONS:
            raise UsageError(
                f"{where} {key}= is not allowed: it {_FORBIDDEN_OPTIONS[name]}, and mountbench keeps every job "
                "inside the target's scratch directory; remove it"
            )
        if name == "stats" and (value or "1").strip().lower() in ("0", "false", "no", "off"):
            raise UsageError(
                f"{where} {key}={value} turns off fio's statistics, which are what mountbench measures (each sample "
                "would be stored with no figures); remove it"
            )
        if name in _PATH_OPTIONS and value:
            for part in value.split(":"):
                if part.startswith(("/", "~")) or ".." in Path(part).parts:
                    raise UsageError(
                        f"{where} {key}={value} points outside the scratch directory; use a relative name "
                        "(mountbench sets directory= to each target's scratch directory)"
                    )


# --- evaluation of fio values (only for planning: fio evaluates them itself) ---


def fio_variables() -> dict[str, int]:
    """The values fio substitutes for ``$ncpus``, ``$mb_memory`` and ``$pagesize`` here."""
    import psutil

    return {
        "ncpus": os.cpu_count() or 1,
        "mb_memory": psutil.virtual_memory().total // (1024 * 1024),
        "pagesize": os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096,
    }


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_NUMBER_WITH_SUFFIX = re.compile(r"(\d+(?:\.\d+)?)([kmgtp]i?b?)\b", re.IGNORECASE)


def evaluate_size(value: str, variables: Mapping[str, int]) -> int | None:
    """Evaluate a size value as fio would (``1000m``, ``2*1024*1024*$mb_memory``).

    Returns None for what mountbench cannot evaluate (a range, a percentage);
    the caller then skips checks that need the figure and says so.
    """
    text = value.strip()
    for name, number in variables.items():
        text = text.replace(f"${name}", str(number))
    try:
        return parse_size(text)
    except UsageError:
        pass
    text = _NUMBER_WITH_SUFFIX.sub(lambda m: str(parse_size(m.group(0))), text).replace("^", "**")
    try:
        tree = ast.parse(text, mode="eval")
        result = int(_eval_node(tree.body))
        return result if result > 0 else None
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError, KeyError):
        return None


def _eval_node(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval_node(node.left), _eval_node(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval_node(node.operand)
    raise ValueError("not an arithmetic expression")


def parse_fio_time(value: str) -> float | None:
    """fio time values: a bare number is seconds; ``500ms``, ``60s``, ``2m`` (units.parse_seconds)."""
    return parse_seconds(value)


def truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in {"1", "true", "yes", "on"}


def wants_direct(job: FioJob) -> bool:
    """Does the job ask for unbuffered I/O? ``direct=1`` and ``buffered=0`` set the same
    thing in fio, so the last of the two in option order decides."""
    decision = False
    for key, value in job.options:
        name = _canonical(key)
        if name == "direct":
            decision = truthy("1" if value is None else value)
        elif name == "buffered":
            decision = not truthy("1" if value is None else value)
    return decision


def working_set_bytes(job: FioJob, variables: Mapping[str, int]) -> int | None:
    """Bytes of files the job lays out: size × numjobs (one file set per clone unless
    ``filename`` is shared). None when the size cannot be evaluated."""
    size_text = job.get("size")
    if size_text is None and job.get("filesize") is not None:
        size_text = f"({job.get('filesize')})*({job.get('nrfiles') or '1'})"
    if size_text is None:
        return None
    size = evaluate_size(size_text, variables)
    if size is None:
        return None
    numjobs = evaluate_size(job.get("numjobs") or "1", variables) or 1
    shared = job.get("filename") is not None
    return size if shared else size * numjobs


def duration_bound_s(job: FioJob) -> float | None:
    """Upper bound of the job's run time from startdelay + ramp_time + runtime; None if unbounded.
    A startdelay range (``1-5``) counts at its upper end."""
    runtime = job.get("runtime")
    if runtime is None:
        return None
    seconds = parse_fio_time(runtime)
    if seconds is None:
        return None
    ramp = parse_fio_time(job.get("ramp_time") or "0") or 0.0
    return seconds + ramp + startdelay_s(job)


def startdelay_s(job: FioJob) -> float:
    """The job's startdelay in seconds (the upper end of a range); 0 when absent or unreadable."""
    text = (job.get("startdelay") or "").strip()
    if not text:
        return 0.0
    return parse_fio_time(text.rpartition("-")[2] if "-" in text[1:] else text) or 0.0


def render_job(job: FioJob, overrides: Iterable[Option], comment: str = "") -> str:
    """The exact job file fio runs: the job's options in order, then mountbench's
    overrides (later assignments win in fio), all in one section."""
    lines = [f"; {line}" for line in comment.splitlines()]
    lines.append(f"[{job.section}]")
    for key, value in job.options:
        if _canonical(key) in _PLACEMENT_KEYS:
            continue
        lines.append(key if value is None else f"{key}={value}")
    overrides = list(overrides)
    if overrides:
        lines.append("; set by mountbench")
        lines.extend(key if value is None else f"{key}={value}" for key, value in overrides)
    return "\n".join(lines) + "\n"


def render_sections(sections: Iterable[Section], overrides: Iterable[Option], comment: str = "") -> str:
    """The job file as written (``[global]`` sections where they stand, every job in order), with
    the user's ``directory=`` dropped and mountbench's overrides after each job's own options
    (later assignments win in fio, and a job's own options come after the globals).

    A ``[global]`` section gets mountbench's ``directory=`` too: fio places a ``filename=`` given
    in ``[global]`` by the directory the globals hold, and a job's own ``directory=`` does not
    move it, so without it the file lands in fio's working directory, not the target."""
    overrides = list(overrides)
    placement = [(key, value) for key, value in overrides if _canonical(key) in _PLACEMENT_KEYS]
    lines = [f"; {line}" for line in comment.splitlines()]
    for section in sections:
        lines.append(f"[{section.name}]")
        for key, value in section.options:
            if _canonical(key) in _PLACEMENT_KEYS:
                continue
            lines.append(key if value is None else f"{key}={value}")
        added = placement if section.is_global else overrides
        if added:
            lines.append("; set by mountbench")
            lines.extend(key if value is None else f"{key}={value}" for key, value in added)
    return "\n".join(lines) + "\n"


def sections_to_spec(sections: Iterable[Section]) -> list:
    return [[s.name, [[k, v] for k, v in s.options]] for s in sections]


def sections_from_spec(data: Iterable) -> list[Section]:
    return [Section(name, tuple((k, v) for k, v in options)) for name, options in data]
