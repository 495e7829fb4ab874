"""Pure rendering of probe and coherence results: rich renderables, Markdown, HTML.

Probe results are a matrix: capabilities down, targets across, then (when measured) a
reference column: the same probes on a local directory. Coherence results: checks down,
view pairs (A → B) across, and the local reference (the same checks with A and B the
same local directory). Every output of a whole probe (:func:`render_document_terminal`,
``_markdown``, ``_html``, :func:`document_json`) leads with the findings that lose or
corrupt data. Every function is a pure function of the records it is given.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal, TypeVar

from rich.console import RenderableType
from rich.table import Table as RichTable

from mountbench.blocks.parts import Block, Heading, Item, Items, Paragraph, Table
from mountbench.blocks.table import CellView, Column, Line, RichLayout, TableView
from mountbench.blocks.to_html import blocks_html
from mountbench.blocks.to_markdown import blocks_markdown
from mountbench.blocks.to_terminal import renderables, rich_table
from mountbench.host.targets import distinct_labels
from mountbench.probe.tools import summary_line, tool_notes, tool_verdicts
from mountbench.probefacts import (
    DATA_LOSS,
    DIFFERS,
    HUNG,
    NEEDS_ROOT,
    NO,
    SKIPPED,
    YES,
    CoherenceResult,
    DelaySummary,
    InotifyResult,
    LockResult,
    ProbeReport,
    ProbeResult,
    StaleReadResult,
    TargetProbe,
    VisibilityResult,
)
from mountbench.units import format_bytes, format_seconds

SYMBOL = {YES: "✓", NO: "✗", DIFFERS: "≠", HUNG: "hung", NEEDS_ROOT: "needs root", SKIPPED: "–"}
STYLE = {
    YES: "green",
    NO: "red",
    DIFFERS: "yellow",
    HUNG: "magenta",
    NEEDS_ROOT: "dim",
    SKIPPED: "dim",
}
DATA_LOSS_STYLE = "bold white on red"
REPORTED_MARK = "†"
LEGEND = (
    "✓ works as on a local Linux filesystem · ✗ the capability's own call refused (errno) · "
    "≠ works differently, or a helper step failed (see notes) · ‼ data loss: loses or corrupts data · "
    f"hung: no answer within the timeout · needs root · – not attempted · {REPORTED_MARK} a figure "
    "the mount reports about itself, not measured (statfs: the filesystem's total size, not what is free; "
    "'mountbench doctor' and run show the free space)"
)
DATA_LOSS_SYMBOL = "‼"  # never ≠ (works differently): losing data is another thing
# Capabilities whose value is part of the answer (compared by --diff); other values
# (fsync times, sizes) are measurements that always differ a little.
VALUE_IS_ANSWER = frozenset({"max_name_length", "mtime_granularity"})
HEADER_WIDTH = 12  # a target column's header line at most: four targets and the reference fit 100 columns
REFERENCE_NAME = "local ref."

T = TypeVar("T", TargetProbe, CoherenceResult)


def _many(items: Sequence[T] | T) -> Sequence[T]:
    """Accept one record as well as a sequence of them."""
    if isinstance(items, TargetProbe | CoherenceResult):
        return [items]  # type: ignore[list-item]
    return items


# -- shared text helpers ----------------------------------------------------------------------


def format_value(result: ProbeResult) -> str:
    """A short human form of a result's value ("255 bytes", "2 s", "0.66 ms", "31.9 MiB†")."""
    v, unit = result.value, result.unit
    if v is None:
        return ""
    if unit == "ns" and isinstance(v, int | float):
        text = _duration_ns(int(v))
    elif unit == "ms" and isinstance(v, int | float):
        text = format_ms(float(v))
    elif unit == "bytes" and isinstance(v, int | float) and v >= 1 << 20:
        text = format_bytes(float(v))
    else:
        text = f"{v} {unit}" if unit else str(v)
    return text + (REPORTED_MARK if result.reported else "")


def _duration_ns(ns: int) -> str:
    for size, name in ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")):
        if ns >= size:
            return f"{ns / size:g} {name}"
    return f"{ns} ns"


def format_ms(ms: float) -> str:
    return format_seconds(ms / 1000)


def cell_text(result: ProbeResult) -> str:
    """The matrix cell for one result: symbol, then errno, value or "data loss"."""
    symbol = SYMBOL[result.verdict]
    if result.severity == DATA_LOSS:
        return f"{DATA_LOSS_SYMBOL} data loss"
    if result.verdict == NO:
        return f"{symbol} {result.errno}" if result.errno else symbol
    if result.verdict in (YES, DIFFERS):
        value = format_value(result)
        return f"{symbol} {value}" if value else symbol
    return symbol


