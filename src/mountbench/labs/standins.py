"""A lab's dry run resolves its workloads as the run would, on empty stand-in directories named after
the run's targets (nothing is measured; the directories are gone when it returns)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from mountbench.engine import request as runrequest
from mountbench.engine.request import RunRequest
from mountbench.fio.binary import find_fio
from mountbench.model import RunOptions


def resolved_on_stand_ins(labels: Sequence[str], options: RunOptions, prefix: str) -> RunRequest:
    """The run request ``options`` gives for targets ``labels``, each an empty temporary directory."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        paths = []
        for label in labels:
            (Path(tmp) / label).mkdir()
            paths.append(f"{label}={Path(tmp) / label}")
        return runrequest.resolve(options, paths, find_fio())
