"""The cloud lab's pick two (study S4 on Linux): performance, consistency with the remote and
durability at fsync(), per rclone cache mode and round-trip time, from a run made by `mountbench
cloudlab` (its probe in ``config.lab``: CloudLabFacts, a probefacts.CloudProbe).

- performance: each workload's headline median (the S4 random read's IOPS, the tree extract's and
  rsync's wall time) against the fastest cloud mount of the run (performance.py), rated on the cold
  figures (a read workload's first read from the remote), the warm figure of the same workload shown
  beside it, never rated (labs/cloud/phases.py); the worst of them;
- consistency: how long until a file written and closed through the mount is on the remote; whether
  a file created on the remote shows through the mount (and after how long); what a read through the
  mount returns right after the remote changed a file it had read (fresh; stale; torn is data loss).
  Good when everything shows within 100 ms; fair when within the probe's timeout; poor when
  something never did;
- durability at fsync(): was the file on the remote when fsync() returned (the file still open)?
  good: yes; poor: no (then the delay after close says when it got there).

Beside the verdicts, the lab's wire (the metadata round trip through each mount: a 20 ms RTT shows
here); in its own tables, the probe's capabilities per target (O_DIRECT, locks, xattrs, rename)
and, in the terminal, a compact latency-percentile table (the hit/miss modes study S4 saw).

Pure: a Report in (picktwo.pick_twos calls this once, when the report is built).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from mountbench.blocks.table import CellView, TableView
from mountbench.labfacts import CloudLabFacts
from mountbench.probefacts import CloudProbe, CloudTarget, SyncResult, TreeLag
from mountbench.report.cells import format_value
from mountbench.report.model import Report
from mountbench.report.picktwo.performance import fastest, headline_rows, judge_row, medians
from mountbench.report.picktwo.rows import Measured, PickRow, PickTwo, Property
from mountbench.report.picktwo.scale import LEGEND as SCALE
from mountbench.report.picktwo.scale import PROMPT_MS, worst
from mountbench.units import format_seconds

TITLE = "Cloud drive: pick two (performance, consistency with the remote, durability at fsync)"
KEY = "cloud-pick-two"
PROPERTIES = ("performance", "consistency", "durability")
CAPABILITIES = (("o_direct", "O_DIRECT"), ("flock", "flock"), ("fcntl_lock", "fcntl lock"),
                ("user_xattr", "xattrs"), ("rename_over", "rename over"), ("fsync", "fsync"))  # fmt: skip
TERMINAL_PERCENTILES = (1.0, 10.0, 50.0, 90.0, 99.0, 99.9)
LEGEND = (
    f"{SCALE} · – the local baseline (no remote) · ? not measured; "
    "performance against the fastest cloud mount from the run's intervals (good: shown within 2×; poor: shown "
    "beyond 10×; fair otherwise), rated on the cold figures "
    "(a first read from the remote), warm ones (from the cache after a read) beside them; consistency good when "
    f"every change showed within {PROMPT_MS:g} ms both ways; durability: on the remote when fsync() returned"
)


def cloud_probes(report: Report) -> list[CloudProbe]:
    return [run.config.lab.probe for run in report.runs if isinstance(run.config.lab, CloudLabFacts)]


def pick_two(report: Report) -> PickTwo | None:
    """The pick two of the report's last cloud-lab run (None: it has none)."""
    probes = cloud_probes(report)
    if not probes:
        return None
    probe = probes[-1]
    labels = [t for t in report.summary.targets if probe.target(t) is not None]
    cloud = [t for t in labels if probe.target(t).mode is not None]  # type: ignore[union-attr]
    perf = _performance(report, cloud, probe.phases)
    rows = []
    for label in labels:
        target = probe.target(label)
        assert target is not None
        mount = probe.mount(label)
        sync = mount.sync if mount is not None else None
        if target.mode is None:
            unjudged = tuple(Property(name, "–") for name in PROPERTIES)
            rows.append(PickRow(label, unjudged, (Measured("mode", "local disk"),), baseline=True))
            continue
        measures = perf.get(label, ())
        performance = Property("performance", worst(*(m.verdict for m in measures)), measures)
        rows.append(PickRow(label, (performance, _consistency(sync, probe.timeout_s),
                                    _durability(sync, probe.lag(label))), _wire(target, sync)))  # fmt: skip
    caps = capability_table(probe, labels)
    return PickTwo(
        CloudLabFacts.name,
        KEY,
        TITLE,
        PROPERTIES,
        tuple(rows),
        LEGEND,
        label_header="target",
        about_header="wire",
        caption="per rclone cache mode and round-trip time; the local disk is the baseline",
        notes=tuple(notes(probe)),
        tables=(caps,) if caps else (),
        terminal_tables=(*((caps,) if caps else ()), *percentile_tables(report)),
    )


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _ms(value: float | None) -> str:
    return "–" if value is None else format_seconds(value / 1000.0)


