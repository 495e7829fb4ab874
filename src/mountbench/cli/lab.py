"""`mountbench lab`: compare VM shared folders and virtual disks in a throwaway QEMU guest."""

from __future__ import annotations

from pathlib import Path

import click

from mountbench.cli.console import err, print_run
from mountbench.cli.labresume import exporter, note
from mountbench.cli.options import (
    check_database,
    debug_option,
    mount_choice,
    pop_run_options,
    probe_options,
    run_options,
)
from mountbench.engine import request as runrequest
from mountbench.engine import workloads as workloads_mod
from mountbench.errors import UsageError
from mountbench.fio.binary import find_fio
from mountbench.host import outputs
from mountbench.kinds import RunnerSetup, make_runners
from mountbench.labs.qemu.mounts import MOUNT_TYPES
from mountbench.store import Store, default_db_path


@click.command()
@mount_choice(
    "--mount", "mounts", "SPEC", f"TYPE[:opt=val,...]: {', '.join(MOUNT_TYPES)} (repeatable; default: a set of six)"
)
@run_options
@click.option("--accel", type=click.Choice(["auto", "kvm", "tcg"]), default="auto", show_default=True)
@click.option("--cpus", default=2, show_default=True, type=click.IntRange(1, 64))
@click.option("--memory", default="1G", show_default=True)
@click.option("--kernel", type=click.Path(exists=True, dir_okay=False), help="bzImage (default: /boot/vmlinuz-*)")
@click.option("--keep-guest", is_flag=True, help="keep images, sockets and logs afterwards")
@probe_options(
    "after the run, probe each mount in the guest and measure coherence between the host's directory and the "
    "guest's mount, both ways; the report then answers 'pick two' (performance, coherence, concurrency)",
    on=False,
    timeout=(
        0.5,
        None,
        "--probe: seconds before a probe is called hung, and how long a change may take to show [default: 5]",
    ),
    repeat=(100, None, "--probe: coherence repetitions [default: 3]"),
)
@click.option("--resume", metavar="RUN", help="finish an interrupted or killed lab run (its guest is made again)")
@debug_option
def lab(
    mounts: tuple[str, ...],
    accel: str,
    cpus: int,
    memory: str,
    kernel: str | None,
    keep_guest: bool,
    probe_mounts: bool,
    probe_repeat: int | None,
    probe_timeout: float | None,
    resume: str | None,
    db: Path | None,
    json_out: Path | None,
    debug: bool,
    **params: object,
) -> None:
    """Compare VM shared folders and virtual disks in a throwaway QEMU guest.

    The run options (--preset, --job, --repeat, ...) are those of 'mountbench run' and
    go to the guest's run as they are; --baseline names a mount (default: guest-tmpfs).

    \b
    mountbench lab                                   9p, 9p cache=loose, virtiofs, sshfs, disk, guest-tmpfs
    mountbench lab --mount 9p:cache=loose --mount virtiofs:cache=always --preset tree --tree git
    mountbench lab --mount disk:format=qcow2,cache=writeback --mount disk:cache=none --preset nine --size 1G
    mountbench lab --mount 9p --mount 9p:cache=loose --mount virtiofs --mount nfs --mount disk --preset s3 --probe
    """
    from mountbench.labs.insideprobe import ProbeOptions
    from mountbench.labs.qemu.guestrun import QemuOptions, check_prerequisites, lab_timeout, mount_specs, run_qemu

    if resume:
        from mountbench.cli.labresume import resume_lab_run
        from mountbench.labs.qemu.member import LAB

        resume_lab_run(LAB, resume, db or default_db_path(), json_out, keep_guest)
        return
    if params.get("clients") or params.get("hosts_file") or params.get("client_counts_text"):
        raise UsageError("--client and --clients are for 'mountbench run': the lab measures mounts inside one guest")
    specs = mount_specs(mounts)  # bad specs fail here, before anything boots
    if not probe_mounts and (probe_repeat is not None or probe_timeout is not None):
        raise UsageError("--probe-repeat and --probe-timeout apply to --probe; add --probe or drop them")
    check_prerequisites(specs)
    options = pop_run_options(params)
    db_path = db or default_db_path()
    check_database(db_path)  # before minutes of booting, not after
    protect = [*outputs.database(db_path), *outputs.inputs(options.job_files, "one of the run's job files")]
    if json_out:
        outputs.check(json_out, "--json", protect)  # before minutes of booting
    if options.watch:
        raise UsageError(
            "--watch is for 'mountbench run': the lab measures the host processes serving each mount itself"
        )
    workloads = workloads_mod.from_options(options)  # unknown presets and bad job files fail here too
    runrequest.check_workloads(workloads, make_runners({w.kind for w in workloads}, RunnerSetup(find_fio())))
    timeout = lab_timeout(workloads, options.repeat + options.warmup, len(specs))
    probing = ProbeOptions(probe_repeat or 3, probe_timeout or 5.0) if probe_mounts else None
    lab_options = QemuOptions(
        tuple(mounts), options, accel, cpus, memory, kernel, keep_guest, timeout, probing, tuple(workloads)
    )
    err.print("booting the lab guest (under TCG this takes a minute)...")
    with Store(db_path) as store:
        export = exporter(store, json_out)
        run_id, stopped = run_qemu(lab_options, store, note, export)  # each sample stored as it comes
        export(run_id)
        run = store.load_run(run_id)
    if run.samples:
        print_run(run)
    if stopped:
        raise stopped
