"""Turn fio's JSON (or json+) output into flat metrics. Pure functions.

Metric names: ``<dir>.<name>`` for dir in read/write/trim, with
``iops``, ``bw`` (bytes/s), ``bytes``, ``lat_mean`` and ``lat_p<P>`` (seconds);
plus ``cpu.usr`` and ``cpu.sys`` (percent of one CPU, mean over fio's job
entries). Latency is fio's total latency (``lat_ns``) when the job asked for
``lat_percentiles``, else completion latency (``clat_ns``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from mountbench.errors import UsageError
from mountbench.units import parse_size

DIRECTIONS = ("read", "write", "trim")


class FioOutputError(ValueError):
    """fio's output is not the JSON we asked for."""


@dataclass(frozen=True)
class FioParsed:
    metrics: dict[str, float]
    errors: tuple[str, ...]  # per-job error descriptions (non-zero "error" fields)
    version: str


def load_fio_json(text: str) -> dict:
    """fio sometimes prints notices before the JSON document; skip to the first brace."""
    start = text.find("{")
    if start < 0:
        raise FioOutputError("fio produced no JSON output")
    try:
        return json.loads(text[start:])
    except json.JSONDecodeError as exc:
        raise FioOutputError(f"fio's JSON output is truncated or invalid ({exc.msg})") from None


def parse_fio(document: dict, *, as_groups: bool = False) -> FioParsed:
    """The document's metrics. ``as_groups``: each direction's rates are what fio's
    ``group_reporting`` gives (:func:`_group_rates`), whatever the job file asked; otherwise the
    entries' own rates are added (the clients' aggregate: machines that each ran for their own time),
    phases one after another aside."""
    try:
        return _parse_fio(document, as_groups)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise FioOutputError(f"fio's JSON output has an unexpected shape ({type(exc).__name__}: {exc})") from None


def _parse_fio(document: dict, as_groups: bool) -> FioParsed:
    jobs = document.get("jobs") or []
    if not jobs:
        raise FioOutputError("fio's JSON output has no jobs")
    metrics: dict[str, float] = {}
    for direction in DIRECTIONS:
        metrics.update(_direction_metrics(direction, [job[direction] for job in jobs if direction in job]))
        metrics.update(_group_rates(direction, jobs) if as_groups else _phased_rates(direction, jobs))
    files = _files_per_s(jobs, as_groups)
    if files:
        metrics["files_per_s"] = files
    metrics["cpu.usr"] = sum(float(job.get("usr_cpu", 0.0)) for job in jobs) / len(jobs)
    metrics["cpu.sys"] = sum(float(job.get("sys_cpu", 0.0)) for job in jobs) / len(jobs)
    errors = tuple(f"{job.get('jobname', '?')}: error {job['error']}" for job in jobs if int(job.get("error", 0) or 0))
    return FioParsed(metrics, errors, str(document.get("fio version", "")))


def _files_per_s(jobs: list[dict], as_groups: bool = False) -> float:
    """Files handled per second for jobs over many small files (``nrfiles``): the
    small-file churn view. fio's own job runtime, so its start-up is not counted. ``as_groups``:
    as fio's group_reporting counts rates (:func:`_group_rates`), a group's files over its longest
    job's runtime, groups one after another over their summed times."""
    total = 0.0
    phases: dict[int, list[float]] = {}  # group -> [files, its longest runtime in ms]
    for job in jobs:
        options = job.get("job options", {})
        runtime_ms = float(job.get("job_runtime", 0) or 0)
        if "nrfiles" not in options or runtime_ms <= 0:
            continue
        try:
            clones = parse_size(options.get("numjobs", "1")) if options.get("group_reporting") else 1
            files = parse_size(options["nrfiles"]) * clones
        except UsageError:  # a variable or an expression: no honest count
            return 0.0
        total += files / (runtime_ms / 1000)
        phase = phases.setdefault(int(job.get("groupid", 0) or 0), [0.0, 0.0])
        phase[0] += files
        phase[1] = max(phase[1], runtime_ms)
    if as_groups and phases:
        return sum(files for files, _ in phases.values()) / (sum(ms for _, ms in phases.values()) / 1000)
    return total


