""" "Pick two", measured: performance, coherence and concurrency of each lab mount, side by side.

Study S3 summed up 9p's cache modes as "performance, reliability, concurrency: pick two".
A lab run made with `mountbench lab --probe` holds what it takes to measure that instead
of quoting it, per mount (and cache mode):

- performance: sequential write at the mount's best block size (the optimum of a block-size
  sweep of write bandwidth, such as the s3 preset's) and the time to extract a source tree
  (else to copy one with rsync); each judged against the fastest mount of the run;
- coherence: the worst delay before a change made on one side of the VM boundary showed
  on the other (both ways, five kinds of change), and what a reader got right after the
  other side replaced a file (stale, or torn: data loss);
- concurrency: whether flock and fcntl locks held on one side blocked a locker on the other.

Each column gets a verdict (good, fair, poor; data loss; not shared: a virtual disk or the
guest's own RAM has no second view; not measured). The section also carries the probe's
own tables (what each mount supports, and every coherence check), rendered by probe.render.

Pure: a content.Report in, records and text out. This module is the report's "pick two"
section in every format: terminal, Markdown, HTML, CSV and JSON, and the chart (mounts
down, performance / coherence / concurrency across, each cell coloured by its verdict in
the Okabe-Ito palette and saying its mark and word, so it reads in black and white).
The tree measure is the workload whose kind describes it as TREE_ROLES says
(model.Description.role).
"""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any, Literal

from markupsafe import Markup
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mountbench import model
from mountbench.analysis.summary import Cell, Row
from mountbench.probe import model as probe_model
from mountbench.probe import render as probe_render
from mountbench.report.chartkeys import Chart
from mountbench.report.content import Report, Sweep, all_workloads
from mountbench.report.sections.base import Export, Options
from mountbench.report.tables import md_table, md_text
from mountbench.units import format_rate, format_seconds

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Verdict = Literal["good", "fair", "poor", "data loss", "not shared", "not measured"]
MARK: dict[str, str] = {
    "good": "✓",
    "fair": "⚠",
    "poor": "✗",
    "data loss": "‼",
    "not shared": "–",
    "not measured": "?",
}
STYLE: dict[str, str] = {
    "good": "green",
    "fair": "yellow",
    "poor": "red",
    "data loss": "bold white on red",
    "not shared": "dim",
    "not measured": "magenta",
}
RANK: dict[str, int] = {"data loss": 0, "poor": 1, "fair": 2, "good": 3}
PROPERTIES = ("performance", "coherence", "concurrency")
GOOD_WITHIN = 2.0  # performance: within this factor of the fastest mount is good
FAIR_WITHIN = 10.0  # ... within this factor fair; further off poor
PROMPT_MS = probe_render.PROMPT_MS  # coherence: every change shown within this is good
TO_GUEST, TO_HOST = "host → guest", "guest → host"
TREE_ROLES = ("tree copy", "tree sync")  # the tree measure (Description.role), in order of preference
KEY = "pick-two"  # the chart's key


@dataclass(frozen=True)
class Measured:
    """One measure of one mount: what it says, its verdict, and its number for CSV/JSON."""

    text: str
    verdict: Verdict
    value: float | None = None
    unit: str = ""
    notes: tuple[int, ...] = ()  # the report's note numbers of the caveats on the number

    @property
    def marked(self) -> str:
        return f"{MARK[self.verdict]} {self.text}"


@dataclass(frozen=True)
class PickTwoRow:
    """One mount: its measures, a verdict per property, and which properties it has."""

    mount: str  # the report's column label
    shared: bool
    write: Measured
    tree: Measured
    visibility: Measured
    stale: Measured
    locks: Measured
    performance: Verdict
    coherence: Verdict
    concurrency: Verdict

    def measures(self, prop: str) -> tuple[Measured, ...]:
        """What a property is judged on."""
        return {"performance": (self.write, self.tree), "coherence": (self.visibility, self.stale)}.get(
            prop, (self.locks,)
        )

    def verdict(self, prop: str) -> Verdict:
        return {"performance": self.performance, "coherence": self.coherence, "concurrency": self.concurrency}[prop]

    @property
    def gets(self) -> str:
        """'performance + coherence', 'performance (not shared)', or 'none of them'."""
        good = [p for p in PROPERTIES if self.verdict(p) == "good"]
        text = " + ".join(good) if good else "none of the three"
        return text + ("" if self.shared else " (not shared with the host)")


