"""Probe every target of a cloud-lab run at once, one worker process each (labs/cloud/worker.py):
the sync checks spend most of their time waiting (write-back, directory caches), so the
targets wait together. Workers are this process's children in their own sessions, bounded
in time and killed with it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from mountbench.host import process as procs
from mountbench.labs.frame import capability_bound
from mountbench.probefacts import CloudMountProbe

CHECK_WAITS = 6  # waits of one sync repetition bounded by the timeout


def worker_bound(timeout: float, repeat: int) -> float:
    return capability_bound(timeout) + repeat * CHECK_WAITS * (timeout + 5.0) + 60.0


def probe_all(
    targets: Sequence[tuple[str, Path, Path | None]],
    workdir: Path,
    *,
    timeout: float,
    repeat: int,
    seeds: dict[str, Path] | None = None,
) -> tuple[list[CloudMountProbe], list[str]]:
    """(label, path, remote path or None) each; the probes in order, and whole-worker failures.
    ``seeds``: per label, a file through the mount that only the remote has (first reads)."""
    running = []
    results, errors = [], []
    try:  # a Ctrl-C while workers start stops those already started
        for index, (label, path, remote) in enumerate(targets):
            out = workdir / f"probe-{index}.json"
            argv = [sys.executable, "-m", "mountbench.labs.cloud.worker", label, str(path),
                    str(remote) if remote is not None else "-", str(timeout), str(repeat),
                    str((seeds or {}).get(label, "-")), str(out)]  # fmt: skip
            running.append((label, path, remote, out, procs.start(argv, log=workdir / f"probe-{index}.log")))
        deadline = time.monotonic() + worker_bound(timeout, repeat)
        for label, path, remote, out, proc in running:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:  # the worker is stopped below
                errors.append(f"{label}: the probe did not finish in time")
            try:
                results.append(CloudMountProbe.from_dict(json.loads(out.read_text())))
            except (OSError, ValueError, KeyError, TypeError):
                tail = procs.log_tail(out.with_suffix(".log"), 3)
                errors.append(f"{label}: the probe left no results ({tail or f'exit {proc.poll()}'})")
                results.append(CloudMountProbe(label, str(path), str(remote) if remote else None,
                                               errors=("probe failed",)))  # fmt: skip
    finally:
        for *_, proc in running:
            procs.stop_tree(proc, grace_s=2.0)
    return results, errors
