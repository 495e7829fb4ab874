"""The sharing judges of pick two, for a lab whose mounts show the host's own directory (the QEMU
lab's shared folders, the container lab's bind mount), read from what its probe measured across
the boundary (a LabProbe's coherence, each way):

- visibility: the worst delay before a change made on one side showed on the other (both ways,
  five kinds of change);
- stale reads: what a reader got right after the other side replaced a file (stale, or torn:
  data loss);
- locks: whether flock and fcntl locks held on one side blocked a locker on the other.

Each way is named as the lab names its sides ("host → guest", "container → host").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mountbench import probefacts as probe_model
from mountbench.probe import render as probe_render
from mountbench.report.picktwo.rows import Measured
from mountbench.report.picktwo.scale import PROMPT_MS


def not_measured(measure: str) -> Measured:
    return Measured(measure, "not measured", "not measured")


Ways = Sequence[tuple[str, probe_model.CoherenceResult | None]]


def judge_visibility(ways: Ways) -> Measured:
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
        return not_measured("visibility")
    timeout = max(r.timeout_s for _, r in ways if r is not None)
    if unseen:
        unseen_text = f"not seen within {timeout:g} s: {_by_ways(unseen, len(ways))}"
        return Measured("visibility", unseen_text, "poor", None, "ms")
    assert worst is not None
    ms, operation, way, resolution = worst
    shown = (
        f"≤ {probe_render.format_ms(ms + resolution)}"
        if resolution and ms <= resolution
        else probe_render.format_ms(ms)
    )
    return Measured(
        "visibility",
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


def judge_stale_reads(ways: Ways) -> Measured:
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
        return not_measured("stale")

    def said(*outcomes: str) -> str:
        parts = [f"{o} {counts[o]}/{total}" for o in outcomes if counts.get(o)]
        places = list(dict.fromkeys(p for o in outcomes for p in where.get(o, [])))
        place = "both ways" if len(places) == 2 else ", ".join(places)
        return ", ".join(parts) + f" ({place})"

    bad = counts.get("torn", 0) + counts.get("missing", 0)
    if bad:
        return Measured("stale", f"torn or missing: {said('torn', 'missing')}", "data loss", float(bad), "reads")
    never = counts.get("unseen", 0) + counts.get("hung", 0)
    if never:
        return Measured("stale", f"the file never showed: {said('unseen', 'hung')}", "poor", float(never), "reads")
    if counts.get("stale"):
        return Measured("stale", f"stale: {said('stale')}", "fair", float(counts["stale"]), "reads")
    return Measured("stale", f"fresh {counts.get('fresh', 0)}/{total}", "good", 0.0, "reads")


def judge_locks(ways: Ways) -> Measured:
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
        return not_measured("locks")
    ways_measured = sum(1 for _, r in ways if r is not None)
    honoured = sum(len(w) for w in blocking.values())
    if honoured == measured and not unknown and measured == len(kinds) * ways_measured:
        both = "both ways" if ways_measured == 2 else "one way measured"
        held = f"{' and '.join(kinds)} held on one side block the other, {both}"
        return Measured("locks", held, "good", float(honoured))
    if honoured == 0:
        return Measured("locks", f"neither {' nor '.join(kinds)} held on one side blocks the other", "poor", 0.0)
    parts = [f"{kind}: {', '.join(blocking[kind]) if kind in blocking else 'no'}" for kind in kinds]
    extra = f"; {unknown} attempt(s) failed" if unknown else ""
    return Measured("locks", f"only some block: {'; '.join(parts)}{extra}", "fair", float(honoured))


def across(mount: probe_model.MountProbe, inward: str, outward: str) -> tuple[Measured, Measured, Measured]:
    """Visibility, stale reads and locks of one mount, both ways: ``inward`` names the host's changes
    shown inside ("host → guest"), ``outward`` the reverse."""
    ways = [(inward, mount.to_guest), (outward, mount.to_host)]
    return judge_visibility(ways), judge_stale_reads(ways), judge_locks(ways)
