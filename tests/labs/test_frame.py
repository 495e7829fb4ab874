"""The lab frame (labs/frame.py): one Problem type refused one way, the members' registries,
and each lab's runs stored with its own facts and resumed by its own command."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support.factories import make_run

from mountbench.errors import ToolMissing, UsageError
from mountbench.labfacts import LAB_FACTS, CloudLabFacts, ContainerLabFacts, QemuLabFacts
from mountbench.labs.cloud.mounts import CACHE_MODES
from mountbench.labs.containers.mounts import MOUNT_TYPES as CONTAINER_MOUNT_TYPES
from mountbench.labs.frame import LabContext, Problem, refuse, registry, variant_problems
from mountbench.labs.members import LABS, lab_of, refuse_plain_resume, resume_advice
from mountbench.labs.qemu.mounts import MOUNT_TYPES
from mountbench.model import RunData


def test_refuse_names_the_first_blocking_problem_its_fix_and_how_many_more() -> None:
    refuse([], "--lab")
    refuse([Problem("no Rust virtiofsd", "cargo install virtiofsd", optional=True)], "--lab")  # works without
    problems = [Problem("a", "fix a", optional=True), Problem("b", "fix b"), Problem("c", "fix c")]
    with pytest.raises(ToolMissing) as raised:
        refuse(problems, "--cloud")
    assert str(raised.value) == "b; fix b (and 1 more: see 'mountbench doctor --cloud')"
    with pytest.raises(ToolMissing, match=r"^c; fix c$"):
        refuse([Problem("c", "fix c")], "--lab")


def test_an_optional_problem_says_so() -> None:
    assert str(Problem("no Rust virtiofsd", "cargo install virtiofsd", optional=True)) == "optional: no Rust virtiofsd"
    assert str(Problem("fio is missing", "apt-get install fio")) == "fio is missing"


class _Needs:
    def __init__(self, name: str, *missing: str) -> None:
        self.name = name  # type: ignore[misc]
        self.missing = missing

    def prerequisites(self) -> list[Problem]:
        return [Problem(what, f"install {what}") for what in self.missing]


def test_a_registry_keeps_its_order_and_its_problems_are_asked_of_the_variants_wanted() -> None:
    variants = registry(_Needs("b", "tool-x"), _Needs("a", "tool-x", "tool-y"), _Needs("c"))
    assert list(variants) == ["b", "a", "c"]
    assert [p.what for p in variant_problems(variants)] == ["tool-x", "tool-y"]  # each problem once
    assert [p.what for p in variant_problems(variants, ["a"])] == ["tool-x", "tool-y"]
    assert variant_problems(variants, ["c"]) == []


def test_every_lab_is_a_member_with_its_own_facts_record_and_registry() -> None:
    assert set(LABS) == set(LAB_FACTS) == {"qemu", "cloud", "containers"}
    assert LABS["qemu"].variants is MOUNT_TYPES and LABS["cloud"].variants is CACHE_MODES
    assert LABS["containers"].variants is CONTAINER_MOUNT_TYPES
    assert len({lab.command for lab in LABS.values()}) == len({lab.doctor_flag for lab in LABS.values()}) == 3
    for lab in LABS.values():
        assert all(isinstance(p, Problem) for p in lab.prerequisites(optional=True))


def _run(lab: QemuLabFacts | CloudLabFacts | ContainerLabFacts | None) -> RunData:
    run = make_run({("a", "w"): [1.0]}, run_id="r9")
    return dataclasses.replace(run, status="interrupted", config=dataclasses.replace(run.config, lab=lab))


def test_a_lab_run_is_resumed_by_its_own_command() -> None:
    plain, qemu, cloud = _run(None), _run(QemuLabFacts(accel="tcg")), _run(CloudLabFacts())
    containers = _run(ContainerLabFacts())
    assert lab_of(plain) is None and lab_of(qemu) is LABS["qemu"] and lab_of(cloud) is LABS["cloud"]
    assert lab_of(containers) is LABS["containers"]
    refuse_plain_resume(plain)
    for run, command in ((cloud, "cloudlab"), (qemu, "lab"), (containers, "containers")):
        with pytest.raises(UsageError, match=rf"resume it with 'mountbench {command} --resume r9'$"):
            refuse_plain_resume(run)
    assert resume_advice(plain) == "resume it with 'mountbench run --resume r9'"


def test_a_run_of_another_lab_is_refused_by_each_labs_resume_in_one_line() -> None:
    """Every lab resumes (issue 52): each one's resume refuses, before it makes anything, a run it did not make."""
    for lab in LABS.values():
        other = next(facts for name, facts in LAB_FACTS.items() if name != lab.name)()
        with pytest.raises(UsageError, match=r"run r9 is not a .* run; resume it with 'mountbench run --resume r9'"):
            lab.resume(_run(other), None, None, print)  # type: ignore[arg-type]


