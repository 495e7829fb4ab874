"""`mountbench cloudlab --dry-run`: the lab it would make, with the exact commands, and the
workloads it would run (cold and warm phases included), without starting anything."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from mountbench.labs import netns
from mountbench.labs.cloud.cloudlab import not_isolated, work_root
from mountbench.labs.cloud.delay import MEMORY_LIMIT, toxics, toxiproxy_binary
from mountbench.labs.cloud.matrix import LOCAL, CloudSpec
from mountbench.labs.cloud.mounts import Wire
from mountbench.labs.cloud.phases import with_phases
from mountbench.labs.standins import resolved_on_stand_ins
from mountbench.model import RunOptions
from mountbench.units import format_bytes


def _wire(spec: CloudSpec) -> str:
    cap = f"{spec.bandwidth_kbps} KB/s each way" if spec.bandwidth_kbps else "no bandwidth cap"
    return f"{spec.rtt_ms} ms RTT, {cap}"


def lab_lines(specs: Sequence[CloudSpec]) -> list[str]:
    """The lab: where, which namespace, and each command as it would start (ports chosen at start)."""
    workdir = work_root() / "<id>"
    lines = [f"Work directory: {workdir} (the remote, the local baseline, mount points, caches, logs)"]
    why = netns.why_not()
    if not why:
        lines.append("Network namespace: one of the lab's own, held while it runs (loopback only; every server below "
                     "listens in it)")  # fmt: skip
    else:
        lines.append(f"Network namespace: none ({not_isolated(why)})")
    bandwidths = sorted({s.bandwidth_kbps or 0 for s in specs})
    lines.append("Wire: " + "; ".join(dict.fromkeys(_wire(s) for s in specs))
                 + (" (the default: a home link of 100 Mbit/s; --bandwidth 0 for none)" if 12_500 in bandwidths
                    else ""))  # fmt: skip
    lines.append("Commands:")
    lines.append(f"  rclone serve webdav {workdir}/remote --addr 127.0.0.1:<port> --dir-cache-time 0s  "
                 "(user and password in its environment)")  # fmt: skip
    lines.append(f"  {toxiproxy_binary() or 'toxiproxy-server'} -host 127.0.0.1 -port <api>  (no memory limit; "
                 "started afresh before every sample on a mount; memory watched: stopped past "
                 f"{format_bytes(MEMORY_LIMIT)}, the sample fails)")  # fmt: skip
    for rtt in dict.fromkeys(s.rtt_ms for s in specs):
        spec = next(s for s in specs if s.rtt_ms == rtt)
        names = ", ".join(f"{t['type']} {t['stream']} {t['attributes']}" for t in toxics(rtt, spec.bandwidth_kbps))
        lines.append(f"  proxy rtt{rtt}: 127.0.0.1:<port> -> the remote; toxics: {names or 'none'}")
    for spec in specs:
        wire = Wire(f"http://127.0.0.1:<rtt{spec.rtt_ms}>", spec.rtt_ms, spec.bandwidth_kbps)
        argv = spec.mode.argv(spec.label, wire, workdir / "mnt" / spec.label, workdir / "cache" / spec.label,
                              workdir / "log" / f"mount-{spec.label}.log")  # fmt: skip
        argv += ["--rc", "--rc-addr", "127.0.0.1:<port>", "--rc-user", "mountbench"]
        lines.append(f"  {spec.label}: {shlex.join(argv)}")
    return lines


def workload_lines(specs: Sequence[CloudSpec], options: RunOptions, warm: bool = True) -> list[str]:
    """The workloads and the samples the run would take (resolved on stand-in directories); ``warm``: a
    warm twin of each read workload where a mode caches reads."""
    labels = [LOCAL, *(s.label for s in specs)]
    request = resolved_on_stand_ins(labels, options, "mountbench-cloudplan-")
    workloads, phases = with_phases(request.workloads, warm=warm and any(s.mode.caches_reads for s in specs))
    lines = [f"Targets: {', '.join(labels)} (the local disk is the baseline)", "Workloads:"]
    for w in workloads:
        phase = phases.get(w.name, "").split(":")[0]
        lines.append(f"  {w.name}: {w.title}" + (f" [{phase}]" if phase else ""))
    rounds = options.repeat
    lines.append(f"Samples: {len(labels)} targets x {len(workloads)} workloads x {rounds} rounds = "
                 f"{len(labels) * len(workloads) * rounds}, after the probe and the tree's upload lag")  # fmt: skip
    lines.append("Before each sample on a mount: its uploads finish; the delay is started afresh; a read workload's "
                 "files are made remote-only (cold); a warm one reads them once first, then only rclone's cache "
                 "files of them leave the page cache")  # fmt: skip
    return lines
