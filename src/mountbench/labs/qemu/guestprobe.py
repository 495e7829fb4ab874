"""`mountbench lab --probe`: what each lab mount really supports, and how coherent it is
across the VM boundary.

Inside the booted guest, after the benchmark run:

1. the capability probe (probe.target) on every mount the guest could use, and on the
   guest's own tmpfs as the reference column, run by the probe agent below; each
   probe's JSON comes home through the results share;
2. coherence between the host's directory and the guest's mount of it, both ways, for
   every mount that shows a host directory (9p, virtiofs, sshfs, nfs): one side acts,
   the other observes (probe.coherence). The host's side runs its steps itself; the
   guest's are run by the probe agent (probe.agent), which reads requests from the lab's
   control channel (the guest's /dev/ttyS1) and answers on the console, neither of them
   a share under test. The two machines' clocks are matched over that channel and each
   result says how well;
3. the reference: the same coherence checks on one directory of the guest's tmpfs.

The result is a LabProbe (probe.model), stored with the lab's run.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from mountbench.errors import MountbenchError
from mountbench.labs import frame
from mountbench.labs.qemu import Guest, LabError, LabMount
from mountbench.probe.agent import AgentError, AgentLink, RemoteSide
from mountbench.probe.coherence import STEPS, View, measure_views
from mountbench.probe.model import CoherenceResult, LabProbe, MountProbe, TargetProbe
from mountbench.probe.sides import LocalSide

GUEST_REFERENCE = "/dev/shm"  # the guest's own tmpfs: the local reference in the guest
# the guest's root is read-only: caches and data go to its tmpfs (the lab's run and its probe agent alike)
GUEST_ENV = "HOME=/tmp XDG_CACHE_HOME=/tmp/.cache XDG_DATA_HOME=/tmp/.data COLUMNS=160"
CHANNEL = "/dev/ttyS1"  # the lab's control channel in the guest
AGENT_START_S = 300.0  # Python's start in an emulated guest whose root is 9p can take minutes
CHECKS_PER_REPETITION = 10  # visibility x5, stale reads x2, inotify, locks x2


@dataclass(frozen=True)
class ProbeOptions:
    repeat: int = 3
    timeout_s: float = 5.0


def agent_command() -> str:
    """The guest command: the host's own probe agent, reading requests from the lab's control channel."""
    argv = [sys.executable, "-m", "mountbench.probe.agent", "--channel", CHANNEL]
    return f"cd /tmp && env {GUEST_ENV} {shlex.join(argv)}"


def capability_bound(options: ProbeOptions) -> float:
    """Seconds the capability probe of one mount may take in the guest: each capability's bound."""
    return frame.capability_bound(options.timeout_s)


def coherence_bound(options: ProbeOptions) -> float:
    """Seconds one coherence measurement may take: every step's bound."""
    return options.repeat * CHECKS_PER_REPETITION * 3 * (options.timeout_s + 5.0) + 60.0


def agent_timeout(mounts: int, shared: int, options: ProbeOptions) -> float:
    """Seconds the agent may run: its start, the capability probes (mounts and the reference),
    coherence both ways per shared mount and the reference."""
    return AGENT_START_S + (mounts + 1) * capability_bound(options) + (2 * shared + 1) * coherence_bound(options)


class GuestAgent:
    """The probe agent running in the guest (a guest command, in a thread of its own) and
    the RemoteSide that speaks to it. Lines of the command that are not the agent's go to
    ``on_output``."""

    def __init__(self, guest: Guest, timeout: float, on_output: Callable[[str], None]) -> None:
        self._guest = guest
        self._timeout = timeout
        self._on_output = on_output
        self.link = AgentLink(guest.send_to_command)
        self.side = RemoteSide(self.link, "guest")
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="mountbench-lab-agent", daemon=True)

    def _run(self) -> None:
        try:
            self._guest.run_in_guest(agent_command(), on_line=self._line, timeout=self._timeout)
        except BaseException as exc:  # reported by the caller's next request
            self.failure = exc

    def _line(self, line: str) -> None:
        if not self.link.feed(line):
            self._on_output(line)

    def __enter__(self) -> GuestAgent:
        self._thread.start()
        try:
            self.link.wait_hello(AGENT_START_S)
        except AgentError:
            raise AgentError(f"the probe agent did not start in the guest{self._why()}") from None
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread.is_alive() and self.failure is None:
            with contextlib.suppress(AgentError, LabError):
                self.side.exit()
        self._thread.join(timeout=30.0)

    def _why(self) -> str:
        return f" ({self.failure})" if self.failure is not None else ""


