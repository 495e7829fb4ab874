"""fio job files: parse them into one option list per job, read their sizes and
durations, and render the exact job text that runs on a target.

fio itself stays the authority on meaning: mountbench only reads the few
options it needs to plan (size, numjobs, runtime, direct, ioengine) and passes
every option through untouched, so ``$ncpus``, ``$mb_memory`` and arithmetic
keep working because fio evaluates them.

A job file is read as fio reads it (fio's init.c, parse_jobs_ini): a line is at most 8190
characters (fio reads the rest as another line), comments start at ``;`` or ``#``, a line that
starts with ``include`` (any spelling fio takes: ``include=``, ``include<TAB>``, ``includeX``)
reads another file, and ``${NAME}`` in an option line is the environment's NAME. mountbench
refuses ``include`` (one file is what is checked and run), puts in ``${NAME}`` itself before any
check (so what is checked is what fio runs), and checks every option against an allowlist of
what a measurement needs (:data:`ALLOWED`, with fio's aliases folded): an option outside it is
refused by name, before the first sample. Counts and times are bounded, and arithmetic is
evaluated only within bounds. The kernel fences what fio does anyway (host/contain.py): these
checks are for telling the user early, never the only thing between a typo and their data.
"""

from __future__ import annotations

import ast
import functools
import math
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


@dataclass(frozen=True)
class FioJob:
    """One fio job (a section), with the global options in force for it merged in front."""

    section: str
    options: tuple[Option, ...]

    def get(self, key: str) -> str | None:
        """The last value given for ``key`` or any of its aliases (fio: later assignments win);
        None if absent. A bare flag returns "1".
        """
        found: str | None = None
        key = canonical(key)
        for name, value in self.options:
            if canonical(name) == key:
                found = "1" if value is None else value
        return found

    def to_spec(self) -> dict:
        return {"section": self.section, "options": [[k, v] for k, v in self.options]}

    @classmethod
    def from_spec(cls, spec: Mapping) -> FioJob:
        return cls(spec["section"], tuple((k, v) for k, v in spec["options"]))


def _canonical(key: str) -> str:
    return canonical(key)


@dataclass(frozen=True)
class Section:
    """One section of a job file as written: ``[global]`` or a job, its own options only, each path
    placed where mountbench says (:data:`PLACEMENT_RULE`); ``placed`` holds (the option's index, the
    value as written) of those it changed, said where the file is rendered."""

    name: str
    options: tuple[Option, ...]
    placed: tuple[tuple[int, str], ...] = ()

    @property
    def is_global(self) -> bool:
        return self.name == "global"


def strip_comment(line: str) -> str:
    """The line as fio reads it: everything from the first ``;`` or ``#`` on is a comment
    (fio's strip_blank_end), so ``filename=sda ; or use /dev/sda`` names ``sda``."""
    cut = min((i for i in (line.find(";"), line.find("#")) if i >= 0), default=len(line))
    return line[:cut].strip()


LINE_LIMIT = 8190  # fio reads a line with fgets(8192): a longer line becomes two lines
SECTION_NAME_LIMIT = 128  # fio takes up to 255; mountbench names files and workloads after it
_ENV = re.compile(r"\$\{([^}]*)\}")


@dataclass(frozen=True)
class _Line:
    number: int
    raw: str  # as written (comment and blanks stripped), before ${NAME} was put in


