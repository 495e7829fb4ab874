"""One `mountbench probe` command: the targets, the view pairs, and the local reference.

The reference is what a local filesystem gives, measured for real during the same
command: the capabilities probed on a local directory (by default the system's temp
directory), and the coherence checks with A and B the same local directory. It is read
next to the targets' columns instead of a remembered expectation.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from mountbench.probe.coherence import measure_coherence
from mountbench.probe.target import probe_target
from mountbench.probefacts import ProbeReport


def default_reference_dir() -> Path:
    """The system's temp directory: local on nearly every machine (its type is shown)."""
    return Path(tempfile.gettempdir()).resolve()


def measure_all(
    targets: Sequence[Path],
    pairs: Sequence[tuple[Path, Path]],
    *,
    repeat: int = 5,
    timeout: float = 5.0,
    reference: Path | None = None,
) -> ProbeReport:
    """Probe every target and measure every view pair; with ``reference``, the same on that
    local directory (only what the command measures: capabilities if targets were given,
    coherence if pairs were)."""
    probes = tuple(probe_target(p, timeout=timeout) for p in targets)
    coherence = tuple(measure_coherence(a, b, repeat=repeat, timeout=timeout) for a, b in pairs)
    ref_probe = ref_coherence = None
    if reference is not None:
        if probes:
            ref_probe = probe_target(reference, timeout=timeout)
        if coherence:
            ref_coherence = measure_coherence(reference, reference, repeat=repeat, timeout=timeout)
    return ProbeReport(probes, coherence, ref_probe, ref_coherence)