@dataclass(frozen=True)
class PickTwo:
    rows: tuple[PickTwoRow, ...]
    write_title: str  # what the write column was read from ("" when no sweep)
    tree_title: str
    repeat: int
    timeout_s: float
    notes: tuple[str, ...]  # what the verdicts stand on, and what limits them
    probes: tuple[probe_model.LabProbe, ...]  # the probe results the section also shows


# --- the measures --------------------------------------------------------------------------------


def lab_probes(report: Report) -> list[tuple[model.RunData, probe_model.LabProbe]]:
    """The runs made with `lab --probe`, with what their probe measured."""
    found = []
    for run in report.runs:
        lab = run.config.lab
        if isinstance(lab, model.QemuLabFacts) and lab.probe:
            found.append((run, probe_model.LabProbe.from_dict(lab.probe)))
    return found


def pick_two(report: Report) -> PickTwo | None:
    """The pick-two table of the report's lab runs made with --probe (None: there are none)."""
    probed = lab_probes(report)
    if not probed:
        return None
    mounts: dict[str, probe_model.MountProbe] = {}
    for run, probe in probed:
        for mount in probe.mounts:
            column = _column_of(report, run.id, mount.label)
            if column is not None:
                mounts[column] = mount  # a later run's probe of the same column wins
    sweep = write_sweep(report.sweeps)
    tree = tree_row(report)
    write = _write_measures(report, sweep)
    trees = _tree_measures(report, tree)
    rows = []
    for label in report.summary.targets:
        mount = mounts.get(label)
        if mount is None:
            continue
        w, t = write.get(label, NOT_MEASURED), trees.get(label, NOT_MEASURED)
        if mount.shared:
            ways = [(TO_GUEST, mount.to_guest), (TO_HOST, mount.to_host)]
            visibility, stale, locks = _visibility(ways), _stale(ways), _locks(ways)
        else:
            visibility = stale = locks = Measured("not shared with the host", "not shared")
        rows.append(
            PickTwoRow(
                mount=label,
                shared=mount.shared,
                write=w,
                tree=t,
                visibility=visibility,
                stale=stale,
                locks=locks,
                performance=_worst(w.verdict, t.verdict),
                coherence=_worst(visibility.verdict, stale.verdict),
                concurrency=locks.verdict,
            )
        )
    last = probed[-1][1]
    return PickTwo(
        rows=tuple(rows),
        write_title=sweep.title if sweep else "",
        tree_title=tree[0].title if tree else "",
        repeat=last.repeat,
        timeout_s=last.timeout_s,
        notes=tuple(_notes(report, probed, sweep, tree)),
        probes=tuple(p for _, p in probed),
    )


NOT_MEASURED = Measured("not measured", "not measured")


def _column_of(report: Report, run_id: str, label: str) -> str | None:
    for column in report.columns:
        if column.original == label and run_id in column.run_ids:
            return column.label
    return None


def write_sweep(sweeps: Sequence[Sweep]) -> Sweep | None:
    """The block-size sweep of write bandwidth to read each mount's best write from: one whose
    numbers say what reached the storage (no page-cache caveat, as the s3 preset's end_fsync
    points) before one that measured the page cache (its buffered points, as S3's dd did)."""
    candidates = [s for s in sweeps if s.option == "bs" and s.metric.name == "write.bw"]
    if not candidates:
        return None

    def cached(sweep: Sweep) -> bool:
        return any(
            c.code == model.PAGE_CACHE for row in sweep.rows for cell in row.cells.values() for c in cell.caveats
        )

    return next((s for s in candidates if not cached(s)), candidates[0])


def tree_row(report: Report) -> tuple[Row, str] | None:
    """The tree workload's wall-time row: extracting a tree, else syncing one with rsync."""
    roles = {w.name: w.description.role for w in all_workloads(report)}
    for role in TREE_ROLES:
        for row in report.summary.rows:
            if roles.get(row.workload) == role and row.metric.name == "wall":
                return row, row.workload
    return None