def cell_style(result: ProbeResult) -> str:
    return DATA_LOSS_STYLE if result.severity == DATA_LOSS else STYLE[result.verdict]


def target_label(probe: TargetProbe) -> str:
    return f"{probe.path} ({probe.fs.fstype})" if probe.fs.fstype else probe.path


def behaves_locally(probes: Sequence[TargetProbe]) -> bool:
    """Every capability of every target worked as on a local Linux filesystem (all ✓)."""
    return bool(probes) and all(p.results and all(r.verdict == YES for r in p.results) for p in probes)


LIKE_LOCAL = "behaves like a local filesystem: every capability ✓"
TOOLS_ALL_WORK = "make, git, rsync -a and an editor's save-by-rename find all they rely on"


def summary_items(report: ProbeReport) -> list[Item]:
    """Under the data-loss line: per target, how many capabilities are as on a local filesystem
    (or that the mount is gone), whether make, git, rsync -a and an editor's save-by-rename
    work there, and under it, for each that does not, what breaks for it."""
    targets = [p for p in report.targets if not p.error]
    if not targets:
        return []
    if behaves_locally(targets):
        # named as a run names them, whole (issue 48: 'mnt-newcome… (ext4)'): a sentence has room
        labels = distinct_labels([PurePosixPath(p.path) for p in targets], [p.fs.fstype or "?" for p in targets])
        return [Item(f"{', '.join(labels)}: {LIKE_LOCAL}; {TOOLS_ALL_WORK}.")]
    return [Item(f"{target_label(p)}: {summary_line(p)}", tuple(tool_notes(p))) for p in targets]


def summary_lines(report: ProbeReport) -> list[str]:
    """The summary as lines, a tool's note indented under its target (``  · ``)."""
    return [line for item in summary_items(report) for line in (item.text, *(f"  · {n}" for n in item.under))]


def summary_json(report: ProbeReport) -> list[dict[str, Any]]:
    return [
        {"path": p.path, "line": summary_line(p), "gone": p.gone, "tools": [v.to_dict() for v in tool_verdicts(p)]}
        for p in report.targets
        if not p.error
    ]


def _fit(text: str, width: int = HEADER_WIDTH) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def short_names(paths: Sequence[str]) -> list[str]:
    """For each path the shortest end that tells it from the others ("share", "a/data"),
    at most HEADER_WIDTH characters: a longer one keeps its start, where the part that
    tells it apart is, and ends in "…"; if two still look alike, they are numbered."""
    parts = [PurePosixPath(p).parts or ("/",) for p in paths]

    def suffix(p: tuple[str, ...], k: int) -> str:
        return "/".join(p[-k:]).replace("//", "/") if len(p) > 1 else p[0]

    names = []
    for i, p in enumerate(parts):
        others = [q for j, q in enumerate(parts) if j != i]
        k = 1
        while k < len(p) and any(suffix(q, k) == suffix(p, k) for q in others):
            k += 1
        name = suffix(p, k)
        names.append(name if len(name) <= HEADER_WIDTH else name[: HEADER_WIDTH - 1] + "…")
    if len(set(names)) < len(names):
        names = [
            f"{i + 1} {n}"[: HEADER_WIDTH - 1] + "…" if len(n) + 2 > HEADER_WIDTH else f"{i + 1} {n}"
            for i, n in enumerate(names)
        ]
    return names


def _rows(probes: Sequence[TargetProbe]) -> list[tuple[str, str]]:
    """(capability id, title) in first-seen order over all targets."""
    seen: dict[str, str] = {}
    for p in probes:
        for r in p.results:
            seen.setdefault(r.capability, r.title)
    return list(seen.items())


def _lookup(probe: TargetProbe, capability: str) -> ProbeResult | None:
    for r in probe.results:
        if r.capability == capability:
            return r
    return None


def comparison_key(result: ProbeResult | None) -> tuple[object, ...]:
    """What --diff compares: the verdict, the severity, and the value where it is the answer."""
    if result is None:
        return ("absent",)
    value = result.value if result.capability in VALUE_IS_ANSWER else None
    return (result.verdict, result.severity, value)


def differing_capabilities(probes: Sequence[TargetProbe], reference: TargetProbe | None = None) -> set[str]:
    """Capabilities on which the targets (and the local reference, if given) disagree."""
    columns = [*probes, *([reference] if reference else [])]
    return {cap for cap, _title in _rows(columns) if len({comparison_key(_lookup(p, cap)) for p in columns}) > 1}


