"""Sample cost: what one fio sample costs beyond its I/O, and whether another way of starting fio
cuts it.

A default sample is one fio process running one job for 500 ms; `bench/overhead.py` measures
that the process takes about 245 ms more than that, while mountbench's own work between samples
is a few ms. This script times, interleaved (round-robin, so the VM's drift hits every variant
alike), the ways fio could run a round's samples:
  - one process per sample, as mountbench does;
  - one process for k samples, the jobs separated by `stonewall` (each job still reports apart);
  - a long-lived local fio server (`fio --server=sock:...`), one `fio --client` per sample;
and, to split the floor, `fio --version` (exec and linking) and `fio --parse-only` (that, plus
fio's clock calibration and parsing: what every fio process pays before its first job).

Where the rest of the floor is, from fio's source (3.33): gettime.c calibrates the CPU clock in
every process, 50 rounds of 1.28 ms whatever `clocksource` says; backend.c's run_threads sleeps
100 ms after it forks a job before it checks the job is ready, then polls its end every 10 ms. A
stonewalled job pays that wait again (and another 100 ms when jobs remain), and the client of a
fio server waits on its own polling: neither is cheaper than a process per sample.

Figures: each variant's cost per sample beyond the configured runtime (median of the
repetitions, ms), and that cost's share of a sample's wall time.

usage: python bench/sample_cost.py [--dir DIR] [--runtime-ms 500] [--repeat 7] [--batch 6] [--smoke]
--dir: where the working file goes (default: a new directory in /dev/shm).
--smoke: a 100 ms job, one repetition, batches of 2: seconds; the test suite runs it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import check, load

JOB = """[sample{index}]
{stonewall}ioengine=libaio
direct=1
filename={file}
size={size}
rw=randread
bs=4k
iodepth=1
runtime={runtime_ms}ms
time_based=1
lat_percentiles=1
clocksource=cpu
"""


def job_text(file: Path, size: str, runtime_ms: int, count: int) -> str:
    """``count`` jobs like a default 4K-read sample, one after another (``stonewall``)."""
    return "\n".join(
        JOB.format(index=i, stonewall="stonewall\n" if i else "", file=file, size=size, runtime_ms=runtime_ms)
        for i in range(count)
    )


def wall(argv: list[str], cwd: Path) -> float:
    start = time.monotonic()
    check(subprocess.run(argv, cwd=cwd, capture_output=True, text=True))
    return time.monotonic() - start


def start_server(work: Path) -> tuple[subprocess.Popen, str]:
    """A local fio server on a unix socket in ``work``, ready when the socket exists."""
    socket = work / "fio.sock"
    server = subprocess.Popen(
        ["fio", f"--server=sock:{socket}"], cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 10
    while not socket.exists():
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise SystemExit("the fio server did not start")
        time.sleep(0.05)
    return server, f"sock:{socket}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="directory for the working file (default: a new one in /dev/shm)")
    parser.add_argument("--runtime-ms", type=int, default=500, help="each job's runtime (mountbench's default: 500)")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions of each variant, interleaved")
    parser.add_argument("--batch", type=int, default=6, help="jobs in the one-process variant (a round: 6)")
    parser.add_argument("--smoke", action="store_true", help="a 100 ms job, one repetition, batches of 2")
    args = parser.parse_args()
    if args.smoke:
        args.runtime_ms, args.repeat, args.batch = 100, 1, 2
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed (apt-get install fio)")
    data = Path(tempfile.mkdtemp(prefix="sample-cost-", dir=args.dir or "/dev/shm"))
    work = Path(tempfile.mkdtemp(prefix="sample-cost-work-"))
    size = "16M" if args.smoke else "256M"
    file = data / "working-file"
    one = work / "one.fio"
    one.write_text(job_text(file, size, args.runtime_ms, 1))
    batch = work / "batch.fio"
    batch.write_text(job_text(file, size, args.runtime_ms, args.batch))
    server = None
    try:
        server, address = start_server(work)
        wall(["fio", "--output=/dev/null", str(one)], work)  # lays the working file out, untimed
        runtime = args.runtime_ms / 1000
        costs: dict[str, list[float]] = {name: [] for name in ("version", "parse", "one", "batch", "server")}
        json_out = ["--output-format=json+", f"--output={work / 'out.json'}"]
        for _ in range(args.repeat):
            costs["version"].append(wall(["fio", "--version"], work))
            costs["parse"].append(wall(["fio", "--parse-only", str(one)], work))
            costs["one"].append(wall(["fio", *json_out, str(one)], work) - runtime)
            costs["batch"].append((wall(["fio", *json_out, str(batch)], work) - args.batch * runtime) / args.batch)
            costs["server"].append(wall(["fio", *json_out, f"--client={address}", str(one)], work) - runtime)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    ms = {name: statistics.median(values) * 1000 for name, values in costs.items()}
    sample_ms = args.runtime_ms
    print(f"fio sample cost: a {sample_ms} ms 4K-read job, {args.repeat} interleaved repetitions ({load()})")
    print(f"  fio --version (exec and linking)                        {ms['version']:6.0f} ms")
    print(f"  fio --parse-only (that, clock calibration, parsing)     {ms['parse']:6.0f} ms")
    print("cost per sample beyond its runtime (share of the sample's wall time):")
    rows = (
        ("one process per sample (mountbench)", "one"),
        (f"one process for {args.batch} samples, stonewall", "batch"),
        ("a long-lived fio server, fio --client per sample", "server"),
    )
    for label, key in rows:
        print(f"  {label:50}  {ms[key]:6.0f} ms  ({ms[key] / (ms[key] + sample_ms):4.0%})")


if __name__ == "__main__":
    main()
