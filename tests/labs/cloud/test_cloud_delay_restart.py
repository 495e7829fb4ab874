"""The delay comes back the moment its memory guard stops it (issue 36): before, it was started
again only when the sample in flight ended, and a sample whose reads hung on the stopped proxy
never ended in time (fio timed out after 214 s); every mount then answered EIO until the run
ended with an internal error. It runs with no Go memory limit and is started afresh before every
sample (issue 49), and a warm read evicts only rclone's cache files. Real rclone, FUSE and toxiproxy."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from mountbench.labs.cloud.cloudlab import CloudLab
from mountbench.labs.cloud.delay import MEMORY_LIMIT
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


def test_the_delay_runs_with_no_memory_limit_and_is_started_afresh_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 49: under GOMEMLIMIT=96MiB, toxiproxy's CPU per 5-second sample went from 0.5 s to 5 s once
    its memory (which grows ~17 MiB a sample: it keeps some of every connection a client left) passed
    ~100 MiB, and every cloud mount slowed in those samples. Now no soft limit reaches it (not even one in
    mountbench's own environment), and the lab starts it afresh before every sample, counted."""
    monkeypatch.setenv("GOMEMLIMIT", "96MiB")
    with CloudLab(cloud_specs(["off"], ["0"], 0), on_note=lambda _: None, root=tmp_path / "lab") as lab:
        (mount,) = lab.mounts
        proxy = lab._proxy
        assert proxy is not None and proxy.proc is not None
        environ = Path(f"/proc/{proxy.proc.pid}/environ").read_bytes().split(b"\0")
        assert not [v for v in environ if v.startswith(b"GOMEMLIMIT=")], "toxiproxy runs under a Go memory limit"
        assert "started afresh before every sample" in lab.tools["toxiproxy"]  # the stored facts say so
        data = os.urandom(1024**2)
        (mount.remote_path / "remote.bin").write_bytes(data)
        mount.rc.forget()
        first = proxy.proc
        lab.fresh_delay()
        lab.fresh_delay()
        assert lab.delay_starts == 2
        assert proxy.proc is not first and first.poll() is not None and proxy.proc.poll() is None
        recorded = [p["pid"] for p in json.loads((lab.workdir / "state.json").read_text())["processes"]]
        assert proxy.proc.pid in recorded
        environ = Path(f"/proc/{proxy.proc.pid}/environ").read_bytes().split(b"\0")
        assert not [v for v in environ if v.startswith(b"GOMEMLIMIT=")]
        done = subprocess.run(["cat", str(mount.path / "remote.bin")], capture_output=True, timeout=120)
        assert done.returncode == 0 and done.stdout == data, done.stderr
        assert lab.delay_trouble() is None  # the guard never tripped: no sample is void
        assert lab.delay_trips == 0


def _resident_pages(path: Path) -> int:
    """Pages of ``path`` in the page cache (util-linux fincore)."""
    done = subprocess.run(["fincore", "--noheadings", "--bytes", "--output", "PAGES", str(path)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout.split()[0])


def test_only_rclones_cache_files_of_the_working_files_leave_the_page_cache(tmp_path: Path) -> None:
    """Issue 49: the warm phase emptied the whole page cache between its untimed read and the timed one
    (full warm 3.4k and 5.5-7.6k IOPS against 7.3-13.9k by hand). Now only rclone's cache file of each
    working file is evicted: the page cache keeps everything else."""
    with CloudLab(cloud_specs(["full"], ["0"], 0), on_note=lambda _: None, root=tmp_path / "lab") as lab:
        (mount,) = lab.mounts
        scratch = mount.path / "scratch"
        (mount.remote_path / "scratch").mkdir()
        (mount.remote_path / "scratch" / "work.bin").write_bytes(os.urandom(4 * 1024**2))
        mount.rc.forget()
        assert (scratch / "work.bin").read_bytes()  # the read a warm phase comes after: into rclone's cache
        (cached,) = (mount.cache / "vfs").glob(f"*/{mount.label}/scratch/work.bin")
        other = tmp_path / "other.bin"
        other.write_bytes(os.urandom(1024**2))
        assert other.read_bytes()
        assert _resident_pages(cached) > 0 and _resident_pages(other) > 0
        assert lab.evict_cached(mount, scratch) is None
        assert _resident_pages(cached) == 0, "rclone's cache file is still in the page cache"
        assert _resident_pages(other) == 256, "the page cache lost something else"
