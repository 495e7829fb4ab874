"""`mountbench run --client ssh://ns1 --client ssh://ns2 --client ssh://ns3 share=…` from a
clean state: three (or ``--clients N``) network namespaces with a real sshd each (key-based, an
ssh config in a temporary directory given through $MOUNTBENCH_SSH_CONFIG), a shared tmpfs, nothing
started by hand. Prints the setup (from the command's start to its first sample: the SSH logins,
the fio servers started and checked, the files laid out), the run's wall time against the sum of
fio's runtimes, each sample's start skew and overlap (from each client's own timestamps), what the
overlap check said, and whether anything mountbench started is still running afterwards. Root
only (namespaces, tmpfs).

    .venv/bin/python bench/ssh_clients.py [--clients N] [--preset NAME] [--repeat N] [--runtime S] [--size SIZE]
    .venv/bin/python bench/ssh_clients.py --smoke
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support import netns, realmounts, sshd

from mountbench.clients.results import LOW_OVERLAP, OVERLAP_FLOOR, overlap_of
from mountbench.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=3, help="client machines (network namespaces), default 3")
    parser.add_argument("--preset", help="a preset (default: run's own default)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runtime", help="seconds per fio job (default: the preset's)")
    parser.add_argument("--size", help="working set (default: the preset's)")
    parser.add_argument("--smoke", action="store_true", help="one tiny job, one round: does it all work")
    args = parser.parse_args()
    extra = ["--preset", args.preset] if args.preset else []
    extra += ["--repeat", str(args.repeat)]
    extra += ["--runtime", args.runtime] if args.runtime else []
    extra += ["--size", args.size] if args.size else []
    if args.smoke:
        extra = ["--only", "rnd4k-q1-read", "--size", "8M", "--runtime", "0.5", "--repeat", "1"]
    with tempfile.TemporaryDirectory(prefix="mountbench-bench-ssh-") as home, realmounts.tmpfs("1g") as share:
        cache = Path(home) / "cache"
        cache.mkdir()
        with netns.clients(args.clients) as spaces:
            env_of = {i: {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/local/bin:/usr/bin:/bin"}
                      for i in range(args.clients)}  # fmt: skip
            setup = sshd.setup(Path(home) / "keys", spaces, env_of)
            try:
                env = dict(os.environ, MOUNTBENCH_DB=str(Path(home) / "results.sqlite"),
                           MOUNTBENCH_SSH_CONFIG=str(setup.config))  # fmt: skip
                given = [word for i in range(args.clients) for word in ("--client", f"ssh://ns{i + 1}")]
                command = [sys.executable, "-m", "mountbench", "run", *given, f"share={share}", *extra]
                print("$", " ".join(command[2:]).replace(f"{sys.executable} -m ", ""), f"({os.getloadavg()[0]:.2f} "
                      "load)", flush=True)  # fmt: skip
                t0, started = time.monotonic(), time.time()
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                wall = time.monotonic() - t0
                if done.returncode != 0:
                    sys.exit(f"mountbench failed ({done.returncode}): {done.stderr[-2000:]}")
                sshd.wait_until(lambda: not sshd.processes_with_marker(), timeout=20)
                left = sshd.processes_with_marker()
                sessions = [pid for server in setup.servers for pid in server.sessions()]
                leftover_dirs = list((cache / "mountbench" / "remote").glob("*"))
            finally:
                sshd.stop(setup.servers)
        with Store(Path(env["MOUNTBENCH_DB"])) as store:
            run = store.load_run("last")
    first = min(sample.started_at for sample in run.samples)
    print(f"setup: the first sample began {first - started:.1f} s after the command started "
          f"({args.clients} clients: SSH logins, fio servers started and checked, files laid out)")  # fmt: skip
    report(run, wall)
    print(f"left running on the clients: {len(left)} marked processes, {len(sessions)} ssh sessions; "
          f"remote run directories left: {len(leftover_dirs)}")  # fmt: skip
    if left or sessions or leftover_dirs:
        sys.exit("something mountbench started is still there")


def report(run, wall: float) -> None:
    skews, overlaps, flagged = [], [], 0
    fio_time = 0.0
    print(f"{'workload':<22} {'target':<6} {'round':>5} {'skew':>8} {'overlap':>8}  per client start (ms)")
    for sample in run.samples:
        if not sample.ok:
            print(f"{sample.workload:<22} {sample.target:<6} {sample.round:>5}  failed: {sample.error[:80]}")
            continue
        skew, together = overlap_of(sample.clients)
        starts = ", ".join(
            f"{c.client.removeprefix('ssh://')} {c.metrics.get('start_offset_s', float('nan')) * 1000:.0f}"
            for c in sample.clients
        )
        fio_time += max((c.metrics.get("active_s", 0.0) for c in sample.clients), default=0.0)
        if skew is None or together is None:
            print(f"{sample.workload:<22} {sample.target:<6} {sample.round:>5}  no timestamps")
            continue
        skews.append(skew)
        overlaps.append(together)
        flagged += any(c.code == LOW_OVERLAP for c in sample.caveats)
        where = f"{sample.workload:<22} {sample.target:<6} {sample.round:>5}"
        print(f"{where} {skew * 1000:>6.0f}ms {together:>8.1%}  {starts}")
    if skews:
        print(f"start skew: median {statistics.median(skews) * 1000:.0f} ms, max {max(skews) * 1000:.0f} ms over "
              f"{len(skews)} samples; overlap: median {statistics.median(overlaps):.1%}, least {min(overlaps):.1%}; "
              f"flagged (< {OVERLAP_FLOOR:.0%}): {flagged} of {len(skews)}")  # fmt: skip
    facts = run.host.get("clients", {})
    for label, f in facts.items():
        print(f"{label}: {f.get('fio_version')} kernel {f.get('kernel')}, clock offset "
              f"{f.get('clock_offset_ms')} ms ± {f.get('clock_uncertainty_ms')}, {f.get('fio_server')}")  # fmt: skip
    print(f"wall {wall:.1f} s for {len(run.samples)} samples; the clients' I/O ran {fio_time:.1f} s of it")


if __name__ == "__main__":
    main()
