"""A multi-client sample (run --client) read as statistics: each client's start skew and how
much of the sample every client ran at once, from the per-client metrics stored with it; and
the caveat codes such a sample may carry. clients/results.py records these metrics and
raises the caveats; the report reads them back.

Pure: stored client results in, numbers out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mountbench.model import ClientResult, Sample

OVERLAP_FLOOR = 0.9  # clients together for less of the sample than this: their sum overstates
LOW_OVERLAP = "clients-overlap"  # caveat code
FEWER_CLIENTS = "clients-missing"  # caveat code: the sample ran on fewer clients than asked
CLIENTS_LEFT_OUT = "clients-left-out"  # caveat code: a cell's samples on fewer clients left out of its statistics
START_OFFSET = "start_offset_s"  # per-client metric: its start after the earliest client's
ACTIVE = "active_s"  # per-client metric: how long its I/O ran


def overlap(spans: Mapping[str, tuple[float, float]]) -> float | None:
    """How much of the sample (first start to last end) every client ran at once, 0..1."""
    if len(spans) < 2:
        return None
    starts = [start for start, _ in spans.values()]
    ends = [end for _, end in spans.values()]
    whole = max(ends) - min(starts)
    if whole <= 0:
        return None
    return max(0.0, min(ends) - max(starts)) / whole


def overlap_of(results: Sequence[ClientResult]) -> tuple[float | None, float | None]:
    """(start skew in seconds, overlap) of a stored sample's clients (from their metrics)."""
    spans = {r.client: (r.metrics[START_OFFSET], r.metrics[START_OFFSET] + r.metrics[ACTIVE])
             for r in results if START_OFFSET in r.metrics and ACTIVE in r.metrics}  # fmt: skip
    if len(spans) < 2:
        return None, None
    return max(start for start, _ in spans.values()), overlap(spans)


def on_fewer_clients(sample: Sample) -> bool:
    """The sample ran on fewer clients than asked (one was lost earlier in the run)."""
    return any(c.code == FEWER_CLIENTS for c in sample.caveats)


def comparable(samples: Sequence[Sample]) -> tuple[list[Sample], int]:
    """The samples a cell's statistics stand on, and how many were left out: where a cell has samples on
    all its clients and some on fewer (a client lost mid-run), those on fewer are another quantity and
    are left out; a cell with none on all keeps them (under their caveat). The summary's median and the
    per-client medians both read this, so the per-client figures add up to the aggregate beside them."""
    fewer = [s for s in samples if on_fewer_clients(s)]
    if fewer and len(fewer) < len(samples):
        return [s for s in samples if not on_fewer_clients(s)], len(fewer)
    return list(samples), 0
