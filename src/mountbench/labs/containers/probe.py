"""The container lab's probe, before the workloads: what each mount supports, asked from
inside the container (inprobe.py), and how the host's view of the bind mount and the
container's agree: a file the host writes, how soon the container reads it and whether its
inotify watch sees it come; a file the container writes, whether the host reads it at once."""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from mountbench.host import process as procs
from mountbench.labs.containers.lab import ContainerLab
from mountbench.labs.containers.mounts import MountType
from mountbench.labs.containers.mounts.base import SHARED_BOTH_WAYS, host_dir

INPROBE = "mountbench.labs.containers.inprobe"


def probe_mounts(
    lab: ContainerLab, mount_types: Sequence[MountType], python: str, timeout: float = 5.0
) -> dict[str, Any]:
    """{"capabilities": {mount_type: {check: outcome}}, "coherence": {...}} (see the module)."""
    assert lab.lab is not None
    args = [f"{k.path}={k.probe_seed(lab.lab) or ''}" for k in mount_types]
    out = lab.exec_output([python, "-m", INPROBE, "caps", *args])
    by_path = json.loads(out)
    found: dict[str, Any] = {"capabilities": {k.name: by_path.get(k.path, {}) for k in mount_types}}
    shared = [k for k in mount_types if k.shares == SHARED_BOTH_WAYS]  # the host's directory itself (bind)
    if shared:
        found["coherence"] = bind_coherence(lab, shared[0], python, timeout)
    return found


def bind_coherence(lab: ContainerLab, bind: MountType, python: str, timeout: float) -> dict[str, Any]:
    """Host to container and back through the bind mount."""
    assert lab.lab is not None
    name, text = f"coherence-{secrets.token_hex(3)}", secrets.token_hex(8)
    host_file = host_dir(lab.lab) / name
    podman = lab.lab.podman
    argv = podman.argv(["exec", lab.lab.names.container, python, "-m", INPROBE, "watch", bind.path, name, text,
                        str(timeout)])  # fmt: skip
    proc = procs.spawn(argv, env=podman.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)  # fmt: skip
    result: dict[str, Any] = {"mount": bind.name, "timeout_s": timeout}
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().strip()
        if ready != "ready":
            return result | {"error": f"the container's watch did not start: {ready or proc.stderr.read()}"}
        written = time.time()
        host_file.write_text(text)
        answer = json.loads(proc.stdout.readline() or "{}")
        proc.wait(timeout=timeout + 30)
    finally:
        if proc.poll() is None:
            procs.stop_tree(proc, signal.SIGKILL)
    seen = answer.get("seen_at")
    result["host_to_container_s"] = None if seen is None else max(0.0, seen - written)
    result["host_to_container_inotify"] = answer.get("inotify")
    back, back_text = f"back-{secrets.token_hex(3)}", secrets.token_hex(8)
    lab.exec_output(["sh", "-c", f"printf %s {back_text} > {bind.path}/{back}"])
    try:
        result["container_to_host"] = (host_dir(lab.lab) / back).read_text() == back_text
    except OSError:
        result["container_to_host"] = False
    for leftover in (host_file, host_dir(lab.lab) / back):
        leftover.unlink(missing_ok=True)
    return result
