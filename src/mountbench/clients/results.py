"""fio's client/server JSON, split per client, and mountbench's own aggregate. Pure.

With ``--client``, fio's JSON has a ``client_stats`` array: each client's job entries
(named by the host and port given to ``--client``) and, with several clients, an entry
named "All clients" that fio sums itself. That sum has known bugs (fio issues #1918,
#1881, #610), so mountbench recomputes the aggregate from the clients' own entries:
IOPS and bandwidth are summed, mean latency is weighted by each client's I/O count, and
latency percentiles are read off the clients' json+ histograms merged bin by bin
(never averaged; see fioparse.histogram_percentiles). Where fio's own figure disagrees
with the sum, the sample carries a caveat.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# the skew and overlap of stored samples are statistics (analysis/multiclient.py); the fio client kind
# and this module's callers still name them from here
from mountbench.analysis.multiclient import ACTIVE as ACTIVE
from mountbench.analysis.multiclient import FEWER_CLIENTS as FEWER_CLIENTS
from mountbench.analysis.multiclient import LOW_OVERLAP, OVERLAP_FLOOR
from mountbench.analysis.multiclient import START_OFFSET as START_OFFSET
from mountbench.analysis.multiclient import overlap as overlap
from mountbench.analysis.multiclient import overlap_of as overlap_of
from mountbench.clients.addresses import ClientSpec
from mountbench.fio.parse import DIRECTIONS, FioOutputError, parse_fio
from mountbench.model import Caveat, ClientResult

ALL_CLIENTS = "All clients"
FIO_ALL_CLIENTS = "fio-all-clients"  # caveat code
ALL_CLIENTS_TOLERANCE = 0.02  # fio's sum and ours may differ by rounding; more is a disagreement


@dataclass(frozen=True)
class ClientsOutcome:
    """One sample on several clients: each client's result and, when all succeeded, the aggregate."""

    clients: tuple[ClientResult, ...]
    aggregate: dict[str, float]  # empty when a client failed
    caveats: tuple[Caveat, ...]

    @property
    def failed(self) -> tuple[ClientResult, ...]:
        return tuple(c for c in self.clients if c.error)


def split_entries(document: Mapping, clients: Sequence[ClientSpec]) -> tuple[dict[str, list[dict]], list[dict]]:
    """(client label -> its job entries, fio's "All clients" entries)."""
    stats = document.get("client_stats")
    if not isinstance(stats, list):
        raise FioOutputError("fio's JSON output has no client_stats: was it run with --client?")
    per_client: dict[str, list[dict]] = {c.label: [] for c in clients}
    fio_all: list[dict] = []
    for entry in stats:
        if entry.get("jobname") == ALL_CLIENTS:
            fio_all.append(entry)
            continue
        owner = next(
            (c for c in clients if c.is_entry_of(str(entry.get("hostname", "")), int(entry.get("port", 0)))), None
        )
        if owner is None:
            raise FioOutputError(f"fio's JSON names a client that was not asked for: {entry.get('hostname')}")
        per_client[owner.label].append(entry)
    return per_client, fio_all


def clients_outcome(document: Mapping, clients: Sequence[ClientSpec], text: str = "") -> ClientsOutcome:
    """Per-client metrics and errors, and the aggregate when every client delivered.

    ``text`` is what fio printed besides the JSON (its messages name clients that
    disconnected, timed out or refused the connection)."""
    per_client, fio_all = split_entries(document, clients)
    named = [c for c in clients if not per_client[c.label] and _named_failure(c, text)]
    results: list[ClientResult] = []
    for client in clients:
        entries = per_client[client.label]
        if not entries:
            results.append(ClientResult(client.label, {}, _missing_reason(client, text, named)))
            continue
        parsed = parse_fio({"jobs": entries})
        error = "; ".join(parsed.errors)
        results.append(ClientResult(client.label, parsed.metrics, f"fio job failed: {error}" if error else ""))
    if any(r.error for r in results):
        return ClientsOutcome(tuple(results), {}, ())
    all_entries = [entry for client in clients for entry in per_client[client.label]]
    aggregate = parse_fio({"jobs": all_entries}).metrics
    caveats = ()
    if fio_all and len(clients) > 1:
        caveats = all_clients_disagreement(aggregate, parse_fio({"jobs": fio_all}).metrics)
    return ClientsOutcome(tuple(results), aggregate, caveats)


