"""`mountbench probe`: what each target really supports, and how two views of one directory agree."""

from __future__ import annotations

import dataclasses
import io
import json
import math
from pathlib import Path

import click
from rich.console import Console

from mountbench.cli.common import db_option, debug_option
from mountbench.cli.console import command_line, out, write_or_print
from mountbench.engine.session import new_run_id
from mountbench.errors import TargetError, UsageError
from mountbench.host import facts as hostinfo
from mountbench.host import outputs
from mountbench.host import targets as targets_mod
from mountbench.store import Store, default_db_path


@click.command()
@click.argument("target", nargs=-1)
@click.option(
    "--view",
    "views",
    multiple=True,
    metavar="A=B",
    help="two paths to one directory through different mounts: measure coherence from A to B "
    "(PATH@HOST[:PORT] for a client running 'mountbench serve')",
)
@click.option("--repeat", default=5, show_default=True, type=click.IntRange(1, 100), help="coherence repetitions")
@click.option(
    "--timeout",
    default=5.0,
    show_default=True,
    type=click.FloatRange(0.5, 600),
    callback=lambda ctx, param, value: _finite_timeout(value),
    help="seconds before a probe is called hung (and the visibility limit)",
)
@click.option(
    "--format", "fmt", type=click.Choice(["terminal", "md", "html", "json"]), default="terminal", show_default=True
)
@click.option("--out", "out_path", type=click.Path(path_type=Path), help="write md/html/json here instead of stdout")
@click.option("--show", "show_ref", metavar="ID", help="re-render a stored probe ('last' for the newest)")
@click.option("--details", is_flag=True, help="terminal: show what was observed in every cell")
@click.option("--diff", is_flag=True, help="show only the capabilities and checks on which the columns disagree")
@click.option(
    "--reference",
    "reference_dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="a local directory to run the same probes on, as the reference column [default: the system temp directory]",
)
@click.option("--no-reference", is_flag=True, help="do not measure the local reference column")
@db_option
@debug_option
def probe(
    target, views, repeat, timeout, fmt, out_path, show_ref, details, diff, reference_dir, no_reference, db, debug
) -> None:
    """What each TARGET really supports (O_DIRECT, chown, xattrs, locks, mmap, inotify, ctime, deep paths, ...),
    and whether make, git, rsync -a and an editor's save-by-rename work there.

    Every capability is tried for real inside a scratch directory that is removed
    afterwards, each in a child process with a timeout, so a hung mount reports
    "hung" instead of hanging mountbench. The same probes run on a local directory
    too, as a reference column. Findings that lose or corrupt data come first.

    \b
    mountbench probe /mnt/9p /mnt/virtiofs /tmp
    mountbench probe --view /srv/share=/mnt/sshfs-share --repeat 10
    mountbench probe --show last --diff
    mountbench probe --view /mnt/nfs@10.0.0.2=/mnt/nfs@10.0.0.3    two clients, each running mountbench serve
    """
    from mountbench import probe as probing
    from mountbench.clients import remoteprobe
    from mountbench.probe.measure import default_reference_dir, measure_all

    db_path = db or default_db_path()
    protect = outputs.database(db_path)
    if out_path is not None:
        outputs.check(out_path, "--out", protect)  # refused before anything is measured
    with Store(db_path, writer=not show_ref) as store:
        if show_ref:
            stored = store.load_probe(show_ref)
        else:
            if not target and not views:
                raise UsageError("give at least one TARGET or --view A=B (see 'mountbench probe --help')")
            paths = [targets_mod.resolve_path(t) for t in target]
            pairs = [remoteprobe.parse_view(v) or _view_pair(v) for v in views]  # PATH@CLIENT: across clients
            local = [(a, b) for a, b in pairs if not isinstance(a, remoteprobe.RemoteView)]
            remote = [(a, b) for a, b in pairs if isinstance(a, remoteprobe.RemoteView)]
            reference = None
            if not no_reference:
                reference = targets_mod.resolve_path(str(reference_dir)) if reference_dir else default_reference_dir()
            measured = measure_all(paths, local, repeat=repeat, timeout=timeout, reference=reference)
            unprobed = [t for t in (*measured.targets, measured.reference) if t is not None and t.error]
            if unprobed:  # every cell would be "–": no result to show or store
                raise TargetError("; ".join(f"cannot probe {t.path}: {t.error}" for t in unprobed))
            across = tuple(
                remoteprobe.measure_remote_coherence(a, b, repeat=repeat, timeout=timeout) for a, b in remote
            )
            results = dataclasses.replace(measured, coherence=measured.coherence + across).to_dict()
            stored = {"id": "probe-" + new_run_id(), "results": results}
            store.save_probe(stored["id"], command_line(), hostinfo.collect(), results)
    report = probing.ProbeReport.from_dict(stored["results"])
    if fmt == "terminal":
        parts = probing.render_document_terminal(report, details=details, diff=diff)
        if out_path is None:
            for part in parts:
                out.print(part)
            return
        recorder = Console(file=io.StringIO(), width=140)
        for part in parts:
            recorder.print(part)
        text = recorder.file.getvalue()  # type: ignore[attr-defined]
    elif fmt == "json":
        text = json.dumps(probing.document_json(report, stored["id"]), indent=1)
    elif fmt == "md":
        text = probing.render_document_markdown(report, diff=diff)
    else:
        text = probing.render_document_html(report, title=f"mountbench probe {stored['id']}", diff=diff)
    write_or_print(text, out_path, protect)


def _view_pair(text: str) -> tuple[Path, Path]:
    a, sep, b = text.partition("=")
    if not sep or not a or not b:
        raise UsageError(f"--view {text}: give two paths as A=B, e.g. --view /srv/share=/mnt/share")
    return targets_mod.resolve_path(a), targets_mod.resolve_path(b)


def _finite_timeout(value: float) -> float:
    if not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number of seconds; give one from 0.5 to 600, e.g. 5")
    return value
