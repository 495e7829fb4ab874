"""`mountbench history [TARGET]`: one storage's runs over time (analysis/overtime.py), on the terminal
and, with --out, as a self-contained HTML page with the chart."""

from __future__ import annotations

import os
from pathlib import Path

import click

from mountbench.analysis.comparable import Storage
from mountbench.analysis.overtime import history, storages
from mountbench.cli.console import err, out
from mountbench.cli.options import db_option, debug_option
from mountbench.errors import UsageError
from mountbench.host import outputs
from mountbench.model import RunData
from mountbench.report.history import Listed, listing, page, terminal
from mountbench.store import Store, default_db_path

SHOWN = ("complete", "interrupted")  # a run still going, or one whose every sample failed, is left out


@click.command(name="history")
@click.argument("target", required=False)
@click.option("--out", "out_path", type=click.Path(path_type=Path), metavar="FILE.html",
              help="also write a self-contained HTML page with the chart")  # fmt: skip
@db_option
@debug_option
def history_command(target: str | None, out_path: Path | None, db: Path | None, debug: bool) -> None:
    """A target's runs over time: each run's median and interval per workload, which runs are comparable,
    and the steps between runs that the data support.

    TARGET is a directory (as given to run) or a target's label; without it, the storage with stored runs
    is listed. Runs are matched by path and filesystem, not by label: a renamed target stays in its
    series, another filesystem under the same path is a series of its own.

    \b
    mountbench history /mnt/nas
    mountbench history /mnt/nas --out history.html
    """
    db_path = db or default_db_path()
    output = outputs.check(out_path, "--out", outputs.database(db_path)) if out_path else None
    runs = _runs(db_path)
    found = storages(runs)
    if target is None:
        listed = [Listed(s.path, s.filesystem, len(items), items[-1][0].created_at,
                         tuple(dict.fromkeys(label for _, label in items))) for s, items in found.items()]  # fmt: skip
        for part in listing(sorted(listed, key=lambda item: item.path)):
            out.print(part)
        if output is not None:
            raise UsageError("--out draws one target's history; give the TARGET (a path or a label) too")
        return
    chosen = _chosen(target, found)
    histories = [history(found[storage], storage) for storage in chosen]
    for part in terminal(histories):
        out.print(part)
    if output is not None:
        output.write_text(page(histories))
        err.print(f"wrote {output}", markup=False, highlight=False, soft_wrap=True)


def _runs(db_path: Path) -> list[RunData]:
    if not db_path.is_file():
        return []
    with Store(db_path, writer=False) as store:
        return [store.load_run(row["id"]) for row in store.list_runs() if row["status"] in SHOWN]


def _chosen(target: str, found: dict[Storage, list]) -> list[Storage]:
    """The storage TARGET names: those at its path (resolved when it exists), else those a target of that
    label measured; one line naming what exists when nothing matches."""
    path = str(Path(target).expanduser().resolve()) if os.path.exists(target) else os.path.abspath(target)
    by_path = [s for s in found if s.path == path]
    if by_path:
        return sorted(by_path, key=lambda s: found[s][0][0].created_at)
    by_label = [s for s, items in found.items() if any(label == target for _, label in items)]
    paths = sorted({s.path for s in by_label})
    if len(paths) == 1:
        return sorted(by_label, key=lambda s: found[s][0][0].created_at)
    if len(paths) > 1:
        raise UsageError(f"label {target!r} named targets at {len(paths)} paths ({', '.join(paths[:4])}); give the "
                         "path")  # fmt: skip
    known = ", ".join(sorted({s.path for s in found})[:5]) or "none yet"
    raise UsageError(f"no stored run measured {target} (by path or label); stored targets: {known} ('mountbench "
                     "history' lists them)")  # fmt: skip