def _ratio_verdict(factor: float) -> Verdict:
    """How far from the fastest mount (a factor ≥ 1)."""
    if factor <= GOOD_WITHIN:
        return "good"
    if factor <= FAIR_WITHIN:
        return "fair"
    return "poor"


def _factor_text(factor: float) -> str:
    return "the fastest" if factor <= 1.0 else f"{factor:.3g}× slower than the fastest"


def _write_measures(report: Report, sweep: Sweep | None) -> dict[str, Measured]:
    if sweep is None:
        return {}
    best: dict[str, tuple[float, str, Cell]] = {}
    for label in report.summary.targets:
        optimum = sweep.optima.get(label)
        if optimum is None:
            continue
        cell = sweep.rows[optimum.peak].cells[label]
        if cell.summary is not None:
            best[label] = (cell.summary.median, sweep.values[optimum.peak], cell)
    if not best:
        return {}
    fastest = max(value for value, _, _ in best.values())
    out = {}
    for label, (value, bs, cell) in best.items():
        factor = fastest / value if value > 0 else float("inf")
        out[label] = Measured(
            f"{format_rate(value)} at bs={bs} ({_factor_text(factor)})",
            _ratio_verdict(factor),
            value,
            "B/s",
            report.measurement_marks(cell),
        )
    return out


def _tree_measures(report: Report, tree: tuple[Row, str] | None) -> dict[str, Measured]:
    if tree is None:
        return {}
    row, _name = tree
    times = {label: cell for label, cell in row.cells.items() if cell.summary is not None}
    if not times:
        return {}
    fastest = min(cell.summary.median for cell in times.values() if cell.summary)  # type: ignore[union-attr]
    out = {}
    for label, cell in times.items():
        assert cell.summary is not None
        value = cell.summary.median
        factor = value / fastest if fastest > 0 else 1.0
        out[label] = Measured(
            f"{format_seconds(value)} ({_factor_text(factor)})",
            _ratio_verdict(factor),
            value,
            "s",
            report.measurement_marks(cell),
        )
    return out


def _worst(*verdicts: Verdict) -> Verdict:
    measured = [v for v in verdicts if v in RANK]
    if not measured:
        return "not shared" if "not shared" in verdicts else "not measured"
    return min(measured, key=lambda v: RANK[v])


Ways = Sequence[tuple[str, probe_model.CoherenceResult | None]]


def _visibility(ways: Ways) -> Measured:
    """The worst delay of any change, either way; a change never seen is the worst there is."""
    unseen: dict[str, list[str]] = {}  # operation -> the ways it did not show
    worst: tuple[float, str, str, float | None] | None = None  # (ms, operation, way, resolution)
    measured = False
    for way, result in ways:
        if result is None:
            continue
        for v in result.visibility:
            s = v.summary
            if s.total == 0:
                continue
            measured = True
            if s.seen < s.total:
                unseen.setdefault(v.operation, []).append(way)
            elif s.max_ms is not None and (worst is None or s.max_ms > worst[0]):
                worst = (s.max_ms, v.operation, way, result.clock_resolution_ms)
    if not measured:
        return NOT_MEASURED
    timeout = max(r.timeout_s for _, r in ways if r is not None)
    if unseen:
        return Measured(f"not seen within {timeout:g} s: {_by_ways(unseen, len(ways))}", "poor", None, "ms")
    assert worst is not None
    ms, operation, way, resolution = worst
    shown = (
        f"≤ {probe_render.format_ms(ms + resolution)}"
        if resolution and ms <= resolution
        else probe_render.format_ms(ms)
    )
    return Measured(
        f"every change shown; slowest: {operation} {way}, {shown}",
        "good" if ms <= PROMPT_MS else "fair",
        ms,
        "ms",
    )


