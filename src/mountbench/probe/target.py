"""probe_target: run every capability probe against one directory, safely.

The calling process never touches the target: looking for leftovers of killed probes,
creating the scratch directory, each probe, and the removal each run in a child process
bounded by ``timeout``. After a probe hangs, the target is pinged; if it no longer
answers, the remaining probes are "skipped" rather than each waiting out its own timeout.

The scratch directory is :mod:`mountbench.host.scratch`'s (shared with runs): its marker names
this process as the owner, so the next probe can remove what a killed probe left.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mountbench.host import scratch as scratch_mod
from mountbench.probe.capabilities import (
    Capability,
    HelperFailed,
    ProbeContext,
    Refused,
    helper,
    unlabelled,
)
from mountbench.probe.catalogue import CAPABILITIES
from mountbench.probe.conformance import GONE
from mountbench.probe.fsinfo import fs_info, statvfs_dict
from mountbench.probe.sandbox import ChildCrashed, Outcome, run_isolated
from mountbench.probefacts import (
    DIFFERS,
    HUNG,
    NEEDS_ROOT,
    NO,
    SKIPPED,
    Finding,
    ProbeResult,
    TargetProbe,
)

PING_TIMEOUT_S = 2.0


# -- the probe's scratch directory (child side: each runs in a child process) ------------------


def new_scratch_name() -> str:
    """A fresh scratch directory name (chosen by the parent, so it is known even if a child hangs)."""
    return scratch_mod.PROBE_PREFIX + secrets.token_hex(6)


def new_marker() -> scratch_mod.Marker:
    """A probe's marker: a random token, and this (the parent) process as the owner."""
    return scratch_mod.Marker("probe", secrets.token_hex(16), scratch_mod.Owner.current(), time.time())


def sweep_leftovers(target: str) -> list[str]:
    """Remove the scratch directories of killed probes and runs in ``target`` (see scratch.sweep_dead)."""
    return scratch_mod.sweep_dead(os.path.realpath(target))


def create_scratch(target: str, name: str, marker: scratch_mod.Marker) -> dict[str, Any]:
    """Create the scratch directory and its marker; return the target's real path, the
    scratch path and the target's statvfs figures. The target itself is never created."""
    real = os.path.realpath(target)
    if not stat.S_ISDIR(os.stat(real).st_mode):  # os.stat raises ENOENT if missing
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", real)
    _refuse_live_runs(real, name)
    scratch = scratch_mod.create(real, name, marker)
    try:
        _refuse_live_runs(real, name)  # a run that started at the same moment: both refuse, neither measures
    except OSError:
        scratch_mod.remove(scratch, lambda m: m == marker)
        raise
    return {"realpath": real, "scratch": str(scratch), "statvfs": statvfs_dict(os.statvfs(real))}


def _refuse_live_runs(real: str, own: str) -> None:
    """A probe's I/O would spoil a live run's numbers (and the run's the probe's timings)."""
    runs = [user for user in scratch_mod.live_users(real, exclude=own) if user.marker.kind == "run"]
    if runs:
        raise OSError(errno.EBUSY, f"in use by {runs[0].describe()}; probe it when that run has finished", real)


def marker_id(scratch: str) -> str | None:
    marker = scratch_mod.read_marker(scratch)
    return marker.id if marker is not None else None


def remove_probe_scratch(scratch: str, token: str | None) -> str:
    """Remove a probe's scratch directory if its marker holds ``token`` (None: any probe's)."""
    if not os.path.basename(scratch.rstrip("/")).startswith(scratch_mod.PROBE_PREFIX):
        raise ValueError(f"refusing to remove {scratch}: not a probe scratch directory")
    return scratch_mod.remove(scratch, lambda m: m.kind == "probe" and (token is None or m.id == token))


def responsive(scratch: str) -> bool:
    """Does the filesystem still answer? Creating and removing a directory must reach the
    server (a stat could be answered from an attribute cache)."""
    ping = os.path.join(scratch, f"ping-{secrets.token_hex(4)}")
    os.mkdir(ping)
    os.rmdir(ping)
    return True