def notes(probes: Sequence[TargetProbe] | TargetProbe, reference: TargetProbe | None = None) -> list[str]:
    """One line per result that is not a plain yes (what was observed, which call failed),
    per leftover, and per scratch directory of a killed probe that was removed."""
    lines = []
    for p in [*_many(probes), *([reference] if reference else [])]:
        label = target_label(p) if p is not reference else f"{REFERENCE_NAME} {target_label(p)}"
        lines += [f"{label}: {line}" for line in p.swept]
        if p.error:
            lines.append(f"{label}: {p.error}")
        for r in p.results:
            if r.verdict in (NO, DIFFERS, HUNG) and r.detail:
                lines.append(f"{label} · {r.title}: {r.detail}")
        if p.cleanup != "removed":
            lines.append(f"{label}: scratch directory {p.cleanup}")
    return lines


# -- data loss first ----------------------------------------------------------------------------


def data_loss(report: ProbeReport) -> list[str]:
    """Every finding that loses or corrupts data, one line each (empty: none found)."""
    lines = []
    for p in [*report.targets, *([report.reference] if report.reference else [])]:
        label = target_label(p) if p is not report.reference else f"{REFERENCE_NAME} {target_label(p)}"
        lines += [f"{label} · {r.title}: {r.detail}" for r in p.results if r.severity == DATA_LOSS]
    pairs = [*report.coherence, *([report.reference_coherence] if report.reference_coherence else [])]
    for c in pairs:
        for s in c.stale_reads:
            counts = s.counts()
            bad = {k: counts[k] for k in ("torn", "missing") if counts.get(k)}
            if bad:
                n = len(s.outcomes)
                what = ", ".join(f"{k} {v}/{n}" for k, v in bad.items())
                seen = next((o for o, x in zip(s.observed, s.outcomes, strict=False) if x in bad), "")
                lines.append(
                    f"{pair_label(c)} · read through B right after A's {s.mode}: {what}"
                    + (f" (for example: {seen})" if seen else "")
                )
    return lines


NO_DATA_LOSS = "No data loss or corruption found."
DATA_LOSS_TITLE = "Data loss or corruption found"


# -- probe matrix -----------------------------------------------------------------------------


def _columns(probes: Sequence[TargetProbe], reference: TargetProbe | None) -> list[tuple[TargetProbe, str, str]]:
    """(probe, short name, fstype) per column; the reference last."""
    names = short_names([p.path for p in probes])
    cols = [(p, n, _fit(p.fs.fstype or "?")) for p, n in zip(probes, names, strict=True)]
    if reference is not None:
        cols.append((reference, REFERENCE_NAME, _fit(reference.fs.fstype or "?")))
    return cols


def _key_lines(columns: list[tuple[TargetProbe, str, str]], reference: TargetProbe | None) -> list[str]:
    lines = []
    for p, name, fs in columns:
        where = f"{p.path} ({p.fs.fstype or 'unknown filesystem'}"
        where += f" from {p.fs.source})" if p.fs.source else ")"
        if p is reference:
            where += ": the same probes on a local directory, for comparison"
        lines.append(f"{name} ({fs}) = {where}")
    return lines


def render_terminal(
    probes: Sequence[TargetProbe] | TargetProbe,
    *,
    details: bool = False,
    reference: TargetProbe | None = None,
    diff: bool = False,
    caption: bool = True,
) -> RichTable:
    """The capability matrix as a rich Table.

    Column headers are short names (a path's distinguishing end) over the filesystem
    type, so four targets and the reference fit 100 columns; the caption maps them to
    full paths, then holds the legend and the notes (what was observed for every ✗, ≠
    and hung); with ``details=True`` the detail text goes into the cells instead.
    ``diff`` keeps only the capabilities on which the columns disagree. With
    ``caption=False`` the table has none: :func:`matrix_caption` gives its lines, to
    print below it at the console's width rather than the table's.
    """
    probes = _many(probes)
    view = matrix_view(probes, reference=reference, diff=diff, details=details)
    view.caption = "\n".join(matrix_caption(probes, details=details, reference=reference, diff=diff))
    layout = DETAILED_LAYOUT if details else MATRIX_LAYOUT
    return rich_table(view, layout=dataclasses.replace(layout, caption=caption))


