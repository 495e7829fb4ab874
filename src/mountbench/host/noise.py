"""What else the machine did while a sample ran: the noise that widens intervals.

Around each timed part the session reads the machine's CPU counters (/proc/stat) and its
own CPU time and that of the children it has waited for (the engine of the sample: fio,
tar, wrk, ...). What the machine's CPUs did beyond that was other processes' work, and the
time the hypervisor gave to other guests is steal. Both are stored with the sample as a
percentage of the machine (all its CPUs over the sample's wall time):

- ``noise.others_cpu``: CPU used by processes other than mountbench and what it ran;
- ``noise.steal``: CPU time stolen by the hypervisor.

A busy machine does not make a sample wrong, but it makes samples vary more: reports say
how many samples ran on a busy machine next to an answer whose intervals it widened
(analysis/noise.py decides what "busy" is). A server the engine started and did not wait
for within the sample (nginx for the http workloads) counts as "others"."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from mountbench.model import NOISE_OTHERS_CPU, NOISE_STEAL

_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class CpuCounters:
    """Seconds of CPU time summed over every CPU since boot (/proc/stat's first line)."""

    busy: float  # user, nice, system, irq, softirq (steal and guest apart)
    steal: float

    @classmethod
    def parse(cls, text: str, ticks_per_s: float) -> CpuCounters:
        fields = text.split("\n", 1)[0].split()
        if not fields or fields[0] != "cpu":
            raise ValueError("no cpu line in /proc/stat")
        values = [float(v) / ticks_per_s for v in fields[1:]]
        values += [0.0] * (8 - len(values))
        user, nice, system, _idle, _iowait, irq, softirq, steal = values[:8]
        return cls(busy=user + nice + system + irq + softirq, steal=steal)


def read_counters() -> CpuCounters | None:
    try:
        return CpuCounters.parse(_STAT.read_text(), os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None


def own_cpu_s() -> float:
    """This process's CPU time and that of the children it has waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@dataclass(frozen=True)
class NoiseWindow:
    """Opened just before a sample's timed part, closed just after it."""

    counters: CpuCounters | None
    own_s: float
    started: float

    @classmethod
    def open(cls) -> NoiseWindow:
        return cls(read_counters(), own_cpu_s(), time.monotonic())

    def close(self) -> dict[str, float]:
        """The sample's noise metrics (empty when /proc/stat cannot be read or no time passed)."""
        end = read_counters()
        wall = time.monotonic() - self.started
        if self.counters is None or end is None or wall <= 0:
            return {}
        return noise_metrics(self.counters, end, own_cpu_s() - self.own_s, wall, os.cpu_count() or 1)


def noise_metrics(start: CpuCounters, end: CpuCounters, own_s: float, wall_s: float, cpus: int) -> dict[str, float]:
    """Others' CPU and steal as percentages of the machine over the window (pure)."""
    capacity = wall_s * cpus
    others = max(0.0, (end.busy - start.busy) - max(0.0, own_s))
    steal = max(0.0, end.steal - start.steal)
    return {NOISE_OTHERS_CPU: min(100.0, 100.0 * others / capacity), NOISE_STEAL: min(100.0, 100.0 * steal / capacity)}
