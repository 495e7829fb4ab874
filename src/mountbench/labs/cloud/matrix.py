"""Which cloud-drive targets a cloud-lab run makes: cache modes × round-trip times, each a
target labelled with both (``writes-20ms``), plus the local disk as the baseline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.errors import UsageError
from mountbench.labs.cloud.mounts import CACHE_MODES, CacheMode

LOCAL = "local"  # the baseline's label: the lab's work directory on this machine's disk
DEFAULT_MODES = tuple(CACHE_MODES)
DEFAULT_RTTS = (0, 20)
MAX_RTT_MS = 10_000
# a plausible home link: 100 Mbit/s each way (fibre; a cable uplink is slower). Without a cap,
# loopback moves GB/s and a cache mode that fetches whole files looks free.
DEFAULT_BANDWIDTH_KBPS = 12_500


@dataclass(frozen=True)
class CloudSpec:
    mode: CacheMode
    rtt_ms: int
    bandwidth_kbps: int | None = None

    @property
    def label(self) -> str:
        return f"{self.mode.name}-{self.rtt_ms}ms"


def parse_list(texts: Sequence[str]) -> list[str]:
    """``--mode off,full --mode writes`` → ['off', 'full', 'writes']."""
    return [part.strip() for text in texts for part in text.split(",") if part.strip()]


def _given_empty(flag: str, texts: Sequence[str], example: str) -> None:
    if texts and not parse_list(texts):
        raise UsageError(f"{flag} was given empty; give a value, e.g. {flag} {example}, or leave {flag} out")


def parse_modes(texts: Sequence[str]) -> list[CacheMode]:
    _given_empty("--mode", texts, "off,full")
    names = parse_list(texts) or list(DEFAULT_MODES)
    unknown = [n for n in names if n not in CACHE_MODES]
    if unknown:
        raise UsageError(f"--mode {unknown[0]!r} is not an rclone cache mode; choose from {', '.join(CACHE_MODES)}")
    return [CACHE_MODES[n] for n in dict.fromkeys(names)]


def parse_rtts(texts: Sequence[str]) -> list[int]:
    _given_empty("--rtt", texts, "0,20")
    rtts = []
    for part in parse_list(texts):
        number = part.removesuffix("ms")
        if not number.isdigit() or int(number) > MAX_RTT_MS:
            raise UsageError(f"--rtt {part!r}: give whole milliseconds from 0 to {MAX_RTT_MS}, e.g. --rtt 0,20")
        rtts.append(int(number))
    return list(dict.fromkeys(rtts)) or list(DEFAULT_RTTS)


def cloud_specs(modes: Sequence[str], rtts: Sequence[str], bandwidth_kbps: int | None = None) -> list[CloudSpec]:
    """Every cache mode at every RTT, RTT outermost (the table reads mode by mode per RTT).
    ``bandwidth_kbps``: KB/s each way; 0 or None: no cap."""
    cap = bandwidth_kbps or None
    return [CloudSpec(mode, rtt, cap) for rtt in parse_rtts(rtts) for mode in parse_modes(modes)]