# the matrix on the terminal: the capability column takes what is left, the verdicts never wrap (with
# details, each verdict's detail under it: they wrap, a rule between rows)
MATRIX_LAYOUT = RichLayout(title_justify="center", label_style="bold", no_wrap=True,
                           columns=((0, Column(ratio=1, min_width=16)),))  # fmt: skip
DETAILED_LAYOUT = dataclasses.replace(MATRIX_LAYOUT, show_lines=True, no_wrap=False)
COHERENCE_LAYOUT = RichLayout(title_justify="center", label_style="bold")


def matrix_view(
    probes: Sequence[TargetProbe], *, reference: TargetProbe | None = None, diff: bool = False, details: bool = False
) -> TableView:
    """Capabilities down, targets across (then the reference): each cell's verdict in its colour, its
    detail as its tooltip (and, ``details``, on a line under it). The headers name each target whole
    (target_label); the terminal's header cells are the short name over the filesystem type."""
    columns = _columns(probes, reference)
    headers = ["capability", *(target_label(p) for p in probes)]
    if reference is not None:
        headers.append(f"{REFERENCE_NAME}: {target_label(reference)}")
    short = [CellView("capability")] + [
        CellView(f"{name}\n({fstype})", style="bold italic" if probe is reference else "bold")
        for probe, name, fstype in columns  # the reference in italics: 'a (ext4)', as run labels a target
    ]
    rows = [
        [CellView(title), *(_matrix_cell(_lookup(probe, cap), details) for probe, _name, _fs in columns)]
        for cap, title in _matrix_rows(probes, reference, diff)
    ]
    return TableView("", "mountbench probe", headers, rows, numeric_from=1_000, header_cells=short)


def _matrix_cell(result: ProbeResult | None, details: bool) -> CellView:
    if result is None:
        return CellView("", style="dim", classes="verdict-none")
    classes = "verdict-" + result.verdict.replace(" ", "-")
    lost = result.severity == DATA_LOSS
    under = [Line(result.detail, style="dim")] if details and result.detail and result.verdict != YES else []
    if lost:
        classes += " severity-data-loss"
    return CellView(cell_text(result), style=cell_style(result), classes=classes, notes=result.detail, strong=lost,
                    lines=under)  # fmt: skip


def _matrix_rows(probes: Sequence[TargetProbe], reference: TargetProbe | None, diff: bool) -> list[tuple[str, str]]:
    rows = _rows([*probes, *([reference] if reference else [])])
    if diff:
        keep = differing_capabilities(probes, reference)
        rows = [(cap, title) for cap, title in rows if cap in keep]
    return rows


def matrix_caption(
    probes: Sequence[TargetProbe] | TargetProbe,
    *,
    details: bool = False,
    reference: TargetProbe | None = None,
    diff: bool = False,
) -> list[str]:
    """What goes under the matrix: which column is which path, the legend, the notes."""
    probes = _many(probes)
    lines = [*_key_lines(_columns(probes, reference), reference), LEGEND]
    if diff:
        shown = len(_matrix_rows(probes, reference, diff))
        lines.append(f"--diff: only the {shown} capabilities on which the columns disagree")
    return lines + ([] if details else notes(probes, reference))


def matrix_blocks(
    probes: Sequence[TargetProbe], *, reference: TargetProbe | None = None, diff: bool = False
) -> list[Block]:
    """The capability matrix for a document: the table (targets named whole), the legend, the notes."""
    view = matrix_view(probes, reference=reference, diff=diff)
    blocks: list[Block] = [Table(view), Paragraph(LEGEND, "legend")]
    if reference is not None:
        blocks.append(Paragraph(f"{REFERENCE_NAME}: the same probes on a local directory, measured during the same "
                                "command.", "legend"))  # fmt: skip
    if diff:
        blocks.append(Paragraph(f"Only the {len(view.rows)} capabilities on which the columns disagree (--diff).",
                                "legend"))  # fmt: skip
    return [*blocks, Items.of(notes(probes, reference), "note")]


def render_markdown(
    probes: Sequence[TargetProbe] | TargetProbe, *, reference: TargetProbe | None = None, diff: bool = False
) -> str:
    """The capability matrix as a Markdown table, then the legend and the notes."""
    return blocks_markdown(matrix_blocks(_many(probes), reference=reference, diff=diff)) + "\n"


def render_html_fragment(
    probes: Sequence[TargetProbe] | TargetProbe, *, reference: TargetProbe | None = None, diff: bool = False
) -> str:
    """The capability matrix as an HTML fragment (a div with a table and notes; no <html>)."""
    blocks = matrix_blocks(_many(probes), reference=reference, diff=diff)
    return f'<div class="mountbench-probe">\n{blocks_html(blocks)}</div>\n'


