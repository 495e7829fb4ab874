"""Pure rendering of probe and coherence results: rich Table, Markdown, HTML fragment.

Probe results are a matrix: capabilities down, targets across. Coherence results:
checks down, view pairs (A → B) across. Every function is a pure function of the
records it is given (no I/O, no statistics beyond reading the records' summaries).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TypeVar

from rich.table import Table
from rich.text import Text

from mountbench.probe.model import (
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
LEGEND = (
    "✓ works as on a local Linux filesystem · ✗ refused (errno) · ≠ works, but differently "
    "(see notes) · hung: no answer within the timeout · needs root · – not attempted"
)


T = TypeVar("T", TargetProbe, CoherenceResult)


def _many(items: Sequence[T] | T) -> Sequence[T]:
    """Accept one record as well as a sequence of them."""
    if isinstance(items, TargetProbe | CoherenceResult):
        return [items]  # type: ignore[list-item]
    return items


# -- shared text helpers ----------------------------------------------------------------------


def format_value(result: ProbeResult) -> str:
    """A short human form of a result's measured value ("255 bytes", "1 s", "0.66 ms")."""
    v, unit = result.value, result.unit
    if v is None:
        return ""
    if unit == "ns" and isinstance(v, int | float):
        return _duration_ns(int(v))
    if unit == "ms" and isinstance(v, int | float):
        return format_ms(float(v))
    if unit == "bytes" and isinstance(v, int | float) and v >= 1 << 20:
        return format_bytes(float(v))
    return f"{v} {unit}" if unit else str(v)


def _duration_ns(ns: int) -> str:
    for size, name in ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")):
        if ns >= size:
            return f"{ns / size:g} {name}"
    return f"{ns} ns"


def format_ms(ms: float) -> str:
    return format_seconds(ms / 1000)


def cell_text(result: ProbeResult) -> str:
    """The matrix cell for one result: symbol, then errno or value."""
    symbol = SYMBOL[result.verdict]
    if result.verdict == NO:
        return f"{symbol} {result.errno}" if result.errno else symbol
    if result.verdict in (YES, DIFFERS):
        value = format_value(result)
        return f"{symbol} {value}" if value else symbol
    return symbol


def target_label(probe: TargetProbe) -> str:
    return f"{probe.path} ({probe.fs.fstype})" if probe.fs.fstype else probe.path


def _rows(probes: Sequence[TargetProbe] | TargetProbe) -> list[tuple[str, str]]:
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


def notes(probes: Sequence[TargetProbe] | TargetProbe) -> list[str]:
    """One line per result that is not a plain yes (what was observed), and per leftover."""
    lines = []
    for p in probes:
        label = target_label(p)
        lines += [f"{label}: {line}" for line in p.swept]
        if p.error:
            lines.append(f"{label}: {p.error}")
        for r in p.results:
            if r.verdict in (NO, DIFFERS, HUNG) and r.detail:
                lines.append(f"{label} · {r.title}: {r.detail}")
        if p.cleanup != "removed":
            lines.append(f"{label}: scratch directory {p.cleanup}")
    return lines


# -- probe matrix -----------------------------------------------------------------------------


def render_terminal(probes: Sequence[TargetProbe] | TargetProbe, *, details: bool = False) -> Table:
    """The capability matrix as a rich Table.

    The caption holds the legend and the notes (what was observed for every ✗, ≠ and
    hung); with ``details=True`` the detail text goes into the cells instead.
    """
    probes = _many(probes)
    caption = "\n".join([LEGEND] + ([] if details else notes(probes)))
    table = Table(title="mountbench probe", caption=caption, caption_justify="left", show_lines=details)
    table.add_column("capability", style="bold")
    for p in probes:
        table.add_column(target_label(p))
    for cap, title in _rows(probes):
        cells: list[Text | str] = [title]
        for p in probes:
            r = _lookup(p, cap)
            if r is None:
                cells.append(Text("", style="dim"))
                continue
            text = Text(cell_text(r), style=STYLE[r.verdict])
            if details and r.detail and r.verdict != YES:
                text.append(f"\n{r.detail}", style="dim")
            cells.append(text)
        table.add_row(*cells)
    return table


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(probes: Sequence[TargetProbe] | TargetProbe) -> str:
    """The capability matrix as a Markdown table, then the notes."""
    probes = _many(probes)
    head = ["capability", *(target_label(p) for p in probes)]
    lines = [
        "| " + " | ".join(_md_escape(h) for h in head) + " |",
        "|" + "---|" * len(head),
    ]
    for cap, title in _rows(probes):
        cells = [title]
        for p in probes:
            r = _lookup(p, cap)
            cells.append("" if r is None else cell_text(r))
        lines.append("| " + " | ".join(_md_escape(c) for c in cells) + " |")
    lines += ["", f"_{LEGEND}_"]
    found = notes(probes)
    if found:
        lines += ["", "Notes:", ""] + [f"- {_md_escape(n)}" for n in found]
    return "\n".join(lines) + "\n"


