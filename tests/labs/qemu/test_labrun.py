"""Bringing a lab run home, without a guest: the guest's CPU time per sample (from the
events the guest prints), the caveats each mount's cells carry, and the run handed back to a
guest to resume in its own terms."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from support.factories import make_run

from mountbench import model
from mountbench.labfacts import QemuLabFacts
from mountbench.labs.qemu import parse_mount_spec
from mountbench.labs.qemu.caveats import EMULATED_GUEST_CPU
from mountbench.labs.qemu.guestrun import Homecoming, guest_cpu_s
from mountbench.labs.qemu.mounts.guestmount import GuestMount
from mountbench.model import PlanItem, Sample
from mountbench.records.events import EventLog, busy_cpu_seconds, machine_busy_cpu_s, parse_event

pytestmark = pytest.mark.lab

# /proc/stat of a 2-CPU guest: user nice system idle iowait irq softirq steal guest guest_nice
PROC_STAT = """cpu  1000 20 300 5000 400 5 6 7 50 0
cpu0 500 10 150 2500 200 3 3 4 25 0
cpu1 500 10 150 2500 200 2 3 3 25 0
intr 12345
"""


def test_busy_cpu_seconds_counts_all_cpus_but_idle_and_iowait() -> None:
    # user+nice+system+irq+softirq+steal; guest time is already inside user
    assert busy_cpu_seconds(PROC_STAT, 100) == pytest.approx((1000 + 20 + 300 + 5 + 6 + 7) / 100)
    assert busy_cpu_seconds("cpu  10 0 5 100\n", 100) == pytest.approx(0.15)  # old kernels: fewer columns
    assert busy_cpu_seconds("intr 1\n", 100) is None


def test_sample_events_carry_the_machines_busy_cpu() -> None:
    stream = io.StringIO()
    log = EventLog(stream)
    item = PlanItem(0, 0, "9p", "extract", 1.0)
    log.on_sample_start(item, 0, 1, 1.0)
    sum(i * i for i in range(300_000))  # some CPU work between the two
    log.on_sample_done(item, Sample("9p", "extract", 0, True, {"wall": 0.1}))
    start, done = (parse_event(line) for line in stream.getvalue().splitlines())
    assert start is not None and done is not None
    if machine_busy_cpu_s() is None:
        pytest.skip("no /proc/stat here")
    assert start["cpu_busy_s"] > 0 and done["cpu_busy_s"] >= start["cpu_busy_s"]
    assert guest_cpu_s(start, done) == pytest.approx(done["cpu_busy_s"] - start["cpu_busy_s"])


def test_guest_cpu_s_needs_both_ends() -> None:
    assert guest_cpu_s({"cpu_busy_s": 10.0}, {"cpu_busy_s": 12.5}) == 2.5
    assert guest_cpu_s({}, {"cpu_busy_s": 12.5}) is None  # an older guest mountbench
    assert guest_cpu_s({"cpu_busy_s": None}, {"cpu_busy_s": 12.5}) is None  # no /proc/stat
    assert guest_cpu_s({"cpu_busy_s": 12.5}, {"cpu_busy_s": 12.0}) == 0.0  # never negative


def _mounts(*texts: str) -> list[GuestMount]:
    out = []
    for index, text in enumerate(texts):
        spec = parse_mount_spec(text)
        out.append(GuestMount(spec, spec.slug, f"mb{index}", Path(f"/lab/mounts/{spec.slug}")))
    return out


@pytest.mark.parametrize("emulated", [True, False])
def test_bring_home_gives_each_mount_its_caveats_and_guest_cpu(emulated: bool) -> None:
    mounts = _mounts("9p", "sshfs", "guest-tmpfs", "disk")
    mounts[3].guest_error = "mkfs.ext4 /dev/vda: failed"
    values = {(m.slug, "extract"): [1.0, 1.1] for m in mounts[:3]}
    run = make_run(values, "wall", baseline="guest-tmpfs")
    homecoming = Homecoming(None, mounts, QemuLabFacts(emulated=emulated), mounts[2].label, "mountbench lab")  # type: ignore[arg-type]
    homecoming.extra = {
        (m.slug, "extract", r): {"host.cpu_s": 0.5, "guest.cpu_s": 1.5} for m in mounts[:3] for r in (0, 1)
    }
    home = homecoming.home(run)

    codes = {}
    for sample in home.samples:
        codes.setdefault(sample.target, set()).update(c.code for c in sample.caveats)
        if sample.ok:
            assert sample.metrics["guest.cpu_s"] == 1.5 and sample.metrics["host.cpu_s"] == 0.5
    nine, ssh, tmpfs, disk = (m.label for m in mounts)
    if emulated:
        assert codes[nine] == {model.EMULATED, model.HOST_CACHE}
        assert codes[ssh] == {EMULATED_GUEST_CPU, model.HOST_CACHE}  # not the general one: its order means nothing
        assert codes[tmpfs] == {model.EMULATED}
        assert codes[disk] == {model.EMULATED}  # a failed mount's cells say how they would have been measured
    else:
        assert codes == {nine: {model.HOST_CACHE}, ssh: {model.HOST_CACHE}, tmpfs: set(), disk: set()}
    failed = [s for s in home.samples if s.target == disk]
    assert failed and all(not s.ok and "mount failed in the guest: mkfs.ext4" in (s.error or "") for s in failed)

    # handed back to a guest made again (a resume): the guest's own labels, none of the failed mount's cells
    back = homecoming.handed_back(home)
    assert {r.target.label for r in back.targets} == {m.slug for m in mounts[:3]}
    assert {s.target for s in back.samples} == {m.slug for m in mounts[:3]}
    assert back.config.baseline == "guest-tmpfs" and back.config.lab is None and "lab_host" not in back.host