def test_doctor_checks_each_lab_asked_for_through_its_member(tmp_path: Path) -> None:
    from support.runhelpers import mountbench

    proc = mountbench("doctor", str(tmp_path), "--lab", "--cloud", "--containers", timeout=120)
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("│ lab ", "│ cloudlab ", "│ containers "))]
    for lab in LABS.values():
        mine = [row for row in rows if row.startswith(f"│ {lab.command} ")]
        assert mine, proc.stdout
        missing = lab.prerequisites(optional=True)
        if not missing:
            assert "✓" in mine[0] and lab.needs.split(",")[0] in mine[0], mine
        elif any(not p.optional for p in missing):
            assert proc.returncode != 0 and any("✗" in row for row in mine), proc.stdout


class _Recorded(LabContext):
    """A lab whose parts record that they ran: the frame's order, on its own."""

    def __init__(self, refusal: BaseException | None = None, failure: BaseException | None = None) -> None:
        self.refusal, self.failure, self.done = refusal, failure, []

    def _before_start(self) -> None:
        self.done.append("checked")
        if self.refusal is not None:
            raise self.refusal

    def _start(self) -> None:
        self.done.append("started")
        if self.failure is not None:
            raise self.failure

    def close(self) -> None:
        self.done.append("closed")


def test_every_lab_is_started_then_closed_and_a_failed_start_is_closed_first() -> None:
    """LabContext: what the three labs' running parts (Guest, CloudLab, ContainerLab) share."""
    from mountbench.labs.cloud.cloudlab import CloudLab
    from mountbench.labs.containers.containerlab import ContainerLab
    from mountbench.labs.qemu.guest import Guest

    assert all(issubclass(running, LabContext) for running in (Guest, CloudLab, ContainerLab))
    lab = _Recorded()
    with lab as entered:
        assert entered is lab and lab.done == ["checked", "started"]
    assert lab.done == ["checked", "started", "closed"]
    for failure in (OSError("qemu died"), KeyboardInterrupt()):  # Ctrl-C during the start too
        failed = _Recorded(failure=failure)
        with pytest.raises(type(failure)), failed:
            pass
        assert failed.done == ["checked", "started", "closed"]
    refused = _Recorded(refusal=ToolMissing("rclone is missing; apt-get install rclone"))
    with pytest.raises(ToolMissing), refused:
        pass
    assert refused.done == ["checked"]  # nothing was begun, nothing to close


def test_a_labs_wait_for_the_capability_probe_covers_every_capability() -> None:
    """The lab's driver waits for a mount's capability probe as long as every capability may take (each
    bounded by the timeout): a fixed count of 40 fell short once issue 49 took the probe to 42."""
    from mountbench.labs.frame import capability_bound
    from mountbench.probe.catalogue import CAPABILITIES

    assert capability_bound(5.0) >= len(CAPABILITIES) * (5.0 + 2.0)