def render_html_fragment(probes: Sequence[TargetProbe] | TargetProbe) -> str:
    """The capability matrix as an HTML fragment (a div with a table and notes; no <html>)."""
    probes = _many(probes)
    e = html.escape
    out = ['<div class="mountbench-probe">', '<table class="mountbench-probe-matrix">']
    out.append(
        "<thead><tr><th>capability</th>" + "".join(f"<th>{e(target_label(p))}</th>" for p in probes) + "</tr></thead>"
    )
    out.append("<tbody>")
    for cap, title in _rows(probes):
        row = [f'<tr><th scope="row">{e(title)}</th>']
        for p in probes:
            r = _lookup(p, cap)
            if r is None:
                row.append('<td class="verdict-none"></td>')
                continue
            cls = "verdict-" + r.verdict.replace(" ", "-")
            row.append(f'<td class="{cls}" title="{e(r.detail)}">{e(cell_text(r))}</td>')
        row.append("</tr>")
        out.append("".join(row))
    out.append("</tbody></table>")
    out.append(f'<p class="legend">{e(LEGEND)}</p>')
    found = notes(probes)
    if found:
        out.append('<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in found) + "</ul>")
    out.append("</div>")
    return "\n".join(out) + "\n"


# -- coherence --------------------------------------------------------------------------------


def pair_label(result: CoherenceResult) -> str:
    return f"{result.view_a} → {result.view_b}"


def _timeout_text(timeout_s: float) -> str:
    return f"{timeout_s:g} s"


def delay_text(summary: DelaySummary, timeout_s: float) -> str:
    """ "0.38 ms (0.30–0.45, 2/2)", "not within 2.5 s (0/2)", or a median with misses."""
    if summary.seen == 0:
        return f"not within {_timeout_text(timeout_s)} (0/{summary.total})"
    assert summary.median_ms is not None and summary.min_ms is not None
    assert summary.max_ms is not None
    text = format_ms(summary.median_ms)
    if summary.total > 1:
        text += f" ({format_ms(summary.min_ms)}–{format_ms(summary.max_ms)})"
    missed = summary.total - summary.seen
    if missed:
        text += f", {missed}/{summary.total} not within {_timeout_text(timeout_s)}"
    return text


def visibility_text(v: VisibilityResult, timeout_s: float) -> str:
    text = delay_text(v.summary, timeout_s)
    if v.hung:
        text += f", {v.hung} hung"
    return text


def stale_text(s: StaleReadResult, timeout_s: float) -> str:
    counts = s.counts()
    n = len(s.outcomes)
    parts = [f"{k} {c}/{n}" for k, c in counts.items()]
    text = ", ".join(parts)
    if counts.get("fresh", 0) != n:
        text += f"; fresh after {delay_text(s.summary, timeout_s)}"
    return text


def inotify_text(i: InotifyResult, timeout_s: float) -> str:
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
    if s.median_ms is not None:
        text += f"; first after {format_ms(s.median_ms)}"
    return text


def lock_text(lk: LockResult) -> str:
    n = len(lk.blocked)
    blocked = sum(1 for b in lk.blocked if b)
    unknown = sum(1 for b in lk.blocked if b is None)
    text = "blocks" if blocked == n else "does not block" if blocked == 0 and not unknown else "mixed"
    text += f" ({blocked}/{n})"
    if unknown:
        text += f", {unknown} unknown"
    return text


def _coherence_rows(results: Sequence[CoherenceResult]) -> list[tuple[str, list[str]]]:
    """(row title, one cell per result); rows in a fixed order."""
    rows: list[tuple[str, list[str]]] = []
    if not results:
        return rows
    first = results[0]
    for v in first.visibility:
        cells = []
        for r in results:
            try:
                cells.append(visibility_text(r.visibility_of(v.operation), r.timeout_s))
            except KeyError:
                cells.append("")
        rows.append((f"{v.operation} seen through B after", cells))
    for s in first.stale_reads:
        cells = []
        for r in results:
            match = [x for x in r.stale_reads if x.mode == s.mode]
            cells.append(stale_text(match[0], r.timeout_s) if match else "")
        rows.append((f"read through B right after A's {s.mode}", cells))
    rows.append(("inotify through B for changes through A", [inotify_text(r.inotify, r.timeout_s) for r in results]))
    for lk in first.locks:
        cells = []
        for r in results:
            match = [x for x in r.locks if x.kind == lk.kind]
            cells.append(lock_text(match[0]) if match else "")
        rows.append((f"{lk.kind} lock held through A vs a second locker through B", cells))
    return rows


def coherence_notes(results: Sequence[CoherenceResult]) -> list[str]:
    """Aborted measurements, scratch directories left behind, and per-check notes."""
    lines = []
    for r in results:
        label = pair_label(r)
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
    "reads: fresh = new version, stale = old version, torn = size of one with data of the other"
)