def probe_lab(guest: Guest, options: ProbeOptions, on_output: Callable[[str], None]) -> LabProbe:
    """Probe every mount the guest could use; what failed is said in the result, not raised
    (the benchmark run it comes with is already home)."""
    mounts = [m for m in guest.mounts if not m.guest_error]
    shared = [m for m in mounts if m.spec.mount_type.shared and m.host_path is not None]
    errors: list[str] = []
    why: dict[str, list[str]] = {m.slug: [] for m in mounts}
    probed: dict[str, TargetProbe] = {}
    reference: TargetProbe | None = None
    coherence: dict[str, tuple[CoherenceResult | None, CoherenceResult | None]] = {}
    reference_coherence: CoherenceResult | None = None
    if mounts:
        try:
            with GuestAgent(guest, agent_timeout(len(mounts), len(shared), options), on_output) as agent:
                on_output(f"lab --probe: capabilities of {len(mounts)} mount(s), probed inside the guest")
                for m in mounts:
                    probed[m.slug] = _capabilities(guest, agent.side, m.guest_path, m.slug, options, why[m.slug])
                reference = _capabilities(guest, agent.side, GUEST_REFERENCE, "reference", options, errors)
                if shared:
                    resolution = agent.side.sync_clock()
                    on_output(
                        f"lab --probe: coherence between the host and the guest for {len(shared)} shared mount(s); "
                        f"clocks matched to ±{resolution * 1000:.2f} ms"
                    )
                    for m in shared:
                        coherence[m.slug] = _both_ways(m, agent.side, options, why[m.slug])
                    reference_coherence = _reference_coherence(agent.side, options, errors)
        except (AgentError, LabError) as exc:
            errors.append(f"lab --probe stopped: {exc}")
    results = []
    for m in mounts:
        to_guest, to_host = coherence.get(m.slug, (None, None))
        results.append(
            MountProbe(
                label=m.label,
                guest_path=m.guest_path,
                shared=m.spec.mount_type.shared,
                capabilities=probed.get(m.slug),
                to_guest=to_guest,
                to_host=to_host,
                errors=tuple(why[m.slug]),
            )
        )
    return LabProbe(tuple(results), options.repeat, options.timeout_s, reference, reference_coherence, tuple(errors))


def _capabilities(
    guest: Guest, side: RemoteSide, path: str, name: str, options: ProbeOptions, errors: list[str]
) -> TargetProbe | None:
    """The capability probe of one guest directory, run by the agent; its JSON comes home
    through the results share."""
    out = guest.results_path / f"probe-{name}.json"
    out.unlink(missing_ok=True)
    done = side.run(
        "capabilities_to_file", path, options.timeout_s, f"{guest.guest_results}/{out.name}",
        timeout=capability_bound(options),
    )  # fmt: skip
    if done.status != "ok":
        errors.append(f"the capability probe of {path} in the guest: {done.status} {done.errno or ''} {done.message}")
        return None
    try:
        return TargetProbe.from_dict(json.loads(out.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        errors.append(f"the capability probe of {path} in the guest left no readable results: {exc}")
        return None


def _both_ways(
    mount: LabMount, guest_side: RemoteSide, options: ProbeOptions, errors: list[str]
) -> tuple[CoherenceResult | None, CoherenceResult | None]:
    """Host → guest, then guest → host. The scratch directory is always made (and removed)
    on the host: the directory is the host's, the guest only shows it."""
    assert mount.host_path is not None
    local = LocalSide(STEPS, "host")
    host = View(local, str(mount.host_path), "host")
    inside = View(guest_side, mount.guest_path, f"{mount.label} in the guest")
    results: list[CoherenceResult | None] = []
    for a, b, scratch_in in ((host, inside, "a"), (inside, host, "b")):
        try:
            results.append(
                measure_views(a, b, repeat=options.repeat, timeout=options.timeout_s, scratch_in=scratch_in)  # type: ignore[arg-type]
            )
        except AgentError:
            raise
        except MountbenchError as exc:  # the guest never showed the host's scratch directory, ...
            results.append(None)
            errors.append(f"{a.label} → {b.label}: {exc}")
    return results[0], results[1]


def _reference_coherence(guest_side: RemoteSide, options: ProbeOptions, errors: list[str]) -> CoherenceResult | None:
    a = View(guest_side, GUEST_REFERENCE, f"guest {GUEST_REFERENCE}")
    b = View(guest_side, GUEST_REFERENCE, f"guest {GUEST_REFERENCE}")
    try:
        return measure_views(a, b, repeat=options.repeat, timeout=options.timeout_s)
    except AgentError:
        raise
    except MountbenchError as exc:
        errors.append(f"the local reference in the guest: {exc}")
        return None
