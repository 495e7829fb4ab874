"""probe_target: run every capability probe against one directory, safely.

The calling process never touches the target: creating the scratch directory,
each probe, and the removal each run in a child process bounded by ``timeout``.
After a probe hangs, the target is pinged; if it no longer answers, the remaining
probes are "skipped" rather than each waiting out its own timeout.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mountbench.probe import scratch
from mountbench.probe.capabilities import CAPABILITIES, Capability, ProbeContext, Refused, step
from mountbench.probe.fsinfo import fs_info
from mountbench.probe.model import (
    HUNG,
    NEEDS_ROOT,
    NO,
    SKIPPED,
    Finding,
    ProbeResult,
    TargetProbe,
)
from mountbench.probe.sandbox import ChildCrashed, Outcome, run_isolated

PING_TIMEOUT_S = 2.0


def _run_capability(cap: Capability, work: str, timeout: float) -> dict[str, Any]:
    """Child side: make the probe's work directory, run the probe, return its Finding."""
    try:
        with step("create the probe's work directory"):
            os.mkdir(work, 0o755)
        finding = cap.fn(ProbeContext(Path(work), timeout))
    except Refused as refused:
        finding = refused.finding()
    return dataclasses.asdict(finding)


def _finding_from(outcome: Outcome, cap: Capability, timeout: float) -> Finding:
    if outcome.status == "ok":
        return Finding(**outcome.value)
    if outcome.status == "oserror":
        return Finding(NO, detail=outcome.message, errno=outcome.errno)
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
    ``capabilities`` replaces the built-in list (to select some, or inject test probes).
    """
    caps = tuple(CAPABILITIES if capabilities is None else capabilities)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    target = os.path.abspath(path)
    name, token = scratch.new_name(), scratch.new_token()

    created = run_isolated(scratch.create, target, name, token, timeout=timeout)
    if created.status != "ok":
        if created.status == "crash":
            raise ChildCrashed(f"creating the scratch directory crashed:\n{created.message}")
        why = (f"creating the scratch directory: {created.errno or created.status} {created.message}").strip()
        verdict = SKIPPED
        scratch_path = os.path.join(target, name)
        cleanup = "not created"
        if created.status == "hung":
            cleanup = f"unknown: {scratch_path} may exist (creating it hung)"
        return TargetProbe(
            path=str(path),
            fs=fs_info(target),
            results=tuple(ProbeResult(c.id, c.title, verdict, detail=f"not attempted: {why}") for c in caps),
            scratch=scratch_path,
            cleanup=cleanup,
            error=why,
            started=started,
            duration_s=round(time.monotonic() - t0, 3),
        )

    info = created.value
    scratch_path: str = info["scratch"]
    results: list[ProbeResult] = []
    crash: ChildCrashed | None = None
    unresponsive: str | None = None
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
            if finding.verdict == HUNG:
                ping = run_isolated(scratch.responsive, scratch_path, timeout=min(timeout, PING_TIMEOUT_S))
                if ping.status == "hung":
                    unresponsive = f"not attempted: the target stopped answering after {cap.id!r} hung"
    except ChildCrashed as exc:
        crash = exc
    finally:
        cleanup = _remove(scratch_path, token, timeout, unresponsive is not None)
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
    )


def _remove(scratch_path: str, token: str, timeout: float, unresponsive: bool) -> str:
    if unresponsive:
        # One short attempt: the target may have recovered meanwhile.
        timeout = min(timeout, PING_TIMEOUT_S)
    outcome = run_isolated(scratch.remove, scratch_path, token, timeout=max(timeout, 1.0))
    if outcome.status == "ok":
        return "removed"
    if outcome.status == "hung":
        return f"left {scratch_path}: removing it hung"
    return f"left {scratch_path}: {outcome.errno or outcome.status} {outcome.message}".strip()


def remove_scratch(scratch_path: str | Path, *, timeout: float = 10.0) -> str:
    """Remove a scratch directory left behind (for example after the target hung).

    The marker is checked: only a directory the probe created (holding its marker,
    whatever its token) is removed. Returns "removed"/"absent" or raises OSError.
    """
    path = str(scratch_path)
    token_outcome = run_isolated(scratch.marker_token, path, timeout=timeout)
    if token_outcome.status != "ok":
        raise TimeoutError(f"{path}: the filesystem did not answer within {timeout:g} s")
    token = token_outcome.value
    outcome = run_isolated(scratch.remove, path, token or "", timeout=timeout)
    if outcome.status == "ok":
        return str(outcome.value)
    if outcome.status == "oserror":
        raise OSError(f"{path}: {outcome.errno} {outcome.message}")
    raise TimeoutError(f"{path}: removal {outcome.status} {outcome.message}".strip())