# -- coherence --------------------------------------------------------------------------------

CoherenceSeverity = Literal["data loss", "bad", "warning", "ok", "unknown"]
SEVERITY_MARK: dict[str, str] = {DATA_LOSS: "‼", "bad": "✗", "warning": "⚠", "ok": "✓", "unknown": "?"}
SEVERITY_STYLE: dict[str, str] = {
    DATA_LOSS: DATA_LOSS_STYLE,
    "bad": "red",
    "warning": "yellow",
    "ok": "green",
    "unknown": "magenta",
}
PROMPT_MS = 100.0  # a change seen through B within this every time is "ok"


@dataclass(frozen=True)
class Cell:
    """One coherence cell: its text and how bad what it says is."""

    text: str
    severity: CoherenceSeverity

    @property
    def marked(self) -> str:
        """The text with its severity mark, for outputs without colour."""
        return f"{SEVERITY_MARK[self.severity]} {self.text}" if self.text else ""


def pair_label(result: CoherenceResult) -> str:
    return f"{result.view_a} → {result.view_b}"


def _timeout_text(timeout_s: float) -> str:
    return f"{timeout_s:g} s"


def delay_text(summary: DelaySummary, timeout_s: float, resolution_ms: float | None = None) -> str:
    """ "0.38 ms (0.30–0.45, 2/2)", "not within 2.5 s (0/2)", or a median with misses.

    ``resolution_ms``: A and B on two machines, whose clocks were matched to within it; delays
    no longer than that are shown as the bound they are known to: "≤ 7.52 ms"."""
    if summary.total == 0:
        return "not measured"
    if summary.seen == 0:
        return f"not within {_timeout_text(timeout_s)} (0/{summary.total})"
    assert summary.median_ms is not None and summary.min_ms is not None
    assert summary.max_ms is not None
    if resolution_ms is not None and summary.max_ms <= resolution_ms:
        text = f"≤ {format_ms(summary.max_ms + resolution_ms)}"
    else:
        text = format_ms(summary.median_ms)
    if summary.total > 1 and not text.startswith("≤"):
        text += f" ({format_ms(summary.min_ms)}–{format_ms(summary.max_ms)})"
    missed = summary.total - summary.seen
    if missed:
        text += f", {missed}/{summary.total} not within {_timeout_text(timeout_s)}"
    return text


def visibility_text(v: VisibilityResult, timeout_s: float, resolution_ms: float | None = None) -> str:
    text = delay_text(v.summary, timeout_s, resolution_ms)
    if v.hung:
        text += f", {v.hung} hung"
    return text


def visibility_severity(v: VisibilityResult) -> CoherenceSeverity:
    s = v.summary
    if s.total == 0 or (v.hung and s.seen == 0):
        return "unknown"
    if s.seen == 0:
        return "bad"
    if s.seen < s.total or v.hung or (s.max_ms or 0.0) > PROMPT_MS:
        return "warning"
    return "ok"


def stale_text(s: StaleReadResult, timeout_s: float) -> str:
    counts = s.counts()
    n = len(s.outcomes)
    parts = [f"{k} {c}/{n}" for k, c in counts.items()]
    text = ", ".join(parts)
    if counts.get("fresh", 0) != n:
        text += f"; fresh after {delay_text(s.summary, timeout_s)}"
    return text


def stale_severity(s: StaleReadResult) -> CoherenceSeverity:
    counts = s.counts()
    if counts.get("torn") or counts.get("missing"):
        return DATA_LOSS
    if counts.get("stale"):
        return "warning"
    if counts.get("hung") or counts.get("unseen") or not s.outcomes:
        return "unknown"
    return "ok"


def inotify_text(i: InotifyResult, timeout_s: float, resolution_ms: float | None = None) -> str:
    n = len(i.received)
    if i.error:
        return f"error: {i.error}"
    if not any(i.received):
        return f"no events within {_timeout_text(timeout_s)} (0/{n})"
    text = f"all events {i.complete}/{n}"
    if i.complete < n:
        got = sorted({k for r in i.received for k in r})
        text += f" (received: {', '.join(got)})"
    s = i.summary
    if s.median_ms is not None and s.max_ms is not None:
        if resolution_ms is not None and s.max_ms <= resolution_ms:
            text += f"; first within {format_ms(s.max_ms + resolution_ms)}"
        else:
            text += f"; first after {format_ms(s.median_ms)}"
    return text