def _run_capability(cap: Capability, work: str, timeout: float) -> dict[str, Any]:
    """Child side: make the probe's work directory, run the probe, return its Finding.

    A call the probe labels with ``step`` that fails makes "no"; a labelled helper step
    that fails makes "differs" naming it; an OSError from an unlabelled call is reported
    as such ("differs"): which call failed is then unknown, so it is never "no".
    """
    try:
        with helper("create the probe's work directory"):
            os.mkdir(work, 0o755)
        finding = cap.fn(ProbeContext(Path(work), timeout))
    except (Refused, HelperFailed) as failure:
        finding = failure.finding()
    except OSError as err:
        finding = unlabelled(err)
    return dataclasses.asdict(finding)


def _finding_from(outcome: Outcome, cap: Capability, timeout: float) -> Finding:
    if outcome.status == "ok":
        return Finding(**outcome.value)
    if outcome.status == "oserror":  # raised outside the probe function (never expected)
        return Finding(DIFFERS, detail=f"unlabelled call failed: {outcome.message}", errno=outcome.errno)
    if outcome.status == "signal":
        return Finding(NO, detail=outcome.message)
    if outcome.status == "hung":
        return Finding(HUNG, detail=f"no answer within {timeout:g} s; the probe process was killed")
    raise ChildCrashed(f"probe {cap.id!r} crashed (a bug in mountbench):\n{outcome.message}")


def probe_target(
    path: Path,
    *,
    timeout: float = 5.0,
    capabilities: Sequence[Capability] | None = None,
) -> TargetProbe:
    """Try every capability for real in a scratch directory inside ``path``.

    ``timeout`` bounds each probe (and the scratch creation and removal). Only the
    scratch directory ``<path>/.mountbench-probe-<random>/`` is written; it is
    removed at the end unless the filesystem stopped answering (``cleanup`` says so).
    Scratch directories left in ``path`` by probes that were killed are removed first
    (``swept`` says which). ``capabilities`` replaces the built-in list (to select some,
    or inject test probes).
    """
    given = tuple(CAPABILITIES if capabilities is None else capabilities)
    caps = tuple(c for c in given if not c.last) + tuple(c for c in given if c.last)  # the risky ones last
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    target = os.path.abspath(path)
    name, marker = new_scratch_name(), new_marker()
    swept = sweep_killed_probes(target, timeout)

    created = run_isolated(create_scratch, target, name, marker, timeout=timeout)
    if created.status != "ok":
        if created.status == "crash":
            raise ChildCrashed(f"creating the scratch directory crashed:\n{created.message}")
        why = _not_created(created)
        scratch_path = os.path.join(target, name)
        cleanup = "not created"
        if created.status == "hung":
            cleanup = f"unknown: {scratch_path} may exist (creating it hung)"
        return TargetProbe(
            path=str(path),
            fs=fs_info(target),
            results=tuple(ProbeResult(c.id, c.title, SKIPPED, detail=f"not attempted: {why}") for c in caps),
            scratch=scratch_path,
            cleanup=cleanup,
            error=why,
            started=started,
            duration_s=round(time.monotonic() - t0, 3),
            swept=swept,
        )

    info = created.value
    scratch_path: str = info["scratch"]
    results: list[ProbeResult] = []
    crash: ChildCrashed | None = None
    unresponsive: str | None = None
    gone: str | None = None
    try:
        for cap in caps:
            if unresponsive is not None:
                results.append(ProbeResult(cap.id, cap.title, SKIPPED, detail=unresponsive))
                continue
            if cap.needs_root and os.geteuid() != 0:
                results.append(ProbeResult(cap.id, cap.title, NEEDS_ROOT, detail="run as root to try it"))
                continue
            work = os.path.join(scratch_path, cap.id)
            outcome = run_isolated(_run_capability, cap, work, timeout, timeout=timeout)
            finding = _finding_from(outcome, cap, timeout)
            results.append(ProbeResult.from_finding(cap.id, cap.title, finding, round(outcome.elapsed_s * 1e3, 3)))
            if finding.verdict == HUNG or cap.last:
                ping = run_isolated(responsive, scratch_path, timeout=min(timeout, PING_TIMEOUT_S))
                if ping.status == "hung":
                    unresponsive = f"not attempted: the target stopped answering after {cap.id!r} hung"
                elif ping.status == "oserror" and ping.errno in GONE:
                    gone = f"the mount is gone after {cap.title!r}: {_strerror(ping.errno)} ({ping.errno})"
                    unresponsive = f"not attempted: {gone}"
    except ChildCrashed as exc:
        crash = exc
    finally:
        cleanup = _remove(scratch_path, marker.id, timeout, unresponsive is not None, gone)
    if crash is not None:
        raise crash
    return TargetProbe(
        path=str(path),
        fs=fs_info(info["realpath"], info["statvfs"]),
        results=tuple(results),
        scratch=scratch_path,
        cleanup=cleanup,
        started=started,
        duration_s=round(time.monotonic() - t0, 3),
        swept=swept,
        gone=gone,
    )


