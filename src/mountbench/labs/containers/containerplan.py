"""`mountbench containers --dry-run`: the lab it would make, the checks it would pass or fail, the
exact commands (Podman's with the lab's own configuration; each round's mountbench on each side),
and the plan, without starting or writing anything (the lab's directory, its image and container,
the database: none of it is made)."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from collections.abc import Sequence

from mountbench.errors import MountbenchError
from mountbench.labs.containers.containerlab import RESULTS, run_options, with_lifeline
from mountbench.labs.containers.image import tool_paths
from mountbench.labs.containers.mounts import MountType
from mountbench.labs.containers.prereq import lab_problems
from mountbench.labs.containers.rounds import HOST, segment_argv
from mountbench.labs.containers.workdir import LabDir, work_root
from mountbench.labs.frame import Problem
from mountbench.labs.standins import resolved_on_stand_ins
from mountbench.model import RunOptions

STAND_IN = "<id>"  # the lab's id, chosen when it starts


def _stand_in() -> LabDir:
    return LabDir(work_root() / STAND_IN)


def check_lines(mount_types: Sequence[MountType]) -> tuple[list[str], list[Problem]]:
    """What the lab checks before it starts, one line each (✓ or ✗ with the fix); the problems."""
    problems = lab_problems(mount_types={m.name for m in mount_types})
    lines = [f"  ✗ {p} (fix: {p.fix})" for p in problems]
    try:
        tools = tool_paths()
    except MountbenchError as exc:
        lines.append(f"  ✗ image: {exc}")
    else:
        lines.append(f"  ✓ image: built from this host's {', '.join(tools)} and the libraries they link")
    if not problems:
        lines.insert(0, "  ✓ root, podman, runc, fio, ldd, overlayfs: every piece the lab needs is here")
    return lines, problems


def lab_lines(mount_types: Sequence[MountType]) -> list[str]:
    """The lab's directory and every Podman command it would run, in order (the id chosen at start)."""
    lab = _stand_in()
    podman, names = lab.podman, lab.names
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in podman.env.items() if k.startswith("CONTAINERS_"))
    image = podman.argv(["import", "--quiet", "--change", f"LABEL {names.label}",
                         str(lab.path / "image" / "rootfs.tar"), names.image])  # fmt: skip
    lines = [
        f"Work directory: {lab.path} (mode 0700: Podman's configuration, storage and run state for this run "
        "only, the host directory behind the bind mount, the results)",
        f"Every podman command below runs with {env}",
        "Commands:",
        f"  {shlex.join(image)}",
    ]
    for mount_type in mount_types:
        lines += [f"  {text}" for text in mount_type.prepare_text(lab, podman)]
    run = podman.argv(with_lifeline(run_options(lab, mount_types), names))
    lines.append(f"  {shlex.join(run)}  (3< a pipe only mountbench writes: the container ends when mountbench does)")
    return lines


def round_lines(mount_types: Sequence[MountType], options: RunOptions) -> list[str]:
    """The plan, and each round's command on each side (the options whole, as JSON)."""
    lab = _stand_in()
    labels = [HOST, *(m.name for m in mount_types)]
    request = resolved_on_stand_ins(labels, options, "mountbench-containerplan-")
    workloads = [w.name for w in request.workloads]
    rounds = options.repeat
    per_side = len(workloads) * rounds
    lines = [
        f"Plan: {len(labels)} targets ({', '.join(labels)}; {HOST} is the baseline) × {len(workloads)} workloads "
        f"({', '.join(workloads)}) × {rounds} rounds = {len(labels) * per_side} samples",
        "Rounds: each one `mountbench run --repeat 1` on the host, then in the container (the order flips every "
        "round); in the container the mounts are interleaved as `run` interleaves targets",
    ]
    segment = dataclasses.replace(options, repeat=1, max_repeat=1)  # one side's round, as run.py hands it over
    results = lab.path / "results"
    host = segment_argv(sys.executable, [f"{HOST}={lab.path / 'host'}"], segment, str(results / "host.sqlite"),
                        str(results / "round-N-host.json"))  # fmt: skip
    inside = segment_argv(sys.executable, [f"{m.name}={m.path}" for m in mount_types],
                          dataclasses.replace(segment, baseline=mount_types[0].name), f"{RESULTS}/container.sqlite",
                          f"{RESULTS}/round-N-container.json")  # fmt: skip
    lines.append(f"  host: {shlex.join(host)}")
    lines.append(f"  container: {shlex.join(lab.podman.argv(['exec', lab.names.container, *inside]))}")
    return lines