def all_clients_disagreement(ours: Mapping[str, float], fios: Mapping[str, float]) -> tuple[Caveat, ...]:
    """A caveat naming the figures where fio's "All clients" entry and the per-client sum differ."""
    differing = []
    for direction in DIRECTIONS:
        for name, label in (("iops", "IOPS"), ("bw", "bandwidth")):
            key = f"{direction}.{name}"
            if key not in ours:
                continue
            theirs = fios.get(key, 0.0)
            if ours[key] <= 0 or abs(theirs - ours[key]) / ours[key] > ALL_CLIENTS_TOLERANCE:
                differing.append(f"{direction} {label}")
    if not differing:
        return ()
    return (
        Caveat(
            FIO_ALL_CLIENTS,
            f'fio\'s own "All clients" {", ".join(differing)} differ from the sum over the clients by more than '
            f"{ALL_CLIENTS_TOLERANCE:.0%} (fio issues #1918, #1881, #610); mountbench reports the sum",
        ),
    )


def _named_failure(client: ClientSpec, text: str) -> str:
    """What fio said went wrong with this client ('' when it said nothing about it)."""
    lines = _lines_naming(client, text)
    if any("disconnected" in line for line in lines):
        return "disconnected mid-sample (its fio server stopped or became unreachable)"
    if any("timed out" in line for line in lines):
        return "stopped answering (fio's client timed out)"
    if any("connect" in line for line in lines):
        return "could not be reached"
    return ""


def _lines_naming(client: ClientSpec, text: str) -> list[str]:
    """fio's messages that name the client's address (not one that merely starts with it)."""
    pattern = re.compile(rf"(?<![\w.:]){re.escape(client.connect_host)}(?![\w.])")
    return [line.strip() for line in text.splitlines() if pattern.search(line)]


def _missing_reason(client: ClientSpec, text: str, named: Sequence[ClientSpec]) -> str:
    """Why a client delivered no results, from fio's messages that name it; a client fio
    said nothing about lost its results because another one failed."""
    why = _named_failure(client, text)
    if why:
        said = "; ".join(dict.fromkeys(_lines_naming(client, text)))
        return f"client {client.label} {why}: {said[:300]}"
    if named:
        others = ", ".join(c.label for c in named)
        return f"client {client.label} delivered no results (fio's client ended when {others} failed)"
    return f"client {client.label} delivered no results"


# --- start skew and overlap ---------------------------------------------------------------------
#
# fio's client/server has no start barrier: fio's client sends each server its job in turn and
# each starts as it receives it. Its JSON carries no start time per client, so each client's job
# also writes fio's latency log averaged over LOG_AVG_MS windows with unix-epoch timestamps
# (log_unix_epoch=1): stamped by the client's own clock, sent back to the controller by fio.
# The first window's stamp less one window is when that client's I/O began, the last stamp
# when it ended; each client's clock offset (measured over SSH, else taken as 0) is removed.

LOG_AVG_MS = 10
SKEW_LOG_PREFIX = "mbskew"


def skew_log_options(client: ClientSpec) -> list[tuple[str, str]]:
    """What each client's job gets so its start and end can be read off its own clock."""
    return [("write_lat_log", f"{SKEW_LOG_PREFIX}-{client.dirname}"), ("log_avg_msec", str(LOG_AVG_MS)),
            ("log_unix_epoch", "1")]  # fmt: skip


def skew_log_glob(client: ClientSpec) -> str:
    """The completion-latency logs fio's client writes for this client (one per job)."""
    return f"{SKEW_LOG_PREFIX}-{client.dirname}_clat.*.log*"


def activity_span(logs: Sequence[str], window_ms: float = LOG_AVG_MS) -> tuple[float, float] | None:
    """(start, end) in epoch milliseconds of the I/O in a client's averaged latency logs."""
    stamps = []
    for text in logs:
        for line in text.splitlines():
            head = line.split(",", 1)[0].strip()
            if head.isdigit():
                stamps.append(int(head))
    if not stamps:
        return None
    return min(stamps) - window_ms, float(max(stamps))


def start_offsets(spans: Mapping[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """client -> (seconds after the earliest client started, seconds its I/O ran)."""
    if not spans:
        return {}
    first = min(start for start, _ in spans.values())
    return {label: ((start - first) / 1000, (end - start) / 1000) for label, (start, end) in spans.items()}


def overlap_caveat(skew_s: float | None, together: float | None) -> tuple[Caveat, ...]:
    if together is None or together >= OVERLAP_FLOOR:
        return ()
    return (
        Caveat(
            LOW_OVERLAP,
            f"the clients ran together for only {together:.0%} of the sample (start skew {skew_s * 1000:.0f} ms): "
            "their sum overstates the rate they reach at once",
        ),
    )
