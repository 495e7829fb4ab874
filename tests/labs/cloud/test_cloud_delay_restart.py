"""The delay comes back the moment its memory guard stops it (issue 36): before, it was started
again only when the sample in flight ended, and a sample whose reads hung on the stopped proxy
never ended in time (fio timed out after 214 s); every mount then answered EIO until the run
ended with an internal error. Real rclone, FUSE and toxiproxy."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from mountbench.labs.cloud.delay import MEMORY_LIMIT
from mountbench.labs.cloud.lab import CloudLab
from mountbench.labs.cloud.matrix import cloud_specs

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("cloud_ready")]


def test_a_tripped_delay_is_back_before_the_sample_ends(tmp_path: Path) -> None:
    with CloudLab(cloud_specs(["off"], ["20"], 0), on_note=lambda _: None, root=tmp_path / "lab") as lab:
        (mount,) = lab.mounts
        data = os.urandom(1024**2)
        (mount.remote_path / "remote.bin").write_bytes(data)
        mount.rc.forget()
        proxy = lab._proxy
        assert proxy is not None and proxy.guard is not None and proxy.proc is not None
        first = proxy.proc
        proxy.guard.limit = 1  # trips at its next look
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (proxy.proc is first or proxy.proc is None or proxy.proc.poll()):
            time.sleep(0.05)
        proxy.guard.limit = MEMORY_LIMIT
        assert first.poll() is not None, "the guard did not stop toxiproxy"
        assert proxy.proc is not first and proxy.proc.poll() is None, "the delay did not come back by itself"
        # nobody asked (no sample ended): a read through the mount crosses the delay again
        done = subprocess.run(["cat", str(mount.path / "remote.bin")], capture_output=True, timeout=120)
        assert done.returncode == 0 and done.stdout == data, done.stderr
        recorded = [p["pid"] for p in json.loads((lab.workdir / "state.json").read_text())["processes"]]
        assert proxy.proc.pid in recorded  # a killed run's leftovers are found by the record
        why = lab.delay_trouble()  # the sample in flight is void, and says why
        assert why is not None and "over its 1.00 B bound" in why, why
        assert lab.delay_trouble() is None
        assert proxy.proc.poll() is None


def test_the_delay_is_started_afresh_between_samples_past_half_its_bound(tmp_path: Path) -> None:
    """Its memory grows with every abandoned range read; between samples (nothing in flight) it is
    started afresh past half its bound, so its guard need not void a sample. No sample is void."""
    with CloudLab(cloud_specs(["off"], ["0"], 0), on_note=lambda _: None, root=tmp_path / "lab") as lab:
        (mount,) = lab.mounts
        data = os.urandom(1024**2)
        (mount.remote_path / "remote.bin").write_bytes(data)
        mount.rc.forget()
        assert not lab.refresh_delay()  # a fresh delay is far below half its bound
        first = lab._proxy.proc if lab._proxy else None
        assert lab.refresh_delay(limit=1)
        assert lab._proxy is not None and lab._proxy.proc is not first and lab._proxy.proc.poll() is None
        done = subprocess.run(["cat", str(mount.path / "remote.bin")], capture_output=True, timeout=120)
        assert done.returncode == 0 and done.stdout == data, done.stderr
        assert lab.delay_trouble() is None  # the guard never tripped: no sample is void
