"""Bringing a lab run home, without a guest: the caveats each mount's cells carry."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.factories import make_run

from mountbench import model
from mountbench.lab import parse_mount_spec
from mountbench.lab.caveats import EMULATED_GUEST_CPU
from mountbench.lab.plan import LabMount
from mountbench.labrun import _bring_home, mount_facts

pytestmark = pytest.mark.lab


def _mounts(*texts: str) -> list[LabMount]:
    out = []
    for index, text in enumerate(texts):
        spec = parse_mount_spec(text)
        out.append(LabMount(spec, spec.slug, f"mb{index}", Path(f"/lab/mounts/{spec.slug}")))
    return out


@pytest.mark.parametrize("emulated", [True, False])
def test_bring_home_gives_each_mount_its_caveats(emulated: bool) -> None:
    mounts = _mounts("9p", "sshfs", "guest-tmpfs", "disk")
    mounts[3].guest_error = "mkfs.ext4 /dev/vda: failed"
    values = {(m.slug, "extract"): [1.0, 1.1] for m in mounts[:3]}
    run = make_run(values, "wall", baseline="guest-tmpfs")
    extra = {(m.slug, "extract", r): {"host.cpu_s": 0.5} for m in mounts[:3] for r in (0, 1)}
    home = _bring_home(run, {"emulated": emulated}, extra, mount_facts(mounts, emulated), "guest-tmpfs")

    codes = {}
    for sample in home.samples:
        codes.setdefault(sample.target, set()).update(c.code for c in sample.caveats)
        if sample.ok:
            assert sample.metrics["host.cpu_s"] == 0.5
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
