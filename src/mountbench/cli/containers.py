"""`mountbench containers`: the same workloads from inside a Podman container on a bind mount,
a named volume, the writable layer, a tmpfs and an overlay mount, with the host as baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from mountbench.cli.console import command_line, err, out, print_run
from mountbench.cli.labresume import note
from mountbench.cli.options import debug_option, pop_run_options, run_options
from mountbench.host import outputs
from mountbench.labs.containers.mounts import MOUNT_KINDS
from mountbench.records.export import write_document
from mountbench.report.document import make_document
from mountbench.store import Store, default_db_path


@click.command()
@click.option(
    "--mount",
    "mounts",
    multiple=True,
    metavar="KINDS",
    help=f"mount kinds, comma-separated or repeated: {', '.join(MOUNT_KINDS)} [default: all]",
)
@run_options
@click.option(
    "--probe/--no-probe",
    "probe_mounts",
    default=True,
    show_default=True,
    help="probe each mount from inside first: directory rename from a lower layer, chown, xattr, O_DIRECT; and "
    "coherence between the host and the container through the bind mount",
)
@click.option("--probe-timeout", type=click.FloatRange(0.5, 600), default=5.0, show_default=True,
              help="seconds a host change may take to show in the container")  # fmt: skip
@debug_option
def containers(
    mounts: tuple[str, ...],
    probe_mounts: bool,
    probe_timeout: float,
    db: Path | None,
    json_out: Path | None,
    debug: bool,
    **params: object,
) -> None:
    """Container storage measured from inside a Podman container, against the host.

    One rootful Podman container (runc, no network) gets every mount kind; its image is
    built here from the host's own fio and tools (no registry). Rounds alternate between
    the host (the bind mount's directory: the baseline, 'host') and the container, where
    the host's own mountbench runs the same workloads on every mount. The run options are
    those of 'mountbench run' (default: --preset quick --runtime 1 --size 64M; no --budget
    or --until). Nothing of your own Podman containers, images or volumes is touched.

    \b
    mountbench containers                                  host vs bind, volume, layer, tmpfs, overlay
    mountbench containers --mount bind,volume --preset tree --tree small
    mountbench containers --repeat 5 --runtime 2 --size 256M
    """
    from mountbench.labs.containers.run import ContainerOptions, mount_kinds, run_containers, with_defaults

    mount_kinds(mounts)  # bad kinds fail here, before anything starts
    options = pop_run_options(params)
    params.pop("per_client", None)
    with_defaults(options)  # options the lab refuses fail here too
    db_path = db or default_db_path()
    protect = [*outputs.database(db_path), *outputs.inputs(options.job_files, "one of the run's job files")]
    json_output = outputs.check(json_out, "--json", protect) if json_out else None
    run, stopped = run_containers(ContainerOptions(mounts, options, probe_mounts, probe_timeout), note, command_line())
    with Store(db_path) as store:
        store.import_run(run)
        if json_output:
            write_document(json_output, make_document([run]))
    if run.samples:
        print_run(run)
        print_mounts(run.config.lab.to_dict()["facts"] if run.config.lab else {})
    if stopped:
        raise stopped


def print_mounts(facts: dict[str, Any]) -> None:
    """The mounts as the container saw them, and what the probe found on each."""
    if not facts:
        return
    image = facts.get("image", {})
    rootless = "rootless" if facts.get("rootless") else "rootful"
    out.print(
        f"\n{facts.get('engine')} ({rootless}, {facts.get('runtime')}, storage driver {facts.get('storage_driver')}, "
        f"cgroups {facts.get('cgroup_manager')}); image {image.get('name')} {str(image.get('id', ''))[:12]}",
        highlight=False,
    )
    caps = (facts.get("probe") or {}).get("capabilities", {})
    table = Table(title="Mounts (as the container's mount table shows them) and what each supports")
    for column in ("mount", "where", "filesystem", "rename dir from below", "chown", "xattr", "O_DIRECT"):
        table.add_column(column)
    for name, mount in (facts.get("mounts") or {}).items():
        found = caps.get(name, {})
        table.add_row(
            name, mount.get("path", ""), mount.get("fstype", "") or ("host" if name == "host" else ""),
            _said(found.get("rename_lower_dir"), "-"), _said(found.get("chown")), _said(found.get("xattr")),
            _said(found.get("o_direct")),
        )  # fmt: skip
    out.print(table)
    coherence = (facts.get("probe") or {}).get("coherence")
    if coherence:
        seen = coherence.get("host_to_container_s")
        shown = "not within the timeout" if seen is None else f"after {seen * 1000:.1f} ms"
        out.print(
            f"bind mount: a host write showed in the container {shown}; its inotify watch "
            f"{'saw it' if coherence.get('host_to_container_inotify') else 'did not see it'}; a container write "
            f"{'showed' if coherence.get('container_to_host') else 'did not show'} on the host at once",
            highlight=False,
        )
    for engine, why in (facts.get("engines") or {}).items():
        if why != "measured":
            err.print(f"not measured: {engine} ({why})", highlight=False)


def _said(outcome: dict[str, Any] | None, missing: str = "?") -> str:
    if not outcome:
        return missing
    return "ok" if outcome.get("ok") else str(outcome.get("errno") or "refused")