def _by_ways(found: Mapping[str, Sequence[str]], ways: int) -> str:
    """'append, rename both ways; create guest → host': what happened, grouped by where."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for what, where in found.items():
        groups.setdefault(tuple(dict.fromkeys(where)), []).append(what)
    parts = []
    for where, what in groups.items():
        place = "both ways" if len(where) == ways == 2 else ", ".join(where)
        parts.append(f"{', '.join(what)} {place}")
    return "; ".join(parts)


def _stale(ways: Ways) -> Measured:
    """What a reader got right after the other side replaced a file, both ways, both modes."""
    counts: dict[str, int] = {}
    where: dict[str, list[str]] = {}
    for way, result in ways:
        if result is None:
            continue
        for s in result.stale_reads:
            for outcome, n in s.counts().items():
                counts[outcome] = counts.get(outcome, 0) + n
                where.setdefault(outcome, []).append(way)
    total = sum(counts.values())
    if total == 0:
        return NOT_MEASURED

    def said(*outcomes: str) -> str:
        parts = [f"{o} {counts[o]}/{total}" for o in outcomes if counts.get(o)]
        places = list(dict.fromkeys(p for o in outcomes for p in where.get(o, [])))
        place = "both ways" if len(places) == 2 else ", ".join(places)
        return ", ".join(parts) + f" ({place})"

    bad = counts.get("torn", 0) + counts.get("missing", 0)
    if bad:
        return Measured(f"torn or missing: {said('torn', 'missing')}", "data loss", float(bad), "reads")
    never = counts.get("unseen", 0) + counts.get("hung", 0)
    if never:
        return Measured(f"the file never showed: {said('unseen', 'hung')}", "poor", float(never), "reads")
    if counts.get("stale"):
        return Measured(f"stale: {said('stale')}", "fair", float(counts["stale"]), "reads")
    return Measured(f"fresh {counts.get('fresh', 0)}/{total}", "good", 0.0, "reads")


def _locks(ways: Ways) -> Measured:
    """Whether each lock kind held on one side blocked a locker on the other, per way."""
    blocking: dict[str, list[str]] = {}
    kinds: list[str] = []
    measured = unknown = 0
    for way, result in ways:
        if result is None:
            continue
        for lk in result.locks:
            if lk.kind not in kinds:
                kinds.append(lk.kind)
            known = [b for b in lk.blocked if b is not None]
            unknown += len(lk.blocked) - len(known)
            if not known:
                continue
            measured += 1
            if all(known):
                blocking.setdefault(lk.kind, []).append(way)
    if not measured:
        return NOT_MEASURED
    ways_measured = sum(1 for _, r in ways if r is not None)
    honoured = sum(len(w) for w in blocking.values())
    if honoured == measured and not unknown and measured == len(kinds) * ways_measured:
        both = "both ways" if ways_measured == 2 else "one way measured"
        return Measured(f"{' and '.join(kinds)} held on one side block the other, {both}", "good", float(honoured))
    if honoured == 0:
        return Measured(f"neither {' nor '.join(kinds)} held on one side blocks the other", "poor", 0.0)
    parts = [f"{kind}: {', '.join(blocking[kind]) if kind in blocking else 'no'}" for kind in kinds]
    extra = f"; {unknown} attempt(s) failed" if unknown else ""
    return Measured(f"only some block: {'; '.join(parts)}{extra}", "fair", float(honoured))


def _notes(
    report: Report,
    probed: Sequence[tuple[model.RunData, probe_model.LabProbe]],
    sweep: Sweep | None,
    tree: tuple[Row, str] | None,
) -> list[str]:
    lines = [
        f"Performance: {sweep.title + ', each mount at its best block size' if sweep else 'no write sweep'}; "
        f"{tree[0].title + ' (wall time)' if tree else 'no tree workload'}; each against the fastest mount of this "
        f"run: good within {GOOD_WITHIN:g}×, fair within {FAIR_WITHIN:g}×, else poor; the column's verdict is the "
        "worse of the two.",
        f"Coherence: both ways across the VM boundary (host → guest, guest → host), five kinds of change observed "
        f"with stat(): good when every change showed within {PROMPT_MS:g} ms, fair when all showed but some later "
        "or a reader got the old version right after a replace, poor when a change did not show within the timeout, "
        "data loss when a reader got a torn or missing file.",
        "Concurrency: flock and fcntl locks held on one side against a second locker on the other, both ways.",
    ]
    if sweep is None:
        lines.append(
            "No block-size sweep of write bandwidth in these runs: run with --preset s3 (or --sweep bs=...) "
            "for the write column."
        )
    if tree is None:
        lines.append("No tree workload in these runs: add --preset tree --only extract for the tree column.")
    for run, probe in probed:
        lab = run.config.lab
        if isinstance(lab, model.QemuLabFacts) and lab.emulated:
            lines.append(
                f"Run {run.id}: the guest was emulated (TCG), so its side of every coherence check ran far slower "
                "than on real hardware: delays are upper bounds of a KVM guest's; what never showed within the "
                "timeout, and whether locks block, do not depend on speed."
            )
        lines += [f"Run {run.id}: {error}" for error in probe.errors]
        lines += [f"Run {run.id} · {m.label}: {error}" for m in probe.mounts for error in m.errors]
    return lines


# --- records: CSV and JSON -----------------------------------------------------------------------

CSV_COLUMNS = ("mount", "property", "property_verdict", "measure", "verdict", "text", "value", "unit", "notes")
_MEASURES = (
    ("performance", "write", "sequential write at the best block size"),
    ("performance", "tree", "tree"),
    ("coherence", "visibility", "worst visibility delay"),
    ("coherence", "stale", "reads right after a replace"),
    ("concurrency", "locks", "locks across the views"),
)


def exports(report: Report) -> list[Export]:
    if pick_two(report) is None:
        return []
    note = "pick two: one row per mount and measure, with its verdict"
    return [Export("pick_two", "-picktwo", note, records(report), to_csv(report))]


def records(report: Report) -> list[dict[str, Any]]:
    """One record per mount and measure (JSON: `report --format json` adds them as pick_two)."""
    found = pick_two(report)
    if found is None:
        return []
    out = []
    for row in found.rows:
        for prop, attr, _title in _MEASURES:
            measured: Measured = getattr(row, attr)
            out.append(
                {
                    "mount": row.mount,
                    "property": prop,
                    "property_verdict": row.verdict(prop),
                    "measure": attr,
                    "verdict": measured.verdict,
                    "text": measured.text,
                    "value": measured.value,
                    "unit": measured.unit,
                    "notes": "; ".join(report.notes[n - 1] for n in measured.notes),
                }
            )
    return out


def to_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records(report))
    return buffer.getvalue()


# --- terminal ---------------------------------------------------------------------------------------

TITLE = "Pick two, measured: performance, coherence, concurrency"
LEGEND = "✓ good · ⚠ fair · ✗ poor · ‼ data loss · – not shared with the host · ? not measured"


def _marks(measured: Measured) -> str:
    """' [1,2]': the report's notes on the number ('' without)."""
    return f" [{','.join(map(str, measured.notes))}]" if measured.notes else ""