def _wire(target: CloudTarget, sync: SyncResult | None) -> tuple[Measured, ...]:
    """The wire a mount reached its remote over, and what one metadata call and one read took through it."""
    rtt, cap = target.rtt_ms, target.bandwidth_kbps
    wire = f"RTT {rtt:g} ms" + (f", {cap} KB/s each way" if cap else "") if rtt is not None else "RTT –"
    round_trip = _median(sync.round_trip_ms) if sync else None
    first = sync.first_read_ms[0] if sync and sync.first_read_ms else None
    again = _median(sync.reread_ms) if sync else None
    reads = "–" if first is None else f"{_ms(first)} / {_ms(again)}"
    return (
        Measured("mode", target.mode or "local disk"),
        Measured("wire", wire, value=float(rtt) if rtt is not None else None, unit="ms"),
        Measured("round_trip", f"mkdir+rmdir {_ms(round_trip)}", value=round_trip, unit="ms"),
        Measured("reads", f"first read / cached re-read {reads}", value=first, unit="ms"),
    )


def _performance(
    report: Report, cloud_labels: Sequence[str], phases: Mapping[str, str] | None = None
) -> dict[str, tuple[Measured, ...]]:
    """Each mode rated on its cold figures (a read workload's first read from the remote), the
    warm figure of the same workload shown beside it, never rated (labs/cloud/phases.py)."""
    phases = phases or {}
    warm_of = {name: phase.split(":", 1)[1] for name, phase in phases.items() if phase.startswith("warm:")}
    rows = headline_rows(report)
    warm_rows = {warm_of[row.workload]: row for row in rows if row.workload in warm_of}
    found: dict[str, list[Measured]] = {label: [] for label in cloud_labels}
    for row in rows:
        if row.workload in warm_of:
            continue  # shown beside its cold figure
        figures = medians(row, cloud_labels)
        if not figures:
            continue
        warm_row = warm_rows.get(row.workload)

        def warm(label: str, warm_row: object = warm_row) -> str:
            cell = warm_row.cells.get(label) if warm_row is not None else None  # type: ignore[attr-defined]
            if cell is None or cell.summary is None:
                return ""
            return f", warm {format_value(cell.summary.median, warm_row.metric)}"  # type: ignore[attr-defined]

        phase = "cold " if phases.get(row.workload) == "cold" else ""
        judged = judge_row(report, row, cloud_labels, fastest(row, figures), phase, warm)
        for label in cloud_labels:
            found[label].append(judged[label])
    return {label: tuple(items) for label, items in found.items()}


def _consistency(sync: SyncResult | None, timeout: float) -> Property:
    """Is on the remote at close, write → remote, remote → mount, a remote change read through the mount."""
    if sync is None:
        unknown = tuple(Measured(m, f"{words}: ?") for m, words in _CONSISTENCY)
        return Property("consistency", "not measured", unknown)
    at_close = sum(1 for v in sync.at_close if v)
    close_text = "yes" if at_close == len(sync.at_close) and at_close else "no" if not at_close else "sometimes"
    to_remote = _median(sync.close_delay_ms)
    created = _median(sync.remote_create_ms)
    missed = sum(1 for v in sync.remote_create_ms if v is None)
    to_text = "at close" if to_remote == 0.0 else (f"after {_ms(to_remote)}" if to_remote is not None
                                                    else f"not within {timeout:g} s")  # fmt: skip
    from_text = f"not within {timeout:g} s" if missed == len(sync.remote_create_ms) else f"after {_ms(created)}"
    if 0 < missed < len(sync.remote_create_ms):
        from_text += f" ({missed} of {len(sync.remote_create_ms)} never)"
    outcomes = list(sync.remote_change)
    fresh_after = _median(sync.remote_change_fresh_ms)
    if "torn" in outcomes:
        change_text, change_verdict = "torn (size and data disagree)", "data loss"
    elif outcomes and all(o == "fresh" for o in outcomes):
        change_text, change_verdict = "fresh", "good"
    elif "stale" in outcomes:
        change_text = f"stale, fresh after {_ms(fresh_after)}" if fresh_after is not None else (
            f"stale for over {timeout:g} s")  # fmt: skip
        change_verdict = "fair" if fresh_after is not None else "poor"
    else:
        change_text, change_verdict = ", ".join(outcomes) or "?", "not measured"

    def delay_verdict(value: float | None, never: bool) -> str:
        if never or value is None:
            return "poor"
        return "good" if value <= PROMPT_MS else "fair"

    verdict = worst(delay_verdict(to_remote, to_remote is None), delay_verdict(created, missed > 0), change_verdict)
    said = (close_text, to_text, from_text, change_text)
    values = (float(at_close), to_remote, created, fresh_after)
    units = ("", "ms", "ms", "ms")
    parts = zip(_CONSISTENCY, said, values, units, strict=True)
    return Property("consistency", verdict, tuple(Measured(m, f"{words}: {text}", value=value, unit=unit)
                                                  for (m, words), text, value, unit in parts))  # fmt: skip