def inotify_severity(i: InotifyResult) -> CoherenceSeverity:
    if i.error or not i.received:
        return "unknown"
    if not any(i.received):
        return "bad"
    return "ok" if i.complete == len(i.received) else "warning"


def lock_text(lk: LockResult) -> str:
    n = len(lk.blocked)
    blocked = sum(1 for b in lk.blocked if b)
    unknown = sum(1 for b in lk.blocked if b is None)
    text = "blocks" if blocked == n else "does not block" if blocked == 0 and not unknown else "mixed"
    text += f" ({blocked}/{n})"
    if unknown:
        text += f", {unknown} unknown"
    return text


def lock_severity(lk: LockResult) -> CoherenceSeverity:
    n = len(lk.blocked)
    blocked = sum(1 for b in lk.blocked if b)
    unknown = sum(1 for b in lk.blocked if b is None)
    if n == 0 or unknown == n:
        return "unknown"
    if blocked == n:
        return "ok"
    return "bad" if blocked == 0 and not unknown else "warning"


def _coherence_rows(results: Sequence[CoherenceResult]) -> list[tuple[str, list[Cell]]]:
    """(row title, one cell per result); rows in a fixed order."""
    rows: list[tuple[str, list[Cell]]] = []
    if not results:
        return rows
    empty = Cell("", "unknown")
    first = results[0]
    for v in first.visibility:
        cells = []
        for r in results:
            try:
                found = r.visibility_of(v.operation)
            except KeyError:
                cells.append(empty)
                continue
            text = visibility_text(found, r.timeout_s, r.clock_resolution_ms)
            cells.append(Cell(text, visibility_severity(found)))
        rows.append((f"{v.operation} seen through B after", cells))
    for s in first.stale_reads:
        cells = []
        for r in results:
            match = [x for x in r.stale_reads if x.mode == s.mode]
            cells.append(Cell(stale_text(match[0], r.timeout_s), stale_severity(match[0])) if match else empty)
        rows.append((f"read through B right after A's {s.mode}", cells))
    rows.append(
        (
            "inotify through B for changes through A",
            [
                Cell(inotify_text(r.inotify, r.timeout_s, r.clock_resolution_ms), inotify_severity(r.inotify))
                for r in results
            ],
        )
    )
    for lk in first.locks:
        cells = []
        for r in results:
            match = [x for x in r.locks if x.kind == lk.kind]
            cells.append(Cell(lock_text(match[0]), lock_severity(match[0])) if match else empty)
        rows.append((f"{lk.kind} lock held through A vs a second locker through B", cells))
    return rows


def _coherence_table(
    results: Sequence[CoherenceResult], reference: CoherenceResult | None, diff: bool
) -> list[tuple[str, list[Cell]]]:
    columns = [*results, *([reference] if reference else [])]
    rows = _coherence_rows(columns)
    if diff:
        rows = [(title, cells) for title, cells in rows if len({c.severity for c in cells}) > 1]
    return rows


def coherence_notes(results: Sequence[CoherenceResult], reference: CoherenceResult | None = None) -> list[str]:
    """Aborted measurements, scratch directories left behind, and per-check notes."""
    lines = []
    for r in [*results, *([reference] if reference else [])]:
        label = pair_label(r) if r is not reference else f"{REFERENCE_NAME} {pair_label(r)}"
        lines += [f"{label}: {line}" for line in r.swept]
        if r.error:
            lines.append(f"{label}: {r.error}")
        if r.cleanup != "removed":
            lines.append(f"{label}: scratch directory {r.cleanup}")
        for v in r.visibility:
            lines += [f"{label} · {v.operation}: {n}" for n in dict.fromkeys(v.notes)]
        for lk in r.locks:
            lines += [f"{label} · {lk.kind} lock: {n}" for n in dict.fromkeys(lk.notes)]
        if r.inotify.error:
            lines.append(f"{label} · inotify: {r.inotify.error}")
    return lines


COHERENCE_LEGEND = (
    "delays: median (min–max, seen/repetitions), polled with stat() through B; "
    "reads: fresh = new version, stale = old version, torn = size of one with data of the other; "
    f"‼ data loss (a reader got torn data or no file) · ✗ does not work across the views · "
    f"⚠ works late or not always (slower than {PROMPT_MS:g} ms, stale reads, some events missing) · "
    "✓ as on one local filesystem · ? not measured"
)
REFERENCE_COHERENCE = (
    f"{REFERENCE_NAME}: the same checks with A and B the same local directory, measured during the same command"
)


