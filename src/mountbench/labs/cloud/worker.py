"""One target's probe in a process of its own (the cloud lab runs one per target at once):
what the mount supports (probe.target) and, for a cloud mount, the sync checks between
it and the remote's directory (probe.remotesync). Writes a CloudMountProbe as JSON.

    python -m mountbench.labs.cloud.worker LABEL PATH REMOTE|- TIMEOUT REPEAT SEED|- OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mountbench.errors import MountbenchError
from mountbench.probe.remotesync import measure_sync
from mountbench.probe.target import probe_target
from mountbench.probefacts import CloudMountProbe


def probe_one(
    label: str, path: str, remote: str | None, timeout: float, repeat: int, seed: str | None = None
) -> CloudMountProbe:
    errors = []
    capabilities = None
    try:
        capabilities = probe_target(Path(path), timeout=timeout)
    except MountbenchError as exc:
        errors.append(f"capabilities: {exc}")
    sync = None
    if remote is not None:
        try:
            sync = measure_sync(path, remote, repeat=repeat, timeout=timeout, seed=seed)
        except MountbenchError as exc:
            errors.append(f"sync with the remote: {exc}")
    return CloudMountProbe(label, path, remote, capabilities, sync, tuple(errors))


def main(argv: list[str]) -> int:
    label, path, remote, timeout, repeat, seed, out = argv
    result = probe_one(
        label, path, None if remote == "-" else remote, float(timeout), int(repeat), None if seed == "-" else seed
    )
    Path(out).write_text(json.dumps(result.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