_CONSISTENCY = (("at_close", "at close()"), ("to_remote", "to remote"), ("from_remote", "from remote"),
                ("remote_change", "remote change"))  # fmt: skip


def _after_close(seconds: float) -> str:
    return "at close" if seconds == 0.0 else f"{format_seconds(seconds)} after the last close"


def _durability(sync: SyncResult | None, lag: TreeLag | None = None) -> Property:
    """The verdict, and the words: when did data written through the mount reach the remote
    (one file after close, and a whole tree after its last close)."""
    if sync is None or not sync.at_fsync:
        return Property("durability", "not measured", (Measured("at_fsync", "?"),))
    yes = sum(1 for v in sync.at_fsync if v)
    fsync = _median(sync.fsync_ms)
    took = f"fsync took {_ms(fsync)}" if fsync is not None else "fsync failed"
    tree = ""
    if lag is not None:
        tree = (f"; {lag.files:,} files: {_after_close(lag.lag_s)}" if lag.lag_s is not None else
                f"; {lag.files:,} files: {lag.on_remote:,} on the remote after {lag.timeout_s:g} s")  # fmt: skip
        if not lag.alone:  # runs before issue 49 wrote the tree through every mount at once
            tree += " (written through every mount at once, on one proxy)"
    if yes == len(sync.at_fsync):
        return Property("durability", "good", (Measured("at_fsync", f"yes ({took}){tree}", value=float(yes)),))
    after = _median(sync.close_delay_ms)
    arrives = ("arrives at close" if after == 0.0 else f"arrives ≈ {_ms(after)} after close" if after is not None
               else "not on the remote within the probe's wait after close")  # fmt: skip
    text = f"no: {took}; {arrives} (one file){tree}" + ("" if yes == 0 else f" ({yes} of {len(sync.at_fsync)} yes)")
    return Property("durability", "poor", (Measured("at_fsync", text, value=float(yes)),))


def capability_table(probe: CloudProbe, labels: Sequence[str]) -> TableView | None:
    """What each target supports, as the probe found it."""
    found: dict[str, dict[str, str]] = {}
    for label in labels:
        mount = probe.mount(label)
        caps = mount.capabilities if mount is not None else None
        seen = {r.capability: r.verdict for r in caps.results} if caps is not None else {}
        found[label] = {name: seen[capability] for capability, name in CAPABILITIES if capability in seen}
    names = [name for _, name in CAPABILITIES if any(name in found[label] for label in labels)]
    if not names:
        return None
    cells = [[CellView(label, strong=True), *(CellView(found[label].get(n, "–")) for n in names)] for label in labels]
    return TableView("cloud-capabilities", "What each target supports (probed)", ["target", *names], cells,
                     numeric_from=1_000)  # fmt: skip


def percentile_tables(report: Report) -> list[TableView]:
    """Compact percentile tables (a few percentiles down, targets across) for the terminal."""
    views = []
    for index, curve in enumerate(report.percentiles):
        wanted = [i for i, p in enumerate(curve.percentiles) if p in TERMINAL_PERCENTILES]
        rows = []
        for i in wanted:
            row = curve.rows[i]
            cells = [CellView(f"p{curve.percentiles[i]:g}")]
            for t in report.summary.targets:
                summary = row.cells[t].summary if t in row.cells else None
                cells.append(CellView(format_seconds(summary.median) if summary else "–"))
            rows.append(cells)
        views.append(TableView(f"cloud-percentiles-{index + 1}",
                               f"{curve.title}: {curve.direction} latency percentiles (lower is better)",
                               ["percentile", *report.summary.targets], rows))  # fmt: skip
    return views


def notes(probe: CloudProbe) -> list[str]:
    lines = [f"probe: {probe.repeat} repetition(s), each wait up to {probe.timeout_s:g} s; "
             f"{'; '.join(probe.tools.values())}"]  # fmt: skip
    lines += [f"probe problem: {e}" for e in probe.errors]
    for mount in probe.mounts:
        lines += [f"{mount.label}: {e}" for e in mount.errors]
        if mount.sync is not None:
            lines += [f"{mount.label}: {n}" for n in mount.sync.notes]
    return lines
