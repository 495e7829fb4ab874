"""`mountbench doctor`: check fio, privileges and each target; every problem with its fix."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

import click
from rich.text import Text

from mountbench.blocks.table import CellView, RichLayout, TableView
from mountbench.blocks.to_terminal import rich_table
from mountbench.cli.console import out
from mountbench.engine.eviction import can_drop_machine_caches
from mountbench.errors import ChecksFailed, MountbenchError, UsageError
from mountbench.fio.binary import find_fio, fio_engines
from mountbench.host import contain, container
from mountbench.host import targets as targets_mod
from mountbench.host.facts import is_root
from mountbench.labs.frame import Lab
from mountbench.model import Target
from mountbench.units import format_bytes

PLAIN = RichLayout(show_title=False)


@click.command()
@click.argument("target", nargs=-1)
@click.option("--lab", "lab_checks", is_flag=True, help="also check what 'mountbench lab' needs (QEMU, kernel, ...)")
@click.option("--cloud", "cloud_checks", is_flag=True, help="also check what 'mountbench cloudlab' needs (rclone, ...)")
@click.option(
    "--containers", "container_checks", is_flag=True, help="also check what 'mountbench containers' needs (Podman, ...)"
)
@click.option(
    "--preset",
    "presets",
    multiple=True,
    metavar="NAME",
    help="also check what these presets need: their tools (nginx, wrk, git, ...), fio's acceptance of "
    "their jobs, and room for their files on the targets (repeatable; 'mountbench presets' lists them)",
)
def doctor(
    target: tuple[str, ...], lab_checks: bool, cloud_checks: bool, container_checks: bool, presets: tuple[str, ...]
) -> None:
    """Check fio, privileges and each TARGET; print every problem with its fix.

    \b
    mountbench doctor /mnt/a /mnt/b
    mountbench doctor /mnt/a --preset http      # nginx and wrk present, room for its files
    mountbench doctor --lab --cloud
    """
    from mountbench.presets import preset_names

    unknown = [name for name in presets if name not in preset_names()]
    if unknown:
        names = ", ".join(preset_names())
        raise UsageError(f"unknown preset {unknown[0]!r}; choose from {names} ('mountbench presets')")
    problems = warnings = 0
    rows: list[list[CellView]] = []

    def report(check: str, ok: bool, result: str, fix: str = "", *, warn: bool = False) -> None:
        """A row: ✓ fine; ! works, with a consequence (``warn``, not counted); ✗ a problem to fix. Plain
        text (a path or a mount source with brackets, '[::1]:/export', is never read as rich markup)."""
        nonlocal problems, warnings
        problems += 0 if ok or warn else 1
        warnings += 1 if warn and not ok else 0
        mark, colour = ("✓", "green") if ok else (("!", "yellow") if warn else ("✗", "red"))
        said = CellView(f"{mark} {result}", rich=Text.assemble((mark, colour), f" {result}"))
        rows.append([CellView(check), said, CellView("" if ok else fix)])

    try:
        fio = find_fio()
        report("fio", True, f"{fio.version} at {fio.path}")
        engines = fio_engines(fio.path)
        report(
            "fio libaio engine",
            "libaio" in engines or sys.platform != "linux",
            "available" if "libaio" in engines else "missing",
            "install a fio built with libaio",
        )
    except MountbenchError as exc:
        report("fio", False, "not usable", str(exc))
    machine, how = can_drop_machine_caches()
    # the files a buffered sample reads are evicted without root; tree walks and start-ups need the machine's
    # caches dropped (root, a writable /proc/sys): without that their numbers are marked 'caches not dropped'
    evicted = "the files a sample reads are evicted (posix_fadvise, no root needed); the machine's caches"
    report(
        "cache dropping",
        machine,
        f"{evicted} can be dropped ({how})" if machine else f"{evicted} cannot be dropped ({how})",
        "fine for fio and http presets (their files are evicted one by one); for tree walks and start-ups (tree, "
        "s1) "
        + (
            "start the container with --privileged (its root then drops the host's page cache)"
            if is_root()
            else "run as root (sudo) so caches are dropped between samples"
        )
        + "; otherwise those results are marked",
        warn=True,
    )
    fence = contain.containment()
    report(
        "containment",
        fence.contained,
        fence.fact(),
        "use Linux 6.2 or newer (Landlock ABI 3), or run as root (a private mount namespace); otherwise only the "
        "job checks keep a run's children inside its scratch directories",
        warn=True,
    )
    inside = container.here()
    if inside is not None:
        report("container", True, f"{inside.said()}: each target's mount is said for what it is (bind mount, "
                                  "volume, writable layer, tmpfs)")  # fmt: skip
    args = list(target or targets_mod.default_targets())
    together = _resolved_together(args)
    usable = all([_doctor_target(arg, report, together.get(arg)) for arg in args])  # a list: every target's rows
    if presets:
        _doctor_presets(presets, args if usable else [], report)
    if lab_checks or cloud_checks or container_checks:
        from mountbench.labs.members import LABS

        asked = {"--lab": lab_checks, "--cloud": cloud_checks, "--containers": container_checks}
        for lab in LABS.values():
            if asked.get(lab.doctor_flag):
                _doctor_lab(lab, report)
    out.print(rich_table(TableView("doctor", "", ["check", "result", "fix"], rows, numeric_from=3), layout=PLAIN))
    if problems:
        raise ChecksFailed(f"{problems} problem(s) found; the fix for each is in the table above")
    noted = f" ({warnings} warning{'s' if warnings != 1 else ''}, marked !)" if warnings else ""
    out.print("all checks passed" + noted)


def _doctor_lab(lab: Lab, report: Callable[..., None]) -> None:
    """A row per missing piece of the lab (what it works without is marked !), or one row saying
    everything is there."""
    problems = lab.prerequisites(optional=True)
    for problem in problems:
        report(lab.command, False, str(problem), problem.fix, warn=problem.optional)
    if not problems:
        report(lab.command, True, f"{lab.needs} ({', '.join(lab.variants)})")


def _doctor_presets(presets: tuple[str, ...], target_args: list[str], report: Callable[..., None]) -> None:
    """What a run of these presets would check before its first sample, checked now: each
    kind's runner accepts its workloads (tools present, fio parses the jobs), and the targets
    have room for the working sets (two targets on one filesystem share its free space)."""
    from mountbench.engine.session import check_space
    from mountbench.engine.workloads import assemble
    from mountbench.kinds import RunnerSetup, make_runners

    name = f"preset {', '.join(presets)}"
    try:
        workloads = assemble(presets, [])
        runners = make_runners({w.kind for w in workloads}, RunnerSetup(find_fio()))
    except MountbenchError as exc:
        report(name, False, "unusable", str(exc))
        return
    for kind, runner in runners.items():
        mine = [w for w in workloads if w.kind == kind]
        if not mine:
            continue
        try:
            runner.check(mine)
        except MountbenchError as exc:
            report(f"{name}: {kind}", False, f"cannot run its {len(mine)} workload(s)", str(exc))
            continue
        report(f"{name}: {kind}", True, f"{len(mine)} workload(s) ready")
    if not target_args:  # a target's own row says what is wrong with it
        return
    try:
        targets = targets_mod.resolve_targets(target_args)  # together, as a run would: labels unique
        notices = check_space(targets, workloads, lambda w: runners[w.kind])
    except MountbenchError as exc:
        report(f"{name}: room on the targets", False, "not enough space", str(exc))
        return
    report(f"{name}: room on the targets", not notices, "; ".join(notices) or "the working sets fit", warn=True)


def _resolved_together(args: Sequence[str]) -> dict[str, Target]:
    """Each target as a run of all of them would name it (issue 48: resolved one at a time, two directories
    named alike were both 'nr-newcomer (ext4)' here and 'a/nr-newcomer (ext4)', 'b/…' in the run); {} when
    they cannot be resolved together (each then says why on its own row)."""
    try:
        return dict(zip(args, targets_mod.resolve_targets(list(args)), strict=True))
    except MountbenchError:
        return {}


def _doctor_target(arg: str, report: Callable[..., None], resolved: Target | None = None) -> bool:
    """The target's checks (``resolved``: as a run of every target names it); whether it is usable."""
    _label, path_text = targets_mod.parse_target_arg(arg)
    try:
        resolved = resolved or targets_mod.resolve_targets([arg])[0]
    except MountbenchError as exc:
        report(f"target {path_text}", False, "unusable", str(exc))
        return False
    run_id = f"doctor-{os.getpid()}"
    try:
        scratch = targets_mod.create_scratch(resolved, run_id)
    except MountbenchError as exc:
        report(f"target {resolved.label}", False, "not writable", str(exc))
        return False
    try:
        info = targets_mod.inspect_target(resolved, scratch)
    finally:
        targets_mod.remove_scratch(scratch, run_id)
    kind = f"; {info.mount_kind}" if info.mount_kind else ""  # in a container: bind mount, volume, layer...
    report(f"target {resolved.label}", True, f"{info.fstype} from {info.mount_source}, writable{kind}")
    report(
        f"  O_DIRECT on {resolved.label}",
        info.odirect,
        info.odirect_detail,
        "direct workloads will run buffered there and be marked 'buffered: O_DIRECT refused'",
    )
    report(
        f"  free space on {resolved.label}",
        info.free_bytes > 1024**3,
        format_bytes(info.free_bytes),
        "free space or pass --size so the working set fits",
    )
    return True