def _lines(*measures: Measured, marks: bool = True) -> list[str]:
    return [m.marked + (_marks(m) if marks else "") for m in measures]


def terminal(report: Report, options: Options) -> list:
    """The pick-two table, its notes, then the probe's own tables (nothing without lab --probe)."""
    found = pick_two(report)
    if found is None:
        return []
    table = Table(title=TITLE, show_lines=True, header_style="bold", title_justify="left")
    table.add_column("mount", style="bold")
    for prop in PROPERTIES:
        table.add_column(prop)
    table.add_column("gets")
    for row in found.rows:
        cells: list[RenderableType] = [row.mount]
        for prop in PROPERTIES:
            measures, verdict = row.measures(prop), row.verdict(prop)
            text = Text(f"{MARK[verdict]} {verdict}", style=STYLE[verdict])
            for line in _lines(*measures, marks=False):
                text.append("\n" + line, style="dim" if verdict != "data loss" else "bold red")
            cells.append(text)
        cells.append(row.gets)
        table.add_row(*cells)
    parts: list[RenderableType] = [Text(""), table, Text(LEGEND, style="dim")]
    parts += [Text(line, style="dim") for line in found.notes]
    parts += _caveat_lines(report, found)
    for probe in found.probes:
        parts += probe_render.render_document_terminal(probe.as_report())
    return [Group(*parts)]


