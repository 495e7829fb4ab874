"""`mountbench cloudlab`: local disk against rclone's four cache modes at chosen round-trip
times, with a remote and a delay served on this machine (no VM, no account)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from mountbench.cli.console import command_line, err, print_run
from mountbench.cli.labresume import exporter, note, resume_lab_run
from mountbench.cli.options import (
    debug_option,
    given_run_options,
    mount_choice,
    pop_run_options,
    probe_options,
    run_options,
)
from mountbench.cli.progress import ProgressEvents
from mountbench.errors import Interrupted, UsageError
from mountbench.model import Workload
from mountbench.store import Store, default_db_path


@click.command()
@mount_choice(
    "--mode",
    "modes",
    "MODES",
    "rclone --vfs-cache-mode(s), comma-separated or repeated [default: off,minimal,writes,full]",
)
@click.option(
    "--rtt",
    "rtts",
    multiple=True,
    metavar="MS",
    help="round-trip times between mount and remote in ms, comma-separated or repeated [default: 0,20]",
)
@click.option(
    "--bandwidth",
    type=click.IntRange(0, 10**8),
    metavar="KB/S",
    help="cap each direction of the wire at this many KB/s; 0: no cap  [default: 12500, a 100 Mbit/s home link]",
)
@run_options
@probe_options(
    "probe each target first: capabilities, and sync with the remote (durability at close/fsync)",
    on=True,
    timeout=(1, 10.0, "seconds a change may take to show (rclone uploads 5 s after close by default)"),
    repeat=(20, 1, None),
)
@click.option(
    "--tree-lag-files",
    type=click.IntRange(1, 100_000),
    hidden=True,
    help="files in the probe's tree written through each mount (its upload lag) [default: 300]; fewer: a shorter "
    "wait (the tests)",
)
@click.option(
    "--cold-only",
    is_flag=True,
    hidden=True,
    help="measure reads cold only, with no warm twin where a mode caches reads; fewer samples: a shorter run "
    "(the tests)",
)
@click.option("--keep-lab", is_flag=True, help="keep the lab's work directory (logs, remote, caches) afterwards")
@click.option("--resume", metavar="RUN", help="finish an interrupted or killed cloudlab run (its lab is made again)")
@click.option("--dry-run", is_flag=True, help="print the lab (mounts and exact commands) and the plan, then exit")
@debug_option
def cloudlab(
    modes: tuple[str, ...],
    rtts: tuple[str, ...],
    bandwidth: int | None,
    probe_mounts: bool,
    probe_timeout: float,
    probe_repeat: int,
    tree_lag_files: int | None,
    cold_only: bool,
    keep_lab: bool,
    resume: str | None,
    dry_run: bool,
    db: Path | None,
    json_out: Path | None,
    debug: bool,
    **params: object,
) -> None:
    """Study S4's cloud drive on Linux: local disk vs rclone mounts of a remote served here.

    rclone serves a directory over WebDAV in a network namespace of the lab's own, toxiproxy puts
    each chosen round-trip time and a bandwidth (default: a 100 Mbit/s home link) on the wire, and
    one rclone mount per cache mode and RTT is a target, labelled MODE-RTTms. Reads are measured
    cold (from the remote) and, where a mode caches reads, warm. The run options (--preset, --job,
    --repeat, --size, ...) are those of 'mountbench run' (default: --preset clouddrive --size 64M);
    local disk is the baseline.

    \b
    mountbench cloudlab                                   4 cache modes x 0 and 20 ms, preset clouddrive
    mountbench cloudlab --rtt 0,10,50 --mode off,full --preset latency --size 256M
    mountbench cloudlab --job s4.fio --rtt 50 --bandwidth 10000
    """
    from mountbench.labs.cloud.cloudrun import CloudOptions, run_cloudlab, with_defaults
    from mountbench.labs.cloud.matrix import DEFAULT_BANDWIDTH_KBPS, cloud_specs

    if resume:
        if modes or rtts or bandwidth or given_run_options(params):
            raise UsageError("--resume takes no --mode, --rtt, --bandwidth or run options: the run's own are used")
        from mountbench.labs.cloud.member import LAB

        resume_lab_run(LAB, resume, db or default_db_path(), json_out, keep_lab)
        return
    if bandwidth is None:
        bandwidth = DEFAULT_BANDWIDTH_KBPS
    specs = cloud_specs(modes, rtts, bandwidth)  # bad modes and RTTs fail here, before anything starts
    options = pop_run_options(params)
    params.pop("per_client", None)
    with_defaults(options)  # options the cloud lab refuses fail here, before anything starts
    if dry_run:
        from mountbench.labs.cloud.cloudplan import lab_lines, workload_lines

        for line in [*lab_lines(specs), *workload_lines(specs, with_defaults(options), warm=not cold_only)]:
            click.echo(line)
        return
    cloud = CloudOptions(tuple(specs), options, probe_mounts, probe_timeout, probe_repeat, keep_lab)
    if tree_lag_files is not None:
        cloud = dataclasses.replace(cloud, tree_lag_files=tree_lag_files)
    if cold_only:
        cloud = dataclasses.replace(cloud, warm=False)
    err.print(f"cloudlab: {len(specs)} rclone mounts ({', '.join(s.label for s in specs)}) and the local disk")
    with Store(db or default_db_path()) as store:
        export = exporter(store, json_out)
        try:
            run_id, status = run_cloudlab(cloud, store, _progress, note, command_line(), export)
        except Interrupted as exc:
            raise Interrupted(exc.run_id, RESUME_COMMAND) from None
        run = store.load_run(run_id)
        export(run_id)
    print_run(run)
    if status != "complete":
        raise Interrupted(run_id, RESUME_COMMAND)


RESUME_COMMAND = "mountbench cloudlab"


def _progress(workloads: Sequence[Workload], learnt: Mapping[tuple[str, str], float]) -> ProgressEvents:
    """The progress bar, knowing the workloads (their kinds, their headline metrics) and what each
    (target, workload) cost in this machine's earlier cloud-lab runs: its first ETA."""
    return ProgressEvents(err, workloads, learnt=learnt)


for _param in cloudlab.params:  # the shared option's help names run's default preset; this command's differs
    if _param.name == "presets" and isinstance(_param, click.Option):
        _param.help = "named suite (repeatable; default clouddrive, at --size 64M)"
