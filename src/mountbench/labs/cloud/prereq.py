"""What `mountbench cloudlab` needs on this machine, each missing piece with its fix (doctor
--cloud and the tests' skip reasons read this)."""

from __future__ import annotations

import os
import shutil

from mountbench.labs.cloud.delay import TOXIPROXY_FIX, toxiproxy_binary
from mountbench.labs.cloud.remote import RCLONE_FIX


def cloud_problems() -> list[tuple[str, str]]:
    """(problem, fix) for each missing piece; [] when the cloud lab can run."""
    problems = []
    if shutil.which("rclone") is None:
        problems.append(("rclone is not installed", RCLONE_FIX))
    if shutil.which("fusermount3") is None:
        problems.append(("fusermount3 is missing (fuse3)", RCLONE_FIX))
    if not os.path.exists("/dev/fuse"):
        problems.append(("/dev/fuse is missing", "load the fuse module (modprobe fuse) or run where FUSE is allowed"))
    if toxiproxy_binary() is None:
        problems.append(("the toxiproxy server is missing (the delay on the wire)", TOXIPROXY_FIX))
    return problems