def _coherence_headers(results: Sequence[CoherenceResult], reference: CoherenceResult | None) -> list[str]:
    heads = [f"{pair_label(r)} (×{r.repeat}{_clocks_text(r)})" for r in results]
    if reference is not None:
        heads.append(f"{REFERENCE_NAME}: {reference.view_a} (×{reference.repeat})")
    return heads


def _clocks_text(result: CoherenceResult) -> str:
    """ ", clocks ±3.76 ms" when A and B were on two machines (see CoherenceResult)."""
    if result.clock_resolution_ms is None:
        return ""
    return f", clocks ±{format_ms(result.clock_resolution_ms)}"


TWO_CLOCKS = (
    "clocks ±: A and B were on two machines (the lab's host and guest, or two clients), whose clocks were matched "
    "over the channel to each to within that; a delay no longer than the match is shown as the bound it is known to (≤)"
)


def coherence_caption(results: Sequence[CoherenceResult], reference: CoherenceResult | None = None) -> list[str]:
    """What goes under the coherence table: the legend, the reference, the notes."""
    lines = [COHERENCE_LEGEND]
    if any(r.clock_resolution_ms is not None for r in results):
        lines.append(TWO_CLOCKS)
    if reference is not None:
        lines.append(f"{REFERENCE_COHERENCE} ({reference.view_a})")
    return lines + coherence_notes(results, reference)


def render_coherence_terminal(
    results: Sequence[CoherenceResult] | CoherenceResult,
    *,
    reference: CoherenceResult | None = None,
    diff: bool = False,
    caption: bool = True,
) -> RichTable:
    """Checks down, view pairs across (then the local reference), coloured by severity.
    ``caption=False``: none (see :func:`coherence_caption`)."""
    results = _many(results)
    view = coherence_view(results, reference=reference, diff=diff)
    view.caption = "\n".join(coherence_caption(results, reference))
    return rich_table(view, layout=dataclasses.replace(COHERENCE_LAYOUT, caption=caption))


def coherence_view(
    results: Sequence[CoherenceResult], *, reference: CoherenceResult | None = None, diff: bool = False
) -> TableView:
    """Checks down, view pairs across (then the local reference): each cell with its severity's mark,
    in its colour. The terminal's header cells add the timeout."""
    short = [CellView("check")]
    short += [CellView(f"{pair_label(r)}\n×{r.repeat}, timeout {_timeout_text(r.timeout_s)}{_clocks_text(r)}")
              for r in results]  # fmt: skip
    if reference is not None:
        short.append(CellView(f"{REFERENCE_NAME}\n×{reference.repeat}", style="bold italic"))
    rows = [
        [CellView(title), *(_coherence_cell(c) for c in cells)]
        for title, cells in _coherence_table(results, reference, diff)
    ]
    headers = ["check", *_coherence_headers(results, reference)]
    return TableView("", "mountbench coherence (A → B)", headers, rows, numeric_from=1_000, header_cells=short)


def _coherence_cell(cell: Cell) -> CellView:
    classes = f"severity-{cell.severity.replace(' ', '-')}"
    return CellView(
        cell.marked, style=SEVERITY_STYLE[cell.severity], classes=classes, strong=cell.severity == DATA_LOSS
    )


def coherence_blocks(
    results: Sequence[CoherenceResult], *, reference: CoherenceResult | None = None, diff: bool = False
) -> list[Block]:
    """The coherence table for a document: checks down, view pairs across, its legend and notes."""
    blocks: list[Block] = [Table(coherence_view(results, reference=reference, diff=diff)),
                           Paragraph(COHERENCE_LEGEND, "legend")]  # fmt: skip
    if any(r.clock_resolution_ms is not None for r in results):
        blocks.append(Paragraph(f"{TWO_CLOCKS}.", "legend"))
    if reference is not None:
        blocks.append(Paragraph(f"{REFERENCE_COHERENCE}.", "legend"))
    return [*blocks, Items.of(coherence_notes(results, reference), "note")]


def render_coherence_markdown(
    results: Sequence[CoherenceResult] | CoherenceResult,
    *,
    reference: CoherenceResult | None = None,
    diff: bool = False,
) -> str:
    """Checks down, view pairs across, as a Markdown table with severity marks, then the notes."""
    return blocks_markdown(coherence_blocks(_many(results), reference=reference, diff=diff)) + "\n"


def render_coherence_html_fragment(
    results: Sequence[CoherenceResult] | CoherenceResult,
    *,
    reference: CoherenceResult | None = None,
    diff: bool = False,
) -> str:
    """Checks down, view pairs across, as an HTML fragment (a div; no <html>)."""
    blocks = coherence_blocks(_many(results), reference=reference, diff=diff)
    return f'<div class="mountbench-coherence">\n{blocks_html(blocks)}</div>\n'


