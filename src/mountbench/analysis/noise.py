"""Was the machine busy while the samples ran? From the noise each sample recorded
(host/noise.py: other processes' CPU and the hypervisor's steal, % of the machine). Pure.

A sample is *busy* when other processes used at least BUSY_OTHERS_PCT of the machine's CPU
(on 2 CPUs: most of one CPU) or the hypervisor stole at least BUSY_STEAL_PCT. A run's noise
is worth saying next to its answer when a share of its samples ran busy: the intervals it
gives are then wider than a quiet machine would give, and a re-run on a quiet machine may
decide what this one could not."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mountbench.model import NOISE_OTHERS_CPU as OTHERS_CPU
from mountbench.model import NOISE_STEAL as STEAL
from mountbench.model import Sample

BUSY_OTHERS_PCT = 25.0
BUSY_STEAL_PCT = 10.0
WORTH_SAYING = 0.2  # a fifth of the samples or more


@dataclass(frozen=True)
class Noise:
    measured: int  # samples that recorded their noise
    busy: int
    others_median_pct: float | None  # the median sample's share of the machine used by others
    steal_max_pct: float | None

    @property
    def busy_share(self) -> float:
        return self.busy / self.measured if self.measured else 0.0

    @property
    def worth_saying(self) -> bool:
        return self.measured > 0 and self.busy_share >= WORTH_SAYING

    def sentence(self) -> str:
        """'the machine was busy during 40 % of samples (other processes used a median 48 % of
        its CPU)'; empty when there is nothing to say."""
        if not self.worth_saying:
            return ""
        what = []
        if self.others_median_pct is not None and self.others_median_pct >= BUSY_OTHERS_PCT:
            what.append(f"other processes used a median {self.others_median_pct:.0f} % of its CPU")
        if self.steal_max_pct is not None and self.steal_max_pct >= BUSY_STEAL_PCT:
            what.append(f"the hypervisor took up to {self.steal_max_pct:.0f} %")
        detail = f" ({'; '.join(what)})" if what else ""
        return (
            f"the machine was busy during {100 * self.busy_share:.0f} % of samples ({self.busy} of "
            f"{self.measured}){detail}: that widens the intervals; a quieter machine may decide more"
        )

    def brief(self) -> str:
        """The sentence in a line, for `show`'s one screen: 'busy in 91 % of samples (others used 70 % of the
        CPU): wider intervals' (the hypervisor's share when others used little); empty when not worth saying."""
        if not self.worth_saying:
            return ""
        if self.others_median_pct is not None and self.others_median_pct >= BUSY_OTHERS_PCT:
            detail = f" (others used {self.others_median_pct:.0f} % of the CPU)"
        elif self.steal_max_pct is not None and self.steal_max_pct >= BUSY_STEAL_PCT:
            detail = f" (the hypervisor took up to {self.steal_max_pct:.0f} %)"
        else:
            detail = ""
        return f"busy in {100 * self.busy_share:.0f} % of samples{detail}: wider intervals"


def is_busy(sample: Sample) -> bool | None:
    """None when the sample recorded no noise (failed, or stored before it was recorded)."""
    others, steal = sample.metrics.get(OTHERS_CPU), sample.metrics.get(STEAL)
    if others is None and steal is None:
        return None
    return (others or 0.0) >= BUSY_OTHERS_PCT or (steal or 0.0) >= BUSY_STEAL_PCT


def noise_of(samples: Iterable[Sample]) -> Noise:
    measured = [s for s in samples if s.ok and is_busy(s) is not None]
    others = sorted(s.metrics[OTHERS_CPU] for s in measured if OTHERS_CPU in s.metrics)
    steals = [s.metrics[STEAL] for s in measured if STEAL in s.metrics]
    return Noise(
        measured=len(measured),
        busy=sum(bool(is_busy(s)) for s in measured),
        others_median_pct=others[len(others) // 2] if others else None,
        steal_max_pct=max(steals) if steals else None,
    )