def parse_sections(text: str, origin: str = "<job file>", environ: Mapping[str, str] | None = None) -> list[Section]:
    """The file's sections in order, as fio reads them (comments stripped, ``${NAME}`` put in
    from ``environ``, by default this process's environment); every line, section name and
    option is checked (see the module), each job with the globals in force for it merged in front."""
    environ = os.environ if environ is None else environ
    if text.startswith("\ufeff"):
        raise UsageError(
            f"{origin} starts with a byte-order mark, which fio does not read (it takes the first line for an "
            "option outside any section); save it as UTF-8 without a byte-order mark"
        )
    sections: list[tuple[str, int, list[Option], list[_Line]]] = []
    for lineno, raw in enumerate(text.split("\n"), 1):
        _check_line(raw, origin, lineno)
        line = strip_comment(raw)
        if not line:
            continue
        if line.startswith("["):
            name = line[1:].partition("]")[0].strip()
            if not name:
                raise UsageError(f"{origin}:{lineno}: empty section name []; name each job, e.g. [random-read]")
            problem = name_problem(name)
            if problem:
                raise UsageError(f"{origin}:{lineno}: [{_shown(name)}] section name {problem}")
            sections.append((name, lineno, [], []))
            continue
        if line[:7].lower() == "include":
            raise UsageError(
                f"{origin}:{lineno}: {_shown(line, 60)!r} is an include, which fio reads from another file; "
                "mountbench runs one job file as checked: paste the included options into the file"
            )
        expanded = _put_in_environment(line, environ, origin, lineno)
        if not sections:
            raise UsageError(
                f"{origin}:{lineno}: option before any [section]; start the file with [global] or [jobname]"
            )
        key, sep, value = expanded.partition("=")
        sections[-1][2].append((key.strip(), value.strip() if sep else None))
        sections[-1][3].append(_Line(lineno, line))
    jobs = merged_jobs(Section(name, tuple(options)) for name, _, options, _ in sections)
    if not jobs:
        raise UsageError(f"{origin}: no job sections; add at least one [jobname] section")
    for job in jobs:
        check_job(job, origin)
    found = []
    names: dict[str, set[str]] = {}  # a file's name in the scratch directory -> the paths written for it
    for name, _, options, lines in sections:
        kept: list[Option] = []
        placed: list[tuple[int, str]] = []
        for (key, value), where in zip(options, lines, strict=True):
            said = "" if where.raw == _joined(key, value) else f" (written {where.raw!r}: the environment put in)"
            if value is not None and canonical(key) in _PATH_OPTIONS:
                new, problem = place(key, value)
                if problem:
                    raise UsageError(f"{origin}:{where.number}: [{_shown(name)}] {problem}{said}")
                if new != value:
                    placed.append((len(kept), value))
                if canonical(key) in _DATA_FILE_OPTIONS:
                    for written, there in zip(_parts(key, value), _parts(key, new), strict=True):
                        names.setdefault(there, set()).add(os.path.normpath(written))
                value = new
            problem = option_problem(key, value)
            if problem:
                raise UsageError(f"{origin}:{where.number}: [{_shown(name)}] {problem}{said}")
            kept.append((key, value))
        found.append(Section(name, tuple(kept), tuple(placed)))
    for there, written in names.items():
        if len(written) > 1:
            raise UsageError(
                f"{origin}: {' and '.join(sorted(written))} would be one file ({there}) where fio has "
                f"{len(written)}: {PLACEMENT_RULE}; give them different names"
            )
    return found


PLACEMENT_RULE = (
    "mountbench puts every file a job names where it measures (the job's files in each target's scratch "
    "directory, fio's logs in the run's work folder): directory= is its own, and of a path only the name "
    "is kept (filename=/tmp/data is data there)"
)
_DATA_FILE_OPTIONS = ("filename", "filename_format", "donorname")  # names of the files a job works on


def _parts(key: str, value: str) -> list[str]:
    """The names a value holds: a filename= lists several, separated by ':'."""
    return [part.strip() for part in value.split(":")] if canonical(key) == "filename" else [value.strip()]


def place(key: str, value: str) -> tuple[str, str]:
    """The value as mountbench runs it (:data:`PLACEMENT_RULE`): each path that leads outside the
    scratch directory (absolute, ``~``, ``..``) reduced to its name, a relative name kept as written;
    and the problem ('' when none): a device (/dev/...) or a path that names no file."""
    out = []
    for piece in _parts(key, value):
        if piece == "/dev" or piece.startswith("/dev/"):
            return value, f"{key}={value} names a device ({piece}), not a file: {PLACEMENT_RULE}; give a file name"
        steps = [step for step in piece.split("/") if step not in ("", ".")]
        if not (piece.startswith(("/", "~")) or ".." in steps):
            out.append(piece)
            continue
        name = steps[-1] if steps and not piece.endswith("/") else ""
        if not name or name == ".." or name.startswith("~"):
            return value, f"{key}={value} names a directory, not a file: {PLACEMENT_RULE}; give a file name"
        out.append(name)
    return ":".join(out), ""


