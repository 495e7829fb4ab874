"""A lab's mounts probed from its inside (the QEMU guest, the container) by probe/'s own agent
(probe/agent.py: the host's mountbench, run inside), and across the boundary for each mount that
shows the host a directory of its own:

1. the capability probe (probe.target) on every mount, and on a directory of the inside's own
   RAM (``reference``: its tmpfs) as the reference column, each run by the agent; its JSON comes
   home through the lab's results directory, a share that is not under test;
2. coherence between the host's directory and the inside's mount of it, both ways, for every
   shared mount, each measured on its own (probe.coherence: one side acts, the other observes;
   the host's steps run here, the inside's in the agent). The two clocks are matched over the
   agent's channel first and each result says how well;
3. the reference: the same coherence checks on one directory of the inside's tmpfs.

A lab supplies the agent's channel (a RemoteSide) and its mounts; the result is a LabProbe
(probefacts.py), stored with its run. What failed is said in the result, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mountbench.errors import MountbenchError
from mountbench.labs import frame
from mountbench.probe.agent import AgentError, RemoteSide
from mountbench.probe.coherence import STEPS, View, measure_views
from mountbench.probe.sides import LocalSide
from mountbench.probefacts import CoherenceResult, LabProbe, MountProbe, TargetProbe

CHECKS_PER_REPETITION = 10  # visibility x5, stale reads x2, inotify, locks x2
REFERENCE = "/dev/shm"  # the inside's own tmpfs: the local reference there


@dataclass(frozen=True)
class ProbeOptions:
    repeat: int = 3
    timeout_s: float = 5.0


@dataclass(frozen=True)
class Inside:
    """One mount as the probe sees it: its label (the run's target), where it is inside, and the host
    directory it shows (None: the host has none, as a disk image or the inside's own RAM)."""

    label: str
    path: str
    host_path: Path | None = None
    shared: bool = False  # the host's directory itself, both ways: coherence is measured across


@dataclass(frozen=True)
class Results:
    """The lab's results directory: on the host, and as the inside sees it."""

    host: Path
    inside: str


def capability_bound(options: ProbeOptions) -> float:
    """Seconds the capability probe of one mount may take inside: each capability's bound."""
    return frame.capability_bound(options.timeout_s)


def coherence_bound(options: ProbeOptions) -> float:
    """Seconds one coherence measurement may take: every step's bound."""
    return options.repeat * CHECKS_PER_REPETITION * 3 * (options.timeout_s + 5.0) + 60.0


def probe_time(mounts: int, shared: int, options: ProbeOptions) -> float:
    """Seconds the agent's work may take: the capability probes (the mounts and the reference),
    coherence both ways per shared mount and the reference's."""
    return (mounts + 1) * capability_bound(options) + (2 * shared + 1) * coherence_bound(options)


def probe_inside(
    side: RemoteSide,
    mounts: Sequence[Inside],
    results: Results,
    options: ProbeOptions,
    on_output: Callable[[str], None],
    where: str,
) -> LabProbe:
    """Every mount probed through ``side`` (the agent), the shared ones across too; ``where`` names the
    inside in what is said ("the guest", "the container")."""
    shared = [m for m in mounts if m.shared and m.host_path is not None]
    errors: list[str] = []
    why: dict[str, list[str]] = {m.label: [] for m in mounts}
    probed: dict[str, TargetProbe | None] = {}
    coherence: dict[str, tuple[CoherenceResult | None, CoherenceResult | None]] = {}
    reference: TargetProbe | None = None
    reference_coherence: CoherenceResult | None = None
    try:
        on_output(f"probe: capabilities of {len(mounts)} mount(s), probed inside {where}")
        for index, m in enumerate(mounts):
            probed[m.label] = _capabilities(side, m.path, f"m{index}", results, options, why[m.label], where)
        reference = _capabilities(side, REFERENCE, "reference", results, options, errors, where)
        if shared:
            resolution = side.sync_clock()
            on_output(f"probe: coherence between the host and {where} for {len(shared)} shared mount(s), each on "
                      f"its own; clocks matched to ±{resolution * 1000:.2f} ms")  # fmt: skip
            for m in shared:
                coherence[m.label] = _both_ways(m, side, options, why[m.label], where)
            reference_coherence = _reference_coherence(side, options, errors, where)
    except AgentError as exc:
        errors.append(f"the probe stopped: {exc}")
    found = []
    for m in mounts:
        to_inside, to_host = coherence.get(m.label, (None, None))
        found.append(MountProbe(m.label, m.path, m.shared, probed.get(m.label), to_inside, to_host,
                                tuple(why[m.label])))  # fmt: skip
    return LabProbe(tuple(found), options.repeat, options.timeout_s, reference, reference_coherence, tuple(errors))


def unprobed(mounts: Sequence[Inside], options: ProbeOptions, why: str) -> LabProbe:
    """The probe of a lab whose agent never answered: every mount not measured, and why."""
    found = tuple(MountProbe(m.label, m.path, m.shared) for m in mounts)
    return LabProbe(found, options.repeat, options.timeout_s, errors=(f"the probe stopped: {why}",))


def _capabilities(
    side: RemoteSide, path: str, name: str, results: Results, options: ProbeOptions, errors: list[str], where: str
) -> TargetProbe | None:
    """The capability probe of one directory inside, run by the agent; its JSON comes home through
    the results directory."""
    out = results.host / f"probe-{name}.json"
    out.unlink(missing_ok=True)
    done = side.run("capabilities_to_file", path, options.timeout_s, f"{results.inside}/{out.name}",
                    timeout=capability_bound(options))  # fmt: skip
    if done.status != "ok":
        errors.append(f"the capability probe of {path} in {where}: {done.status} {done.errno or ''} {done.message}")
        return None
    try:
        return TargetProbe.from_dict(json.loads(out.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        errors.append(f"the capability probe of {path} in {where} left no readable results: {exc}")
        return None
    finally:
        out.unlink(missing_ok=True)


def _both_ways(
    mount: Inside, side: RemoteSide, options: ProbeOptions, errors: list[str], where: str
) -> tuple[CoherenceResult | None, CoherenceResult | None]:
    """Host → inside, then inside → host. The scratch directory is always made (and removed) on
    the host: the directory is the host's, the inside only shows it."""
    assert mount.host_path is not None
    host = View(LocalSide(STEPS, "host"), str(mount.host_path), "host")
    inside = View(side, mount.path, f"{mount.label} in {where}")
    found: list[CoherenceResult | None] = []
    for a, b, scratch_in in ((host, inside, "a"), (inside, host, "b")):
        try:
            found.append(measure_views(a, b, repeat=options.repeat, timeout=options.timeout_s,
                                       scratch_in=scratch_in))  # type: ignore[arg-type]  # fmt: skip
        except AgentError:
            raise
        except MountbenchError as exc:  # the inside never showed the host's scratch directory, ...
            found.append(None)
            errors.append(f"{a.label} → {b.label}: {exc}")
    return found[0], found[1]


def _reference_coherence(
    side: RemoteSide, options: ProbeOptions, errors: list[str], where: str
) -> CoherenceResult | None:
    a = View(side, REFERENCE, f"{where} {REFERENCE}")
    b = View(side, REFERENCE, f"{where} {REFERENCE}")
    try:
        return measure_views(a, b, repeat=options.repeat, timeout=options.timeout_s)
    except AgentError:
        raise
    except MountbenchError as exc:
        errors.append(f"the local reference in {where}: {exc}")
        return None
