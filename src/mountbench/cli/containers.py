"""`mountbench containers`: the same workloads from inside a Podman container on a bind mount,
a named volume, the writable layer, a tmpfs and an overlay mount, with the host as baseline."""

from __future__ import annotations

from pathlib import Path

import click

from mountbench.cli.console import command_line, print_run
from mountbench.cli.labresume import exporter, note, resume_lab_run
from mountbench.cli.options import (
    check_database,
    debug_option,
    given_run_options,
    mount_choice,
    pop_run_options,
    probe_options,
    run_options,
)
from mountbench.errors import TargetError, UsageError
from mountbench.host import outputs
from mountbench.labs.containers.mounts import MOUNT_TYPES, MountType
from mountbench.model import RunOptions
from mountbench.store import Store, default_db_path


@click.command()
@mount_choice(
    "--mount", "mounts", "TYPES", f"mount types, comma-separated or repeated: {', '.join(MOUNT_TYPES)} [default: all]"
)
@run_options
@probe_options(
    "probe each mount from inside first: directory rename from a lower layer, chown, xattr, O_DIRECT; and "
    "coherence between the host and the container through the bind mount",
    on=True,
    timeout=(0.5, 5.0, "seconds a host change may take to show in the container"),
)
@click.option("--resume", metavar="RUN", help="finish an interrupted or killed containers run (its lab is made again)")
@click.option("--dry-run", is_flag=True, help="print the checks, the lab's exact commands and the plan, then exit")
@debug_option
def containers(
    mounts: tuple[str, ...],
    probe_mounts: bool,
    probe_timeout: float,
    resume: str | None,
    dry_run: bool,
    db: Path | None,
    json_out: Path | None,
    debug: bool,
    **params: object,
) -> None:
    """Container storage measured from inside a Podman container, against the host.

    One rootful Podman container (runc, no network) gets every mount type; its image is
    built here from the host's own fio and tools (no registry). Rounds alternate between
    the host (the bind mount's directory: the baseline, 'host') and the container, where
    the host's own mountbench runs the same workloads on every mount. The run options are
    those of 'mountbench run' (default: --preset quick --runtime 1 --size 64M; no --budget
    or --until). Nothing of your own Podman containers, images or volumes is touched.

    \b
    mountbench containers                                  host vs bind, volume, layer, tmpfs, overlay
    mountbench containers --dry-run                        the checks, exact commands and plan; nothing runs
    mountbench containers --mount bind,volume --preset tree --tree node
    mountbench containers --repeat 5 --runtime 2 --size 256M
    """
    from mountbench.labs.containers.rounds import ContainerOptions, mount_types, run_containers, with_defaults

    if resume:
        if mounts or given_run_options(params):
            raise UsageError("--resume takes no --mount or run options: the run's own are used")
        from mountbench.labs.containers.member import LAB

        resume_lab_run(LAB, resume, db or default_db_path(), json_out, keep=False)
        return
    chosen = mount_types(mounts)  # bad names fail here, before anything starts
    options = pop_run_options(params)
    params.pop("per_client", None)
    with_defaults(options)  # options the lab refuses fail here too
    if dry_run:
        _dry_run(chosen, with_defaults(options))
        return
    db_path = db or default_db_path()
    check_database(db_path)  # before the image is built and the rounds run, not after
    protect = [*outputs.database(db_path), *outputs.inputs(options.job_files, "one of the run's job files")]
    if json_out:
        outputs.check(json_out, "--json", protect)
    with Store(db_path) as store:
        export = exporter(store, json_out)
        run_id, stopped = run_containers(ContainerOptions(mounts, options, probe_mounts, probe_timeout), store, note,
                                         command_line(), export)  # fmt: skip
        export(run_id)
        run = store.load_run(run_id)
    if run.samples:
        print_run(run)  # with the lab's pick-two section (report/sections/picktwo.py)
    if stopped:
        raise stopped


def _dry_run(chosen: list[MountType], options: RunOptions) -> None:
    """The checks, the lab's commands and the plan; nothing started, nothing written. A lab that
    would refuse to start says so last, as a one-line error (exit 2)."""
    from mountbench.labs.containers.containerplan import check_lines, lab_lines, round_lines

    checks, problems = check_lines(chosen)
    click.echo("Checks:")
    for line in checks:
        click.echo(line)
    for line in [*lab_lines(chosen), *round_lines(chosen, options)]:
        click.echo(line)
    if problems:
        raise TargetError(f"the lab would refuse to start: {problems[0]} (fix: {problems[0].fix})")