def _joined(key: str, value: str | None) -> str:
    return key if value is None else f"{key}={value}"


def _check_line(raw: str, origin: str, lineno: int) -> None:
    line = raw.removesuffix("\r")
    if len(line) > LINE_LIMIT:
        raise UsageError(
            f"{origin}:{lineno}: the line is longer than {LINE_LIMIT} characters ({len(line):,}): fio would read "
            "the rest as another line, so the file would not run as written; shorten it"
        )
    bad = next((c for c in line if not c.isprintable() and c != "\t"), None)
    if bad is not None:
        raise UsageError(f"{origin}:{lineno}: holds a control character ({bad!r}); a job file is text: remove it")


def _put_in_environment(line: str, environ: Mapping[str, str], origin: str, lineno: int) -> str:
    """``${NAME}`` replaced by the environment's NAME, as fio does it; an unset name or an
    unclosed ``${`` refused (fio would quietly put in nothing, or keep the text)."""
    start = line.find("${")
    if start < 0:
        return line
    if "}" not in line[start:]:
        raise UsageError(f"{origin}:{lineno}: {_shown(line[start:], 40)!r} has no closing '}}'; write ${{NAME}}")

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if not name or name not in environ:
            raise UsageError(
                f"{origin}:{lineno}: ${{{_shown(name, 40)}}} is not set in the environment (fio would put in "
                "nothing); set it, or write the value"
            )
        return environ[name]

    return _ENV.sub(value, line)


