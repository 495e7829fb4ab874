"""lab --probe without a guest: the guest commands, the time bounds, the stored record,
and which mounts are probed across the VM boundary."""

from __future__ import annotations

import shlex
import sys

import pytest

from mountbench.labs.insideprobe import ProbeOptions, capability_bound, coherence_bound
from mountbench.labs.qemu import MOUNT_TYPES
from mountbench.labs.qemu.guestprobe import agent_command, agent_timeout
from mountbench.probefacts import (
    CoherenceResult,
    FsInfo,
    InotifyResult,
    LabProbe,
    MountProbe,
    TargetProbe,
)

pytestmark = pytest.mark.lab


def test_the_agent_is_the_hosts_own_mountbench_reading_the_control_channel() -> None:
    argv = shlex.split(agent_command().split("&&", 1)[1])
    assert argv[0] == "env" and "HOME=/tmp" in argv  # the guest's root is read-only
    start = argv.index(sys.executable)
    assert argv[start:] == [sys.executable, "-m", "mountbench.probe.agent", "--channel", "/dev/ttyS1"]


def test_time_bounds_grow_with_what_is_measured() -> None:
    quick, slow = ProbeOptions(1, 1.5), ProbeOptions(3, 5.0)
    assert capability_bound(slow) > capability_bound(quick) > 40 * 1.5
    assert coherence_bound(slow) > coherence_bound(quick)
    assert agent_timeout(2, 2, quick) > agent_timeout(2, 1, quick) > agent_timeout(1, 1, quick)
    assert agent_timeout(6, 5, slow) < 4 * 3600  # finite, and a lab run's scale


def test_shared_kinds_are_those_with_a_host_directory() -> None:
    assert {name for name, mount_type in MOUNT_TYPES.items() if mount_type.shared} == {"9p", "virtiofs", "sshfs", "nfs"}


def test_the_lab_probe_reads_as_a_probe_report() -> None:
    caps = TargetProbe("/mnt/9p", FsInfo(fstype="9p"), ())
    result = CoherenceResult("host", "9p in the guest", 1, 1.5, (), (), InotifyResult((), (), ()), ())
    back = CoherenceResult("9p in the guest", "host", 1, 1.5, (), (), InotifyResult((), (), ()), ())
    probe = LabProbe(
        (MountProbe("9p", "/mnt/9p", True, caps, result, back), MountProbe("disk", "/mnt/disk", False, caps)),
        repeat=1,
        timeout_s=1.5,
    )
    report = probe.as_report()
    assert report.targets == (caps, caps) and report.coherence == (result, back)
    assert probe.mount("disk").shared is False
    assert LabProbe.from_dict(probe.to_dict()) == probe