def sweep_killed_probes(target: str, timeout: float) -> tuple[str, ...]:
    """Remove what killed probes left in ``target``; one line per directory (or the failure)."""
    return describe_sweep(run_isolated(sweep_leftovers, target, timeout=timeout))


def describe_sweep(outcome: Outcome) -> tuple[str, ...]:
    """What a run of :func:`sweep_leftovers` did, one line per directory (or the failure)."""
    if outcome.status == "ok":
        return tuple(f"removed {line}" for line in outcome.value)
    if outcome.status == "oserror" and outcome.errno in ("ENOENT", "ENOTDIR"):
        return ()  # the target itself is unusable: creating the scratch directory says so
    return (f"looking for scratch directories left by killed probes failed: {_why(outcome)}",)


def _not_created(outcome: Outcome) -> str:
    """One line: why the scratch directory could not be created, and what to do."""
    if outcome.status == "hung":
        return f"creating the scratch directory hung: {outcome.message}"
    message = re.sub(r"^\[Errno \d+\] ", "", outcome.message)
    message = re.sub(r": '[^']*'$", "", message)  # the scratch path: a name the user never gave
    if outcome.errno == "EBUSY":
        return message
    said = f"{message} ({outcome.errno})" if outcome.errno else message
    return (
        f"creating the scratch directory: {said}; the probe tries each capability by writing in a scratch "
        "directory it creates there: give a directory where files can be created"
    )


def _strerror(name: str) -> str:
    code = getattr(errno, name, None)
    return os.strerror(code) if isinstance(code, int) else name


def _why(outcome: Outcome) -> str:
    return f"{outcome.errno or outcome.status} {outcome.message}".strip()


def _remove(scratch_path: str, token: str, timeout: float, unresponsive: bool, gone: str | None = None) -> str:
    if gone is not None:
        return (
            f"left {scratch_path}: the mount is gone; once it is mounted again, the next probe or run there removes it"
        )
    if unresponsive:
        # One short attempt: the target may have recovered meanwhile.
        timeout = min(timeout, PING_TIMEOUT_S)
    outcome = run_isolated(remove_probe_scratch, scratch_path, token, timeout=max(timeout, 1.0))
    if outcome.status == "ok":
        return "removed"
    if outcome.status == "hung":
        return f"left {scratch_path}: removing it hung"
    return f"left {scratch_path}: {_why(outcome)}"


def remove_scratch(scratch_path: str | Path, *, timeout: float = 10.0) -> str:
    """Remove a scratch directory left behind (for example after the target hung).

    The marker is checked: only a directory a probe created (holding a probe's marker,
    whatever its token) is removed; without a marker, only an empty one. Returns
    "removed"/"absent" or raises OSError.
    """
    path = str(scratch_path)
    outcome = run_isolated(remove_probe_scratch, path, None, timeout=timeout)
    if outcome.status == "ok":
        return str(outcome.value)
    if outcome.status == "oserror":
        raise OSError(f"{path}: {outcome.errno} {outcome.message}")
    if outcome.status == "hung":
        raise TimeoutError(f"{path}: the filesystem did not answer within {timeout:g} s")
    raise OSError(f"{path}: removal {outcome.status} {outcome.message}".strip())