def render_coherence_terminal(results: Sequence[CoherenceResult] | CoherenceResult) -> Table:
    """Checks down, view pairs across, as a rich Table (notes in the caption)."""
    results = _many(results)
    caption = "\n".join([COHERENCE_LEGEND, *coherence_notes(results)])
    table = Table(title="mountbench coherence (A → B)", caption=caption, caption_justify="left")
    table.add_column("check", style="bold")
    for r in results:
        table.add_column(f"{pair_label(r)}\n×{r.repeat}, timeout {_timeout_text(r.timeout_s)}")
    for title, cells in _coherence_rows(results):
        table.add_row(title, *cells)
    return table


def render_coherence_markdown(results: Sequence[CoherenceResult] | CoherenceResult) -> str:
    """Checks down, view pairs across, as a Markdown table, then the notes."""
    results = _many(results)
    head = ["check", *(f"{pair_label(r)} (×{r.repeat})" for r in results)]
    lines = [
        "| " + " | ".join(_md_escape(h) for h in head) + " |",
        "|" + "---|" * len(head),
    ]
    for title, cells in _coherence_rows(results):
        lines.append("| " + " | ".join(_md_escape(c) for c in [title, *cells]) + " |")
    lines += ["", f"_{COHERENCE_LEGEND}_"]
    found = coherence_notes(results)
    if found:
        lines += ["", "Notes:", ""] + [f"- {_md_escape(n)}" for n in found]
    return "\n".join(lines) + "\n"


def render_coherence_html_fragment(results: Sequence[CoherenceResult] | CoherenceResult) -> str:
    """Checks down, view pairs across, as an HTML fragment (a div; no <html>)."""
    results = _many(results)
    e = html.escape
    out = ['<div class="mountbench-coherence">', "<table>"]
    out.append(
        "<thead><tr><th>check</th>"
        + "".join(f"<th>{e(pair_label(r))} (×{r.repeat})</th>" for r in results)
        + "</tr></thead><tbody>"
    )
    for title, cells in _coherence_rows(results):
        out.append(f'<tr><th scope="row">{e(title)}</th>' + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    out.append(f'<p class="legend">{e(COHERENCE_LEGEND)}</p>')
    found = coherence_notes(results)
    if found:
        out.append('<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in found) + "</ul>")
    out.append("</div>")
    return "\n".join(out) + "\n"