# -- a whole probe, data loss first -------------------------------------------------------------


def document_blocks(report: ProbeReport, *, diff: bool = False, level: int = 2) -> list[Block]:
    """A whole probe for a document: data loss first (its heading at ``level``), what each target
    supports, the matrix, then the coherence table."""
    found = data_loss(report)
    if found:
        blocks: list[Block] = [Heading(f"‼ {DATA_LOSS_TITLE}", level, "loss"), Items.of(found, "loss")]
    else:
        blocks = [Paragraph(NO_DATA_LOSS, "good")]
    said = summary_items(report)
    if said:
        blocks.append(Items(tuple(said), "good" if behaves_locally(report.targets) else "strong"))
    if report.targets:
        blocks += matrix_blocks(report.targets, reference=report.reference, diff=diff)
    if report.coherence:
        blocks += coherence_blocks(report.coherence, reference=report.reference_coherence, diff=diff)
    return blocks


def screen_blocks(report: ProbeReport, *, details: bool = False, diff: bool = False) -> list[Block]:
    """A whole probe on the terminal: data loss first, then the capability matrix (short column names,
    what they stand for under it, at the console's width) and the coherence table."""
    found = data_loss(report)
    blocks: list[Block] = [Paragraph(f"‼ {DATA_LOSS_TITLE}:", "loss"), Items.of(found, "loss")] if found else [
        Paragraph(NO_DATA_LOSS, "good")]  # fmt: skip
    said = summary_items(report)
    if said:
        blocks.append(Items(tuple(said), "good" if behaves_locally(report.targets) else "strong"))
    if report.targets:
        ref_probe = report.reference
        view = matrix_view(report.targets, reference=ref_probe, diff=diff, details=details)
        below = matrix_caption(report.targets, details=details, reference=ref_probe, diff=diff)
        blocks += [
            Table(view, MATRIX_LAYOUT if not details else DETAILED_LAYOUT),
            Paragraph("\n".join(below), "caption"),
        ]
    if report.coherence:
        ref = report.reference_coherence
        view = coherence_view(report.coherence, reference=ref, diff=diff)
        blocks += [
            Table(view, COHERENCE_LAYOUT),
            Paragraph("\n".join(coherence_caption(report.coherence, ref)), "caption"),
        ]
    return blocks


def render_document_terminal(report: ProbeReport, *, details: bool = False, diff: bool = False) -> list[RenderableType]:
    """Data loss first, then the capability matrix, then the coherence table."""
    return renderables(screen_blocks(report, details=details, diff=diff))


def render_document_markdown(report: ProbeReport, *, diff: bool = False) -> str:
    return blocks_markdown(document_blocks(report, diff=diff)) + "\n"


# the classes the probe's blocks carry: a verdict's colour, data loss (on a report's page too)
VERDICT_CSS = """
.verdict-yes, .severity-ok, p.good { color: #1a7f37; }
.verdict-no, .severity-bad { color: #cf222e; }
.verdict-differs, .severity-warning { color: #9a6700; }
.verdict-hung, .severity-unknown { color: #8250df; }
.verdict-needs-root, .verdict-skipped { color: #6e7781; }
.severity-data-loss { background: #cf222e; color: #fff; font-weight: bold; }
.loss { color: #cf222e; } ul.loss { border-left: 4px solid #cf222e; padding-left: 1.5rem; font-weight: bold; }
.legend, .notes { font-size: .9em; }
ul.strong > li { font-weight: bold; } ul.strong li li, ul.good li li { font-weight: normal; font-size: .9em; }
"""
# the probe's own page (`probe --format html`) around them
PROBE_CSS = (
    """
body { font-family: system-ui, sans-serif; margin: 1.5rem; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #8884; padding: .25rem .5rem; text-align: left; vertical-align: top; }"""
    + VERDICT_CSS
)


def render_document_html(report: ProbeReport, *, title: str, diff: bool = False) -> str:
    """A standalone page: data loss first, then the matrix and the coherence table."""
    body = blocks_html(document_blocks(report, diff=diff))
    return f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title><style>{PROBE_CSS}</style>{body}"


def document_json(report: ProbeReport, probe_id: str) -> dict[str, Any]:
    """The stored probe as JSON, the data-loss findings first."""
    return {"data_loss": data_loss(report), "id": probe_id, "summary": summary_json(report), **report.to_dict()}
