"""`mountbench calibrate DIR`: how much this filesystem's results move between runs, measured.

One run cannot measure the variance between runs (analysis/runlevel.py); A/A runs can. Two directories
of DIR's filesystem are made inside a marked directory of this calibration's own
(DIR/.mountbench-<id>/a and /b), the same workloads run on both in RUNS separate runs one after another
(each a real run: its own scratch directories, layouts, rounds and seed, stored as any run is), and
analysis/runlevel.estimate reads how far the runs' results wander beyond what their rounds explain. The
result is stored per filesystem (its type, source and mount point): every later run on it records it
with its targets and uses it instead of the filesystem type's default. The marked directory is removed
at the end; the runs stay in the store (mountbench list shows them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mountbench.analysis import runlevel
from mountbench.engine import request as runrequest
from mountbench.engine.session import Events, Session, run_to_end
from mountbench.fio.binary import FioInfo
from mountbench.host import targets as targets_mod
from mountbench.model import RunData, RunOptions, Target
from mountbench.store import Store


@dataclass(frozen=True)
class Calibrated:
    key: str  # the filesystem it belongs to (runlevel.calibration_key)
    estimate: runlevel.RunLevelEstimate
    runs: tuple[str, ...]
    fstype: str


def calibrate(
    directory: Path,
    runs: int,
    options: RunOptions,
    store: Store,
    fio: FioInfo,
    *,
    calibration_id: str,
    events: Callable[[int], Events],
    host: dict,
    command: str,
    on_run: Callable[[int, RunData], None] = lambda index, run: None,
) -> Calibrated:
    """RUNS A/A runs of ``options``' workloads on two directories made under ``directory``; the estimate
    stored. ``events(index)``: the progress of run ``index``; ``on_run``: called after each run."""
    holder = targets_mod.create_scratch(Target("calibrate", str(directory)), calibration_id)
    done: list[RunData] = []
    try:
        sides = []
        for name in ("a", "b"):
            side = holder / name
            os.mkdir(side, 0o700)
            sides.append(f"{name}={side}")
        for index in range(runs):
            request = runrequest.resolve(options, sides, fio)
            session = Session(request.config, request.targets, request.workloads, request.runners, store,
                              events(index), watch=request.watch)  # fmt: skip
            run_to_end(session, command=command, host=host)
            run = store.load_run(session.run_id)
            done.append(run)
            on_run(index, run)
    finally:
        targets_mod.remove_scratch(holder, calibration_id)
    info = next(r.info for r in done[0].targets if r.info is not None) if done else None
    if info is None:
        raise RuntimeError("the calibration runs recorded no target facts")
    basis = f"{runs} A/A runs of {len(done[0].workloads)} workloads on {directory} ({info.fstype})"
    found = runlevel.estimate(done, basis, runlevel.default_for(info.fstype))
    key = runlevel.calibration_key(info)
    store.save_calibration(key, str(directory), [run.id for run in done], found.level)
    return Calibrated(key, found, tuple(run.id for run in done), info.fstype)
