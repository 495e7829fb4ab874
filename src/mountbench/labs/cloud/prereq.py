"""What `mountbench cloudlab` needs on this machine, each missing piece with its fix (doctor
--cloud, the run and the tests' skip reasons read this)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable

from mountbench.labs.cloud.delay import TOXIPROXY_FIX, toxiproxy_binary
from mountbench.labs.cloud.mounts import CACHE_MODES
from mountbench.labs.cloud.remote import RCLONE_FIX
from mountbench.labs.frame import Problem, variant_problems

DOCTOR_FLAG = "--cloud"  # `mountbench doctor --cloud` lists every problem below


def lab_problems(optional: bool = False, modes: Iterable[str] | None = None) -> list[Problem]:
    """Each missing piece with its fix; [] when the cloud lab can run. Nothing it needs is
    optional; ``modes`` limits the cache modes' own pieces (they have none today)."""
    problems = []
    if shutil.which("rclone") is None:
        problems.append(Problem("rclone is not installed", RCLONE_FIX))
    if shutil.which("fusermount3") is None:
        problems.append(Problem("fusermount3 is missing (fuse3)", RCLONE_FIX))
    if not os.path.exists("/dev/fuse"):
        problems.append(
            Problem("/dev/fuse is missing", "load the fuse module (modprobe fuse) or run where FUSE is allowed")
        )
    if toxiproxy_binary() is None:
        problems.append(Problem("the toxiproxy server is missing (the delay on the wire)", TOXIPROXY_FIX))
    return problems + variant_problems(CACHE_MODES, modes)