def _group_rates(direction: str, jobs: list[dict]) -> dict[str, float]:
    """The direction's rates as fio's ``group_reporting`` gives them (fio's stat.c): the I/Os and
    bytes of all the jobs of a group (fio's ``groupid``: the jobs between two stonewalls) over the
    group's longest runtime in that direction, not the jobs' own rates added (a job that ended first
    would count its rate over time it did not run). Groups that move the direction one after another
    (phases) give all their I/Os over their summed times. fio's arithmetic: IOPS ``1000.0 * ios / ms``,
    bandwidth in whole bytes per second. {} when the direction moved no data."""
    groups: dict[int, list[dict]] = {}
    for job in jobs:
        if int(job.get(direction, {}).get("io_bytes", 0) or 0) > 0:
            groups.setdefault(int(job.get("groupid", 0) or 0), []).append(job)
    if not groups:
        return {}
    ms = sum(max(_runtime_ms(job, direction) for job in members) for members in groups.values())
    if ms <= 0:
        return {}
    members = [job[direction] for group in groups.values() for job in group]
    ios = sum(int(stats.get("total_ios", 0) or 0) for stats in members)
    moved = sum(int(stats.get("io_bytes", 0) or 0) for stats in members)
    return {f"{direction}.iops": 1000.0 * ios / ms, f"{direction}.bw": float(1000 * moved // ms)}


def _runtime_ms(job: dict, direction: str) -> int:
    """The job's runtime in the direction (fio's ``runtime``, ms), else its whole runtime."""
    return int(job[direction].get("runtime", 0) or job.get("job_runtime", 0) or 0)


def _phased_rates(direction: str, jobs: list[dict]) -> dict[str, float]:
    """When the direction moves in several of fio's groups (phases that run one after another,
    stonewall), adding their rates up is no rate at all: the direction's figure is then all its
    I/Os over the phases' summed time (each phase's time: its longest job's). {} otherwise."""
    phases: dict[int, list[dict]] = {}
    for job in jobs:
        if int(job.get(direction, {}).get("io_bytes", 0) or 0) > 0:
            phases.setdefault(int(job.get("groupid", 0) or 0), []).append(job)
    if len(phases) < 2:
        return {}
    seconds = sum(max(float(j.get("job_runtime", 0) or 0) for j in members) for members in phases.values()) / 1000
    if seconds <= 0:
        return {}
    members = [j[direction] for group in phases.values() for j in group]
    return {
        f"{direction}.iops": sum(float(s.get("total_ios", 0) or 0) for s in members) / seconds,
        f"{direction}.bw": sum(float(s.get("io_bytes", 0) or 0) for s in members) / seconds,
    }


def job_metrics(document: dict) -> dict[str, float]:
    """Each job's own figures, as fio reports it (one entry per job, or per group with
    group_reporting): ``<job>/<dir>.iops``, ``.bw`` and ``.lat_mean``. A job name that repeats
    (numjobs without group_reporting) is numbered: ``name#2``."""
    seen: dict[str, int] = {}
    out: dict[str, float] = {}
    for job in document.get("jobs") or []:
        name = str(job.get("jobname", "job")).replace(".", "_").replace("/", "_")
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}#{seen[name]}"
        for direction in DIRECTIONS:
            stats = job.get(direction) or {}
            if int(stats.get("io_bytes", 0) or 0) <= 0:
                continue
            out[f"{label}/{direction}.iops"] = float(stats.get("iops", 0.0))
            out[f"{label}/{direction}.bw"] = float(stats.get("bw_bytes", 0.0))
            latency = stats.get(_latency_key([stats]), {})
            if latency.get("N"):
                out[f"{label}/{direction}.lat_mean"] = float(latency["mean"]) / 1e9
    return out


def short_jobs(document: dict) -> list[str]:
    """Jobs that moved data within fio's 1 ms tick or less (job_runtime 0 or 1): their rates
    are I/Os divided by a millisecond fio could not time."""
    found = []
    for job in document.get("jobs") or []:
        moved = any(int((job.get(d) or {}).get("io_bytes", 0) or 0) > 0 for d in DIRECTIONS)
        if moved and float(job.get("job_runtime", 0) or 0) <= 1:
            found.append(str(job.get("jobname", "?")))
    return found


def _direction_metrics(direction: str, stats: list[dict]) -> dict[str, float]:
    io_bytes = sum(int(s.get("io_bytes", 0)) for s in stats)
    if io_bytes <= 0:
        return {}
    out = {
        f"{direction}.iops": sum(float(s.get("iops", 0.0)) for s in stats),
        f"{direction}.bw": sum(float(s.get("bw_bytes", 0.0)) for s in stats),
        f"{direction}.bytes": float(io_bytes),
    }
    latency_key = _latency_key(stats)
    lat = [s[latency_key] for s in stats if s.get(latency_key, {}).get("N")]
    if lat:
        total = sum(int(entry["N"]) for entry in lat)
        out[f"{direction}.lat_mean"] = sum(entry["mean"] * entry["N"] for entry in lat) / total / 1e9
        for pct, ns in _percentiles(lat).items():
            out[f"{direction}.lat_p{pct}"] = ns / 1e9
    return out


def _latency_key(stats: list[dict]) -> str:
    """Prefer total latency when fio computed percentiles for it (lat_percentiles=1)."""
    if all("percentile" in s.get("lat_ns", {}) for s in stats):
        return "lat_ns"
    return "clat_ns"


def _percentiles(entries: list[dict]) -> dict[str, float]:
    """fio's own percentiles for one job; for several, recompute them from the
    merged json+ histograms (percentiles do not average)."""
    if len(entries) == 1:
        return {_pct_name(p): float(v) for p, v in entries[0].get("percentile", {}).items()}
    if all("bins" in e for e in entries):
        merged: dict[int, int] = {}
        for entry in entries:
            for value, count in entry["bins"].items():
                merged[int(value)] = merged.get(int(value), 0) + int(count)
        wanted = [float(p) for p in entries[0].get("percentile", {})]
        return {_pct_name(p): v for p, v in histogram_percentiles(merged, wanted).items()}
    return {}  # several jobs and plain json: no honest percentile exists


def histogram_percentiles(bins: dict[int, int], percentiles: Iterable[float]) -> dict[float, float]:
    """The smallest bin value at or above each percentile of the counts."""
    ordered = sorted(bins.items())
    total = sum(count for _, count in ordered)
    result: dict[float, float] = {}
    if total == 0:
        return result
    for pct in percentiles:
        threshold = total * pct / 100.0
        running = 0
        for value, count in ordered:
            running += count
            if running >= threshold:
                result[pct] = float(value)
                break
    return result


def _pct_name(pct: str | float) -> str:
    """'99.900000' -> '99.9', '50.000000' -> '50'."""
    return f"{float(pct):g}"