def _caveat_lines(report: Report, found: PickTwo) -> list[Text]:
    """How the performance numbers were measured, spelled out under the table: 'caveat (on a, b)'."""
    on: dict[int, list[str]] = {}
    for row in found.rows:
        for n in (*row.write.notes, *row.tree.notes):
            if row.mount not in on.setdefault(n, []):
                on[n].append(row.mount)
    return [Text(f"! {report.notes[n - 1]} (on {', '.join(on[n])})", style="yellow") for n in sorted(on)]


# --- Markdown -------------------------------------------------------------------------------------


def markdown(report: Report, charts: Mapping[str, str], options: Options) -> str:
    """The section: heading, table, chart, notes, then the probe's tables ('' without --probe)."""
    found = pick_two(report)
    if found is None:
        return ""
    headers = ["mount", *PROPERTIES, "gets"]
    rows = []
    for row in found.rows:
        cells = [md_text(row.mount)]
        for prop in PROPERTIES:
            measures, verdict = row.measures(prop), row.verdict(prop)
            head = f"**{MARK[verdict]} {verdict}**"
            cells.append("<br>".join([head, *(md_text(m.marked) + _marks(m) for m in measures)]))
        cells.append(md_text(row.gets))
        rows.append(cells)
    parts = [f"## {md_text(TITLE)}", md_text(_intro(found)), md_table(headers, rows)]
    if KEY in charts:
        parts.append(f"![{md_text(TITLE)}]({charts[KEY]})")
    parts.append(f"_{md_text(LEGEND)}_")
    parts += [md_text(line) for line in found.notes]
    for probe in found.probes:
        parts.append(f"### {md_text('What each mount supports, and coherence in detail (lab --probe)')}")
        parts.append(probe_render.render_document_markdown(probe.as_report()).rstrip())
    return "\n\n".join(parts)


def _intro(found: PickTwo) -> str:
    return (
        "Study S3's trade-off for VM shared folders, measured on this run's mounts: performance from the benchmark "
        f"run, coherence and concurrency from `lab --probe` ({found.repeat} repetitions, changes waited for up to "
        f"{found.timeout_s:g} s). A mount 'gets' the properties judged good."
    )


# --- HTML ---------------------------------------------------------------------------------------------

CSS = """
.pick-two td { vertical-align: top; }
.pick-two .v-good { color: #1a7f37; } .pick-two .v-fair { color: #9a6700; } .pick-two .v-poor { color: #cf222e; }
.pick-two .v-data-loss { background: #cf222e; color: #fff; font-weight: bold; }
.pick-two .v-not-shared { color: #6e7781; } .pick-two .v-not-measured { color: #8250df; }
.pick-two .measure { display: block; font-size: .9em; color: #444; }
"""


def html(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options) -> Markup:
    """The section as an HTML fragment ('' without --probe), its chart inline when drawn."""
    found = pick_two(report)
    if found is None:
        return Markup("")
    chart_svg = svgs[KEY][1] if KEY in svgs else None
    e = escape
    out = [f'<section class="pick-two" id="{KEY}"><style>{CSS}{probe_render.PROBE_CSS}</style>']
    out.append(f"<h2>{e(TITLE)}</h2><p>{e(_intro(found))}</p>")
    out.append("<table><thead><tr><th>mount</th>" + "".join(f"<th>{p}</th>" for p in PROPERTIES))
    out.append("<th>gets</th></tr></thead><tbody>")
    for row in found.rows:
        tds = []
        for prop in PROPERTIES:
            measures, verdict = row.measures(prop), row.verdict(prop)
            body = "".join(f'<span class="measure">{e(line)}</span>' for line in _lines(*measures))
            tds.append(f'<td class="v-{verdict.replace(" ", "-")}"><b>{MARK[verdict]} {e(verdict)}</b>{body}</td>')
        out.append(f'<tr><th scope="row">{e(row.mount)}</th>{"".join(tds)}<td>{e(row.gets)}</td></tr>')
    out.append("</tbody></table>")
    if chart_svg:
        out.append(f'<figure class="chart">{chart_svg}</figure>')
    out.append(f'<p class="legend">{e(LEGEND)}</p>')
    out.append('<ul class="notes">' + "".join(f"<li>{e(line)}</li>" for line in found.notes) + "</ul>")
    for probe in found.probes:
        report_ = probe.as_report()
        out.append("<h3>What each mount supports, and coherence in detail (lab --probe)</h3>")
        found_loss = probe_render.data_loss(report_)
        if found_loss:
            out.append(
                f'<div class="data-loss"><h4>‼ {e(probe_render.DATA_LOSS_TITLE)}</h4><ul>'
                + "".join(f"<li>{e(line)}</li>" for line in found_loss)
                + "</ul></div>"
            )
        if report_.targets:
            out.append(probe_render.render_html_fragment(report_.targets, reference=report_.reference))
        if report_.coherence:
            out.append(
                probe_render.render_coherence_html_fragment(report_.coherence, reference=report_.reference_coherence)
            )
    out.append("</section>")
    return Markup("\n".join(out))  # escaped above


