""" "Pick two" for cloud drives (study S4 on Linux): performance, consistency with the remote
and durability at fsync(), per rclone cache mode and round-trip time, from a run made by
`mountbench cloudlab` (its probe travels in ``config.lab``: CloudLabFacts, a probe.remotesync.CloudProbe).

- performance: each workload's headline median (the S4 random read's IOPS, the tree
  extract's and rsync's wall time) against the fastest cloud mount of the run: good
  within 2×, fair within 10×, poor beyond (picktwo's scale); the worst of them;
- consistency: how long until a file written and closed through the mount is on the
  remote; whether a file created on the remote shows through the mount (and after how
  long); what a read through the mount returns right after the remote changed a file it
  had read (fresh; stale; torn is data loss). Good when everything shows within 100 ms;
  fair when within the probe's timeout; poor when something never did;
- durability at fsync(): was the file on the remote when fsync() returned (the file still
  open)? good: yes; poor: no (then the delay after close says when it got there).

Also the lab's wire (the metadata round trip through each mount: a 20 ms RTT shows here),
the probe's capabilities per target (O_DIRECT, locks, xattrs, rename), and, in the
terminal, a compact latency-percentile table (the hit/miss modes study S4 saw).

Pure: a content.Report in, records and text out.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mountbench.blocks.parts import Block, Chapter, Heading, Items, Paragraph, Table
from mountbench.blocks.table import CellView, Line, RichLayout, TableView
from mountbench.labfacts import CloudLabFacts
from mountbench.probe.remotesync import CloudProbe, SyncResult, TreeLag
from mountbench.report.cells import format_value
from mountbench.report.csvexport import records_csv
from mountbench.report.model import Report
from mountbench.report.picktwo.scale import LEGEND as SCALE
from mountbench.report.picktwo.scale import (
    PROMPT_MS,
    Verdict,
    interval_verdict,
    marked,
    slower_than,
    verdict_cell,
    worst,
)
from mountbench.report.sections.section import Export, Options, nothing
from mountbench.units import format_seconds

TITLE = "Cloud drive: pick two (performance, consistency with the remote, durability at fsync)"
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


@dataclass(frozen=True)
class CloudRow:
    label: str
    mode: str | None
    rtt_ms: float | None
    performance: Verdict | str
    consistency: Verdict | str
    durability: Verdict | str
    perf_text: tuple[str, ...]
    round_trip_ms: float | None
    first_read_ms: float | None
    reread_ms: float | None
    at_close: str
    to_remote: str
    from_remote: str
    remote_change: str
    at_fsync: str
    capabilities: dict[str, str]
    bandwidth_kbps: int | None = None  # the wire's cap each way, when one was set

    @property
    def wire(self) -> str:
        """'20 ms' or '20 ms, 10000 KB/s each way'."""
        if self.rtt_ms is None:
            return "–"
        return f"{self.rtt_ms:g} ms" + (f", {self.bandwidth_kbps} KB/s each way" if self.bandwidth_kbps else "")

    @property
    def reads(self) -> str:
        """'24.2 ms / 2.00 µs': the first 4 KiB read of a file only the remote had (a miss; later
        first reads may be served by the client's read-ahead), and the median of reading it again."""
        if self.first_read_ms is None:
            return "–"
        return f"{_ms(self.first_read_ms)} / {_ms(self.reread_ms)}"

    @property
    def gets(self) -> str:
        if self.mode is None:
            return "the baseline"
        good = [p for p in PROPERTIES if getattr(self, p) == "good"]
        return " + ".join(good) if good else "none of the three"


def cloud_probes(report: Report) -> list[CloudProbe]:
    return [
        CloudProbe.from_dict(run.config.lab.probe) for run in report.runs if isinstance(run.config.lab, CloudLabFacts)
    ]


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _ms(value: float | None) -> str:
    return "–" if value is None else format_seconds(value / 1000.0)


def _headline_rows(report: Report) -> list:
    """Each workload's first (headline) summary row."""
    seen: dict[str, Any] = {}
    for row in report.summary.rows:
        seen.setdefault(row.workload, row)
    return list(seen.values())


def _performance(
    report: Report, cloud_labels: Sequence[str], phases: Mapping[str, str] | None = None
) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each mode rated on its cold figures (a read workload's first read from the remote), the
    warm figure of the same workload shown beside it, never rated (labs/cloud/phases.py)."""
    phases = phases or {}
    warm_of = {name: phase.split(":", 1)[1] for name, phase in phases.items() if phase.startswith("warm:")}
    rows = _headline_rows(report)
    warm_rows = {warm_of[row.workload]: row for row in rows if row.workload in warm_of}
    found: dict[str, list[tuple[str, str]]] = {label: [] for label in cloud_labels}
    for row in rows:
        if row.workload in warm_of:
            continue
        medians = {}
        for label in cloud_labels:
            cell = row.cells.get(label)
            if cell is not None and cell.summary is not None and cell.summary.median > 0:
                medians[label] = cell.summary.median
        if not medians:
            continue
        fastest = (max if row.metric.higher_is_better else min)(medians, key=lambda m: medians[m])
        phase = "cold " if phases.get(row.workload) == "cold" else ""
        warm_row = warm_rows.get(row.workload)
        for label in cloud_labels:
            if label not in medians:
                found[label].append(("poor" if label in row.cells else "not measured", f"{row.workload}: failed"))
                continue
            shown = format_value(medians[label], row.metric)
            warm_cell = warm_row.cells.get(label) if warm_row is not None else None
            warm = ""  # the warm figure beside the cold one, never rated (with or without an interval)
            if warm_row is not None and warm_cell is not None and warm_cell.summary is not None:
                warm = f", warm {format_value(warm_cell.summary.median, warm_row.metric)}"
            against = slower_than(row, label, report.summary.baseline, fastest)
            if against is None:
                found[label].append(("not measured", f"{row.workload}: {phase}{shown} (no interval){warm}"))
                continue
            factor, near, far = against  # judged from the run's intervals (picktwo.scale.interval_verdict)
            span = "" if far <= 1.0 else f" ({factor:.3g}×, {near:.3g}–{far:.3g}×)"
            found[label].append((interval_verdict(near, far), f"{row.workload}: {phase}{shown}{span}{warm}"))
    return {label: (worst(*(v for v, _ in items)), tuple(t for _, t in items)) for label, items in found.items()}


def _consistency(sync: SyncResult | None, timeout: float) -> tuple[str, str, str, str, str]:
    """(verdict, at close, write → remote, remote → mount, remote change)."""
    if sync is None:
        return "not measured", "?", "?", "?", "?"
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

    verdict = worst(
        delay_verdict(to_remote, to_remote is None),
        delay_verdict(created, missed > 0),
        change_verdict,
    )
    return verdict, close_text, to_text, from_text, change_text


def _after_close(seconds: float) -> str:
    return "at close" if seconds == 0.0 else f"{format_seconds(seconds)} after the last close"


def _durability(sync: SyncResult | None, lag: TreeLag | None = None) -> tuple[str, str]:
    """The verdict, and the words: when did data written through the mount reach the remote
    (one file after close, and a whole tree after its last close)."""
    if sync is None or not sync.at_fsync:
        return "not measured", "?"
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
        return "good", f"yes ({took}){tree}"
    after = _median(sync.close_delay_ms)
    arrives = ("arrives at close" if after == 0.0 else f"arrives ≈ {_ms(after)} after close" if after is not None
               else "not on the remote within the probe's wait after close")  # fmt: skip
    return "poor", f"no: {took}; {arrives} (one file){tree}" + (
        "" if yes == 0 else f" ({yes} of {len(sync.at_fsync)} yes)"
    )


def _capabilities(probe: CloudProbe, label: str) -> dict[str, str]:
    mount = probe.mount(label)
    found: dict[str, str] = {}
    if mount is None or mount.capabilities is None:
        return found
    for capability, name in CAPABILITIES:
        try:
            result = mount.capabilities.result(capability)
        except KeyError:
            continue
        found[name] = result.verdict
    return found


def cloud_rows(report: Report) -> list[CloudRow]:
    probes = cloud_probes(report)
    if not probes:
        return []
    probe = probes[-1]
    labels = [t for t in report.summary.targets if probe.target(t) is not None]
    cloud_labels = [t for t in labels if probe.target(t).mode is not None]  # type: ignore[union-attr]
    perf = _performance(report, cloud_labels, probe.phases)
    rows = []
    for label in labels:
        target = probe.target(label)
        assert target is not None
        mount = probe.mount(label)
        sync = mount.sync if mount is not None else None
        capabilities = _capabilities(probe, label)
        if target.mode is None:
            rows.append(CloudRow(label, None, None, "–", "–", "–", ("the baseline",), None, None, None,
                                 "–", "–", "–", "–", "–", capabilities))  # fmt: skip
            continue
        consistency, at_close, to_remote, from_remote, change = _consistency(sync, probe.timeout_s)
        durability, at_fsync = _durability(sync, probe.lag(label))
        performance, perf_text = perf.get(label, ("not measured", ()))
        rows.append(
            CloudRow(
                label,
                target.mode,
                target.rtt_ms,
                performance,
                consistency,
                durability,
                perf_text,
                _median(sync.round_trip_ms) if sync else None,
                sync.first_read_ms[0] if sync and sync.first_read_ms else None,
                _median(sync.reread_ms) if sync else None,
                at_close,
                to_remote,
                from_remote,
                change,
                at_fsync,
                capabilities,
                target.bandwidth_kbps,
            )
        )
    return rows


# --- views -------------------------------------------------------------------------------------

HEADERS = ["target", "cache mode", "RTT", "mkdir+rmdir", "first read / cached re-read", "performance",
           "on remote at close()", "write → remote", "remote → mount", "remote change, read through the mount",
           "consistency", "on remote at fsync()", "durability", "gets"]  # fmt: skip


def table(rows: Sequence[CloudRow]) -> TableView:
    cells = []
    for r in rows:
        cells.append([
            CellView(r.label, strong=True),
            CellView(r.mode or "local disk"),
            CellView(r.wire, repr(r.rtt_ms or 0)),
            CellView(_ms(r.round_trip_ms), repr(r.round_trip_ms or 0)),
            CellView(r.reads),
            CellView(f"{marked(r.performance)}: " + "; ".join(r.perf_text) if r.mode else "the baseline"),
            CellView(r.at_close),
            CellView(r.to_remote),
            CellView(r.from_remote),
            CellView(r.remote_change),
            verdict_cell(r.consistency),
            CellView(r.at_fsync),
            verdict_cell(r.durability),
            CellView(r.gets),
        ])  # fmt: skip
    return TableView("cloud-pick-two", TITLE, list(HEADERS), cells, numeric_from=2, text_from=4,
                     caption="per rclone cache mode and round-trip time; the local disk is the baseline")  # fmt: skip


def capability_table(rows: Sequence[CloudRow]) -> TableView | None:
    names = [name for _, name in CAPABILITIES if any(name in r.capabilities for r in rows)]
    if not names:
        return None
    cells = [[CellView(r.label, strong=True), *(CellView(r.capabilities.get(n, "–")) for n in names)] for r in rows]
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


def notes(report: Report) -> list[str]:
    probes = cloud_probes(report)
    if not probes:
        return []
    probe = probes[-1]
    lines = [f"probe: {probe.repeat} repetition(s), each wait up to {probe.timeout_s:g} s; "
             f"{'; '.join(probe.tools.values())}"]  # fmt: skip
    lines += [f"probe problem: {e}" for e in probe.errors]
    for mount in probe.mounts:
        lines += [f"{mount.label}: {e}" for e in mount.errors]
        if mount.sync is not None:
            lines += [f"{mount.label}: {n}" for n in mount.sync.notes]
    return lines


# --- parts -------------------------------------------------------------------------------------


def terminal_table(rows: Sequence[CloudRow]) -> TableView:
    """The pick-two table laid out for a terminal: one column per property, its measures under it."""
    headers = ["target", "wire", "performance", "consistency with the remote", "durability at fsync()", "gets"]
    cells = []
    for r in rows:
        if r.mode is None:
            cells.append(
                [CellView(r.label, strong=True), *map(CellView, ("local disk", "the baseline", "–", "–", "–"))]
            )
            continue
        consistency = [f"at close(): {r.at_close}", f"to remote: {r.to_remote}", f"from remote: {r.from_remote}",
                       f"remote change: {r.remote_change}"]  # fmt: skip
        cells.append([
            CellView(r.label, strong=True),
            CellView(f"RTT {r.wire}\nmkdir+rmdir {_ms(r.round_trip_ms)}\n1st read / again\n{r.reads}"),
            verdict_cell(r.performance, [Line(t) for t in r.perf_text]),
            verdict_cell(r.consistency, [Line(t) for t in consistency]),
            verdict_cell(r.durability, [Line(r.at_fsync)]),
            CellView(r.gets),
        ])  # fmt: skip
    return TableView("cloud-pick-two", TITLE, headers, cells, numeric_from=1_000)


def screen(report: Report, options: Options) -> list[Block]:
    rows = cloud_rows(report)
    if not rows:
        return []
    blocks: list[Block] = [Paragraph(""), Table(terminal_table(rows), RichLayout(show_lines=True)),
                           Paragraph(LEGEND, "legend"), Items.of(notes(report), "note")]  # fmt: skip
    caps = capability_table(rows)
    if caps is not None:
        blocks += [Paragraph(""), Table(caps)]
    for view in percentile_tables(report):
        blocks += [Paragraph(""), Table(view)]
    return blocks


def document(report: Report, options: Options) -> Chapter | None:
    rows = cloud_rows(report)
    if not rows:
        return None
    view = table(rows)
    blocks: list[Block] = [Paragraph(view.caption, "caption"), Table(view), Paragraph(LEGEND, "legend"),
                           Items.of(notes(report), "note")]  # fmt: skip
    caps = capability_table(rows)
    if caps is not None:
        blocks += [Heading(caps.heading), Table(caps)]
    return Chapter("cloud-pick-two", TITLE, tuple(blocks))


def records(report: Report) -> list[dict[str, Any]]:
    return [
        {
            "target": r.label,
            "mode": r.mode,
            "rtt_ms": r.rtt_ms,
            "bandwidth_kbps": r.bandwidth_kbps,
            "round_trip_ms": r.round_trip_ms,
            "first_read_ms": r.first_read_ms,
            "reread_ms": r.reread_ms,
            "performance": r.performance,
            "performance_measures": list(r.perf_text),
            "at_close": r.at_close,
            "write_to_remote": r.to_remote,
            "remote_to_mount": r.from_remote,
            "remote_change": r.remote_change,
            "consistency": r.consistency,
            "at_fsync": r.at_fsync,
            "durability": r.durability,
            "gets": r.gets,
            "capabilities": dict(r.capabilities),
        }
        for r in cloud_rows(report)
    ]


def exports(report: Report) -> list[Export]:
    found = records(report)
    if not found:
        return []
    note = "cloudlab: performance, consistency with the remote and durability at fsync per cache mode and RTT"
    return [
        Export(
            "cloud_pick_two",
            "-cloudpick",
            note,
            found,
            records_csv(found, [k for k in found[0] if k != "capabilities"]),
        )
    ]


charts = nothing
page_charts = nothing  # the page draws no chart of its own here
