"""Lab boot time and overhead: how long before the guest runs the first command, and
how much of the lab's wall time is not the workload.

Prints, per run:
  - prepare: Guest() start -> QEMU started (accel probe, initramfs, daemons, images)
  - boot:    QEMU started -> the first command starting in the guest (kernel, host
             root, every mount), with the kernel/root/mounts split
  - total overhead: the lab's whole wall time minus the workload's own time
Also the start-up time of host programs in the guest chroot (Python, mountbench, fio),
timed by the guest's clock.

usage: python bench/lab_boot.py [--mount SPEC]... [--accel auto|kvm|tcg] [--root auto|9p|virtiofs]
                                [--runs N] [--fio] [--json] [--smoke]

--smoke: one boot under TCG with the guest's own tmpfs only, Python's start-up
timed once (cold; the others, ~45 s under TCG, are only checked on the host), a 0.2 s fio
on it: under half a minute (the test suite runs it so a broken bench fails CI).
A start-up command that fails in the guest makes the bench exit 1.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from mountbench.labs.qemu import DEFAULT_MOUNTS, Guest, parse_mount_spec

VENV_PYTHON = Path(sys.executable)

# Guest-clock timings of program start-up, run twice (cold, then warm caches).
STARTUP = {
    "python": f"{VENV_PYTHON} -c pass",
    "import mountbench.cli.main": f"{VENV_PYTHON} -c 'import mountbench.cli.main'",
    "mountbench --help": f"{VENV_PYTHON} -m mountbench --help >/dev/null",
    "fio --version": "fio --version >/dev/null",
}
SMOKE_STARTUP = ("python",)


def startup_script(names: tuple[str, ...] = tuple(STARTUP), attempts: tuple[str, ...] = ("cold", "warm")) -> str:
    lines = []
    for name in names:
        cmd = STARTUP[name]
        for attempt in attempts:
            lines.append(
                f"s=$(date +%s.%N); {cmd}; rc=$?; e=$(date +%s.%N); "
                f"awk -v a=$s -v b=$e -v rc=$rc 'BEGIN {{ printf \"STARTUP {attempt} %d %.3f {name}\\n\", rc, b - a }}'"
            )
    return "\n".join(lines)


def fio_script(guest: Guest, runtime: float = 1.0) -> str:
    return "\n".join(
        f"fio --name=b --directory={m.guest_path} --rw=randread --bs=4k --size=8M --runtime={round(runtime * 1000)}ms "
        f"--time_based --output-format=json --output=/results/{m.slug}.json"
        for m in guest.mounts
    )


def one_run(args: argparse.Namespace) -> dict[str, object]:
    specs = [parse_mount_spec(s) for s in args.mount] if args.mount else list(DEFAULT_MOUNTS)
    startup: dict[str, dict[str, float]] = {}
    t0 = time.monotonic()
    workload_s = 0.0
    with Guest(specs, accel=args.accel, root=args.root) as guest:

        def on_line(line: str) -> None:
            m = re.match(r"STARTUP (cold|warm) (\d+) ([\d.]+) (.*)", line)
            if m:
                status = "" if m.group(2) == "0" else f" (exit {m.group(2)})"
                startup.setdefault(m.group(4) + status, {})[m.group(1)] = float(m.group(3))

        rc = guest.run_in_guest("true")
        assert rc == 0
        workload_s += guest.commands[-1].seconds or 0.0
        script = startup_script(SMOKE_STARTUP, ("cold",)) if args.smoke else startup_script()
        guest.run_in_guest(script, on_line=on_line)
        workload_s += guest.commands[-1].seconds or 0.0
        iops: dict[str, float] = {}
        if args.fio:
            guest.run_in_guest(fio_script(guest, 0.2 if args.smoke else 1.0))
            workload_s += guest.commands[-1].seconds or 0.0
            for m in guest.mounts:
                report = json.loads((guest.results_path / f"{m.slug}.json").read_text())
                iops[m.label] = report["jobs"][0]["read"]["iops"]
        desc = guest.describe()
    total = time.monotonic() - t0
    times = guest.times
    return {
        "accel": desc.accel,
        "root": desc.root,
        "mounts": [m.label for m in guest.mounts],
        "prepare_s": times.prepare_s,
        "kernel_s": times.kernel_s,
        "root_s": times.root_s,
        "ready_s": times.ready_s,
        "boot_s": times.first_command_s,
        "shutdown_s": times.shutdown_s,
        "total_s": total,
        "workload_s": workload_s,
        "overhead_s": total - workload_s,
        "startup_s": startup,
        "fio_read_iops": iops,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mount", action="append", default=[], help="mount spec (repeatable; default set)")
    parser.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"])
    parser.add_argument("--root", default="auto", choices=["auto", "9p", "virtiofs"])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--fio", action="store_true", help="also run a 1 s 4k randread on every mount")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--smoke", action="store_true", help="one TCG boot, guest tmpfs only, short timings")
    args = parser.parse_args()
    if args.smoke:
        args.mount, args.accel, args.runs, args.fio = ["guest-tmpfs"], "tcg", 1, True
        for name, cmd in STARTUP.items():  # what the guest would run, checked where it is quick
            if subprocess.run(cmd, shell=True, capture_output=True).returncode != 0:
                sys.exit(f"start-up command {name!r} fails on the host: {cmd}")
    results = [one_run(args) for _ in range(args.runs)]
    failed = sorted({name for r in results for name in r["startup_s"] if "(exit " in name})  # type: ignore[attr-defined]
    if args.json:
        print(json.dumps(results, indent=2))
        sys.exit(1 if failed else 0)
    for i, r in enumerate(results, 1):
        print(f"run {i}: accel={r['accel']} root={r['root']} mounts={len(r['mounts'])}")  # type: ignore[arg-type]
        print(
            f"  prepare {r['prepare_s']:.1f} s | boot (QEMU start -> command start) {r['boot_s']:.1f} s "
            f"[kernel to init {r['kernel_s']:.1f} s, host root {r['root_s']:.1f} s, "
            f"mounts ready {r['ready_s']:.1f} s] | shutdown {r['shutdown_s']:.1f} s"
        )
        print(f"  total {r['total_s']:.1f} s, workload {r['workload_s']:.1f} s, lab overhead {r['overhead_s']:.1f} s")
        for name, t in r["startup_s"].items():  # type: ignore[union-attr]
            print(f"  in guest: {name:24s} cold {t.get('cold', 0):.2f} s, warm {t.get('warm', 0):.2f} s")
        for label, iops in r["fio_read_iops"].items():  # type: ignore[union-attr]
            print(f"  fio 4k randread {label:40s} {iops:10,.0f} IOPS")
    if failed:
        sys.exit(f"start-up commands failed in the guest: {', '.join(failed)}")


if __name__ == "__main__":
    main()