def _shown(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def name_problem(name: str) -> str:
    """Why ``name`` cannot name a job ('' when it can): fio names files and logs after a job
    (``$jobname``), so a name that is a path step, holds '/', is long or not printable is refused."""
    if name in (".", "..") or name.strip(".") == "":
        return "is a path step ('.' or '..'): fio would place files named after it outside the scratch directory"
    if "/" in name or name.startswith("~"):
        return (
            "would place fio's files outside the scratch directory (fio names files and logs after the section); "
            "rename the section without '/'"
        )
    if len(name) > SECTION_NAME_LIMIT:
        return f"has {len(name)} characters; a name has at most {SECTION_NAME_LIMIT}: shorten it"
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is not None:
        return f"holds a control character ({bad!r}); rename it"
    if "$" in name:
        return "holds '$', which fio would read as a variable in file names; rename it without '$'"
    return ""


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
    except UsageError:
        raise
    except (UnicodeDecodeError, ValueError):
        raise UsageError(f"job file {path} is not a text file; give an fio job file (INI text)") from None
    except OSError as exc:
        raise UsageError(f"cannot read job file {path}: {exc.strerror or exc}") from None
    return parse_sections(text, origin=str(path))


# fio's aliases of its options (fio --cmdhelp): a job file may write either
FIO_ALIASES = {
    "readwrite": "rw", "blocksize": "bs", "blockalign": "ba", "blocksize_range": "bsrange",
    "blocksize_unaligned": "bs_unaligned", "iodepth_batch_submit": "iodepth_batch",
    "iodepth_batch_complete": "iodepth_batch_complete_min", "io_limit": "io_size", "fill_fs": "fill_device",
    "fileoffset": "offset", "nr_files": "nrfiles", "timeout": "runtime", "iomem": "mem", "ratemin": "rate_min",
    "ratecycle": "rate_cycle", "wait_for_previous": "stonewall", "disable_bw": "disable_bw_measurement",
    "ss": "steadystate", "ss_dur": "steadystate_duration", "ss_ramp": "steadystate_ramp_time",
}  # fmt: skip

# What a measurement needs: every fio option a job file may hold (fio's canonical names). The
# values of those in _PATH_OPTIONS, _COUNTS and _TIMES, ``mem``, ``name`` and ``stats`` are checked too.
_ALLOWED_NAMES = """
description name wait_for filename lockfile directory filename_format unique_filename rw bs ba bsrange
bssplit bs_unaligned randrepeat randseed norandommap ignore_error rw_sequencer ioengine iodepth
iodepth_batch iodepth_batch_complete_min iodepth_batch_complete_max iodepth_low serialize_overlap
io_submit_mode size io_size fill_device filesize file_append offset offset_increment offset_align
number_ios random_generator random_distribution percentage_random allrandrepeat nrfiles
file_service_type openfiles fallocate fadvise_hint fsync fdatasync write_barrier sync_file_range
direct atomic buffered overwrite loops numjobs startdelay runtime time_based verify_only ramp_time
clocksource mem verify do_verify verify_interval verify_offset verify_pattern verify_fatal
verify_dump verify_async verify_backlog verify_backlog_batch experimental_verify verify_state_save
trim_percentage trim_verify_zero trim_backlog trim_backlog_batch zonemode zonesize zonecapacity
zonerange zoneskip read_beyond_wp max_open_zones job_max_open_zones ignore_zone_limits
zone_reset_threshold zone_reset_frequency rwmixread rwmixwrite nice prio prioclass thinktime
thinktime_spin thinktime_blocks thinktime_blocks_type thinktime_iotime rate rate_min rate_process
rate_cycle rate_ignore_thinktime rate_iops rate_iops_min max_latency latency_target latency_window
latency_percentile latency_run invalidate sync write_hint create_serialize create_fsync
create_on_open create_only allow_file_create pre_read cpumask cpus_allowed cpus_allowed_policy
numa_cpu_nodes numa_mem_policy end_fsync fsync_on_close unlink unlink_each_loop exitall exit_what
exitall_on_error stonewall new_group thread per_job_logs write_bw_log bwavgtime write_lat_log
write_iops_log iopsavgtime log_entries log_avg_msec log_hist_msec log_hist_coarseness write_hist_log
log_max_value log_offset log_prio log_compression log_compression_cpus log_store_compressed
log_unix_epoch log_alternate_epoch log_alternate_epoch_clock_id block_error_percentiles
group_reporting stats zero_buffers refill_buffers scramble_buffers buffer_pattern
buffer_compress_percentage buffer_compress_chunk dedupe_percentage dedupe_mode
dedupe_working_set_percentage dedupe_global clat_percentiles lat_percentiles slat_percentiles
percentile_list significant_figures disk_util gtod_reduce disable_lat disable_clat disable_slat
disable_bw_measurement gtod_cpu unified_rw_reporting continue_on_error error_dump kb_base unit_base
hugepage-size flow_id flow flow_sleep steadystate steadystate_duration steadystate_ramp_time
userspace_reap cmdprio_percentage cmdprio_class cmdprio cmdprio_bssplit nowait hipri hipri_percentage
fixedbufs registerfiles sqthread_poll sqthread_poll_cpu nonvectored uncached force_async thp
stat_type inplace donorname cpuload cpumode cpuchunks exit_on_io_done gpu_dev_ids cuda_io rocm_io
"""
ALLOWED = frozenset(_ALLOWED_NAMES.split())

# Options whose value names a file fio creates or opens: relative to the scratch directory
# (filename*) or to fio's private working directory (logs), never absolute and never climbing
# out with "..".
_PATH_OPTIONS = {
    "filename", "filename_format", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log",
    "donorname",
}  # fmt: skip
_FILENAME_TOKENS = ("$jobname", "$jobnum", "$filenum", "$clientuid")  # what fio puts in a file name itself
# Options that reach outside the scratch directory by design, change the system, or run programs:
# refused with their reason (anything else outside ALLOWED is refused as not needed).
_FORBIDDEN_OPTIONS = {
    "opendir": "reads a directory tree outside the scratch directory",
    "exec_prerun": "runs another program",
    "exec_postrun": "runs another program",
    "trigger_cmd": "runs another program",
    "trigger": "runs another program",
    "trigger_file": "acts on a file outside the scratch directory",
    "create_serialize_cmd": "runs another program",
    "cgroup": "creates a control group outside the scratch directory",
    "cgroup_nodelete": "keeps a control group outside the scratch directory",
    "cgroup_weight": "creates a control group outside the scratch directory",
    "ioscheduler": "changes the I/O scheduler of the target's device",
    "profile": "runs one of fio's built-in profiles in place of the file's jobs",
    "uid": "runs the job as another user",
    "gid": "runs the job as another group",
    "lockmem": "locks the machine's memory away from everything else",
    "allow_mounted_write": "writes to a mounted device",
    "write_iolog": "writes a log of every I/O by a path of its own",
    "read_iolog": "replays I/O from a log file outside the scratch directory",
    "read_iolog_chunked": "replays I/O from a log file outside the scratch directory",
    "replay_redirect": "replays I/O onto another device",
    "merge_blktrace_file": "writes a merged trace by a path of its own",
    "verify_state_load": "reads fio's verify state left by an earlier run outside the scratch directory",
}
_FORBIDDEN_ENGINES = tuple(sorted(engines.RUNS_PROGRAMS))
_MEM_KINDS = ("malloc", "shm", "shmhuge", "mmap", "mmaphuge", "mmapshared", "cudamalloc")

# Bounds of what a job may ask for (each refused with one line above it)
COUNT_LIMITS = {"numjobs": 1024, "nrfiles": 100_000, "openfiles": 100_000, "loops": 1_000_000}
FILES_LIMIT = 100_000  # files of one job (numjobs x nrfiles), each listed to lay out and check
TIME_LIMIT_S = 7 * 86_400.0  # startdelay, runtime, ramp_time
_TIMES = ("startdelay", "runtime", "ramp_time", "steadystate_duration", "steadystate_ramp_time")


def canonical(key: str) -> str:
    """The option's canonical fio name (fio's aliases folded, e.g. iomem -> mem)."""
    name = key.strip().lower()
    return FIO_ALIASES.get(name, name)


def option_problem(key: str, value: str | None) -> str:
    """Why one option may not run ('' when it may): outside the allowlist, refused with its
    reason, or a value that reaches outside the scratch directory or beyond a bound."""
    name = canonical(key)
    shown = _shown(_joined(key, value), 80)
    if name in _FORBIDDEN_OPTIONS:
        return (
            f"{key}= is not allowed: it {_FORBIDDEN_OPTIONS[name]}, and mountbench keeps every job inside the "
            "target's scratch directory; remove it"
        )
    if name not in ALLOWED:
        return (
            f"option {_shown(key, 40)!r} is not among the fio options mountbench runs (an allowlist of what a "
            f"measurement needs{_near(name)}); remove it"
        )
    if name == "stats" and (value or "1").strip().lower() in ("0", "false", "no", "off"):
        return (
            f"{key}={value} turns off fio's statistics, which are what mountbench measures (each sample "
            "would be stored with no figures); remove it"
        )
    if name == "name" and value is not None:
        problem = name_problem(value.strip())
        if problem:
            return f"{shown}: the job's name {problem}"
    if name == "mem" and value is not None:
        kind, sep, _file = value.partition(":")
        if sep or kind.strip().lower() not in _MEM_KINDS:
            return (
                f"{shown} maps memory from a file outside the scratch directory (or is no kind of memory fio "
                f"has); give one of {', '.join(_MEM_KINDS)} without a path"
            )
    if name in _PATH_OPTIONS and value:
        problem = _path_problem(name, value)
        if problem:
            return f"{shown} {problem}"
    if value is not None and name in COUNT_LIMITS:
        count = evaluate_count(value, fio_variables_bounded())
        if count is None or count > COUNT_LIMITS[name]:
            return f"{shown}: {name} is at most {COUNT_LIMITS[name]:,} here (a whole number); lower it"
    if value is not None and name in _TIMES:
        seconds = _time_upper(value)
        if seconds is None or seconds > TIME_LIMIT_S:
            return f"{shown}: {name} is at most {TIME_LIMIT_S / 86_400:g} days (e.g. 60s, 10m, 2h); lower it"
    if value is not None and name in _SIZES:
        problem = size_problem(value)
        if problem:
            return f"{shown}: {problem}"
    return ""


def _near(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(ALLOWED | set(FIO_ALIASES)), n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


def _path_problem(name: str, value: str) -> str:
    parts = value.split(":") if name == "filename" else [value]
    for part in parts:
        piece = part.strip()
        steps = [step for step in piece.split("/") if step]
        if piece.startswith(("/", "~")) or ".." in steps:
            # a job file's paths are placed (place()); this is what fio itself read another way
            return f"points outside the scratch directory: {PLACEMENT_RULE}; give the file's name"
        if name == "filename" and (not steps or all(step == "." for step in steps)):
            return "names the scratch directory itself, not a file in it; give a file name"
        rest = piece
        for token in _FILENAME_TOKENS if name == "filename_format" else ():
            rest = rest.replace(token, "")
        if "$" in rest:
            return (
                "holds '$', which is no name fio puts in here (nor the environment: fio puts in only ${NAME}); "
                "write the name itself"
            )
    return ""


def check_job(job: FioJob, origin: str) -> None:
    """Refuse a job, before any option of it is looked at, whose name or engine would reach outside
    the scratch directory, run a program, or have no files in a directory to measure (a network,
    object-store or device engine); and one that would list too many files."""
    where = f"{origin}: [{_shown(job.section)}]"
    problem = name_problem(job.section)
    if problem:
        raise UsageError(f"{where} the section name {problem}")
    for key, value in job.options:
        if canonical(key) == "ioengine" and value and value.split(":")[0].strip() in _FORBIDDEN_ENGINES:
            raise UsageError(f"{where} ioengine={value} is not allowed (it runs other code); choose an I/O engine")
    problem = engines.placement_problem(engines.engine_name(job.get("ioengine")))
    if problem:
        raise UsageError(f"{where} {problem}")
    variables = fio_variables_bounded()
    files = (evaluate_count(job.get("numjobs") or "1", variables) or 1) * (
        evaluate_count(job.get("nrfiles") or "1", variables) or 1
    )
    if files > FILES_LIMIT:
        raise UsageError(
            f"{where} numjobs x nrfiles asks for {files:,} files; at most {FILES_LIMIT:,} here: lower one of them"
        )


_FIO_SECTION = re.compile(r"^parse\s+\d+\s+Parsing section \[(.*)\]$")
_FIO_OPTION = re.compile(r"^parse\s+\d+\s+handle_option=(.*?), ptr=(.*)$")


def fio_view_problem(debug_output: str) -> str:
    """The first option fio itself read (``fio --parse-only --debug=parse``: every option of every
    section, fio's canonical name and the value after fio put in what it puts in) that may not
    run, as '[section] reason'; '' when none. What fio reads is checked, not only what mountbench
    parsed: a line fio reads differently cannot carry an option past the allowlist."""
    section = "?"
    for line in debug_output.splitlines():
        found = _FIO_SECTION.match(line)
        if found:
            section = found.group(1)
            continue
        found = _FIO_OPTION.match(line)
        if found:
            problem = option_problem(found.group(1), found.group(2))
            if problem:
                return f"[{_shown(section)}] {problem} (as fio reads it)"
    return ""


def check_placement(job: FioJob, origin: str) -> None:
    """Every check of a job (its name and engine, then each of its options, globals merged): what
    a stored or resumed workload gets again before it runs."""
    check_job(job, origin)
    for key, value in job.options:
        problem = option_problem(key, value)
        if problem:
            raise UsageError(f"{origin}: [{_shown(job.section)}] {problem}")


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
EXPRESSION_LIMIT = 256  # characters of arithmetic mountbench evaluates (fio's own: one line)
_NODE_LIMIT = 64  # numbers and operators in one expression
VALUE_LIMIT = 2**63 - 1  # fio holds sizes in a signed 64-bit number
_ARITHMETIC = re.compile(r"[*/+^%]")
_SIZES = ("size", "filesize", "io_size", "offset")


@functools.cache
def fio_variables_bounded() -> dict[str, int]:
    """:func:`fio_variables`, read once (the checks ask for them option by option)."""
    return fio_variables()


def evaluate_size(value: str, variables: Mapping[str, int]) -> int | None:
    """Evaluate a size value as fio would (``1000m``, ``2*1024*1024*$mb_memory``, ``(4k*2)``).

    Returns None for what mountbench cannot evaluate (a range, a percentage, arithmetic fio
    would not evaluate, a value out of bounds); the caller then skips checks that need the
    figure and says so. Arithmetic is evaluated only within bounds (:data:`EXPRESSION_LIMIT`
    characters, :data:`_NODE_LIMIT` terms, results below 2**63): ``9**9**9`` is never computed.
    """
    text = value.strip()
    if len(text) > EXPRESSION_LIMIT:
        return None
    for name, number in variables.items():
        text = text.replace(f"${name}", str(number))
    try:
        size = parse_size(text)
        return size if 0 < size <= VALUE_LIMIT else None
    except (UsageError, OverflowError, ValueError):
        pass
    text = _NUMBER_WITH_SUFFIX.sub(lambda m: str(parse_size(m.group(0))), text).replace("^", "**")
    try:
        tree = ast.parse(text, mode="eval")
        if sum(1 for _ in ast.walk(tree)) > 2 * _NODE_LIMIT:
            return None
        result = int(_eval_node(tree.body))
        return result if 0 < result <= VALUE_LIMIT else None
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError, KeyError, OverflowError, RecursionError):
        return None


def evaluate_count(value: str, variables: Mapping[str, int]) -> int | None:
    """A count (numjobs, nrfiles) as a whole number, ``$ncpus`` and bounded arithmetic put in;
    None when it is not one (``1e6``, ``2.5``)."""
    text = value.strip()
    if text.isdigit() and len(text) <= 19:
        return int(text)
    bare = text
    for name in variables:
        bare = bare.replace(f"${name}", "")
    if not text or any(c.isalpha() for c in bare):  # a suffix (1e6, 4k) is no count
        return None
    return evaluate_size(text, variables)


def size_problem(value: str) -> str:
    """Why a size value would not be read as written ('' when it would): fio evaluates arithmetic
    only in parentheses or beside its own variables (``9**9**9`` is 9 bytes to fio), and holds
    sizes below 2**63."""
    text = value.strip()
    if len(text) > EXPRESSION_LIMIT:
        return f"longer than {EXPRESSION_LIMIT} characters; write the size itself"
    arithmetic = _ARITHMETIC.search(text.replace("$", "")) is not None
    if arithmetic and not text.startswith("(") and "$" not in text:
        return (
            "fio evaluates arithmetic only within parentheses (or beside $ncpus, $mb_memory, $pagesize), and "
            "would read the leading number alone; write (EXPRESSION) or the size itself"
        )
    if arithmetic and evaluate_size(text, fio_variables_bounded()) is None:
        return "arithmetic mountbench cannot evaluate within bounds (a size below 2^63 bytes); write the size itself"
    if not arithmetic and text.lstrip().isdigit() and int(text) > VALUE_LIMIT:
        return "larger than fio can hold (2^63 bytes); lower it"
    return ""


def _time_upper(value: str) -> float | None:
    text = value.strip()
    text = text.rpartition("-")[2] if "-" in text[1:] else text
    return parse_fio_time(text)


def _eval_node(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        if abs(node.value) > VALUE_LIMIT:
            raise ValueError("out of bounds")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.Pow) and abs(left) > 1 and (right > 64 or right * math.log2(abs(left)) > 64):
            raise ValueError("out of bounds")
        result = _BINOPS[type(node.op)](left, right)
        if isinstance(result, complex) or abs(result) > VALUE_LIMIT:
            raise ValueError("out of bounds")
        return result
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
        written = dict(section.placed)
        for index, (key, value) in enumerate(section.options):
            if _canonical(key) in _PLACEMENT_KEYS:
                lines.append(f"; set by mountbench: {_joined(key, value)} replaced (mountbench says where)")
                continue
            if index in written:
                lines.append(f"; set by mountbench: {key}={written[index]} placed by its name (mountbench says where)")
            lines.append(key if value is None else f"{key}={value}")
        added = placement if section.is_global else overrides
        if added:
            lines.append("; set by mountbench")
            lines.extend(key if value is None else f"{key}={value}" for key, value in added)
    return "\n".join(lines) + "\n"


def sections_to_spec(sections: Iterable[Section]) -> list:
    """``[name, options]``, and the placed names' written values when mountbench placed any."""
    return [
        [s.name, [[k, v] for k, v in s.options], *([[[i, w] for i, w in s.placed]] if s.placed else [])]
        for s in sections
    ]


def sections_from_spec(data: Iterable) -> list[Section]:
    """Sections back from :func:`sections_to_spec` (also as stored before names were placed)."""
    found = []
    for name, options, *placed in data:
        written = tuple((int(i), str(w)) for i, w in placed[0]) if placed else ()
        found.append(Section(name, tuple((k, v) for k, v in options), written))
    return found