# --- the chart ------------------------------------------------------------------------------------

FILL = {
    "good": "#009E73",
    "fair": "#E69F00",
    "poor": "#D55E00",
    "data loss": "#000000",
    "not shared": "#DDDDDD",
    "not measured": "#FFFFFF",
}
ON_COLOUR = ("good", "fair", "poor", "not measured")  # cells that keep their colour (a hatch) in dark mode
INK = {"good": "white", "fair": "black", "poor": "white", "data loss": "white", "not shared": "#333333"}


def charts(report: Report) -> list[Chart]:
    """The pick-two chart, when the report holds a lab run made with --probe."""
    found = pick_two(report)
    if found is None or not found.rows:
        return []
    return [Chart(KEY, "pick-two", TITLE, lambda: pick_two_figure(found))]


def _short(row: PickTwoRow, prop: str) -> str:
    """What a cell says under its verdict: the measures, shortened to fit."""
    measures = row.measures(prop)
    lines = [m.text.split(" (")[0] if prop == "performance" else m.text for m in measures if m.verdict != "not shared"]
    wrapped = [textwrap.shorten(line, 60, placeholder="…") for line in lines]
    return "\n".join(textwrap.fill(line, 30) for line in wrapped)


def pick_two_figure(found: PickTwo) -> Figure:
    import matplotlib.patches
    from matplotlib.figure import Figure

    from mountbench.report.chartkit import on_cell

    rows = found.rows
    width, height = 11.0, 1.2 + 1.15 * len(rows)
    figure = Figure(figsize=(width, height), layout="constrained")
    ax = figure.add_subplot()
    ax.set_xlim(0, len(PROPERTIES))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([i + 0.5 for i in range(len(PROPERTIES))], PROPERTIES, fontsize=10, fontweight="bold")
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [textwrap.fill(r.mount, 22) for r in rows], fontsize=9)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    for y, row in enumerate(rows):
        for x, prop in enumerate(PROPERTIES):
            verdict = row.verdict(prop)
            patch = matplotlib.patches.Rectangle(
                (x + 0.02, y + 0.04), 0.96, 0.92, facecolor=FILL[verdict], edgecolor="#888888", linewidth=0.6
            )
            if verdict == "not measured":
                patch.set_hatch("//")
            ax.add_patch(patch)
            ink = INK.get(verdict, "black")
            texts = [
                ax.text(x + 0.5, y + 0.28, f"{MARK[verdict]} {verdict}", ha="center", va="center", color=ink,
                        fontsize=10, fontweight="bold"),
                ax.text(x + 0.5, y + 0.66, _short(row, prop), ha="center", va="center", color=ink, fontsize=6.5),
            ]  # fmt: skip
            if verdict in ON_COLOUR:  # a grey cell turns dark in dark mode, and its ink light, with the page
                for text in texts:
                    on_cell(text)
    figure.suptitle(TITLE, fontsize=11, fontweight="bold")
    figure.supxlabel(
        textwrap.fill(
            f"coherence and locks both ways across the VM boundary, {found.repeat}× each, changes waited for up to "
            f"{found.timeout_s:g} s; performance against the fastest mount of the run. "
            + (f"Write: {found.write_title}. " if found.write_title else "")
            + (f"Tree: {found.tree_title}." if found.tree_title else ""),
            int(width * 15),
        ),
        fontsize=7,
        color="#333333",
    )
    return figure
