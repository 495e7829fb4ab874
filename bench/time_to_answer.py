"""Time to a trustworthy answer: how long adaptive repetitions take to decide every cell of
the quick preset, and whether their verdicts agree with a long reference run.

Three pairs of real targets:
  far:    the VM's disk (--disk, default /var/tmp) against tmpfs (/dev/shm);
  medium: two ext4 filesystems on loop devices whose images are files in tmpfs; the second's device
          uses the BFQ I/O scheduler (the first's none) and is capped by the block layer's throttle (cgroup
          v1 blkio.throttle.*) at the first's own bandwidth / --cap-ratio (1.35), measured with fio at the
          start, reads and writes apart: a provisioned, BFQ-scheduled volume against the same volume open
          (as root with losetup and the blkio throttle; skipped otherwise). BFQ's work on every request is
          latency no cap adds, so 4K I/O at depth 1 and 32 is slower too; the caps make 1M I/O so. Quiet
          20-round reference (this wave): 1.51x, 1.51x (1M read, write), 1.63x, 1.36x (4K q32 read, write),
          2.30x, 1.37x (4K q1 read, write) slower. --caps and --capped-scheduler choose others (the IOPS
          caps alone, as until this wave, left both 4K q1 workloads at 1.0x). The runs of this pair are
          started in the cgroup that holds the caps; everything made is removed at the end;
  close:  two directories on that same disk (no real difference expected).
For each pair: the default run (a plain `mountbench run A B`: quick under its default
budget), one adaptive run (`--until 5%`) and one `--budget 45s` (--runs N of each), and one
reference run of 20 rounds x 2 s. Per cell the verdict is the run's own (better, worse, same,
undecided: three verdicts, analysis/stats.py); agreement is the share of cells whose
verdict equals the reference's, and "decided agreement" the share among the cells both
decided (better/worse/same). A confident wrong verdict is one that says better where
the reference says worse or the reverse, or better/worse where the reference says same.

Goal here (issue 31): the far pair's default run decides 6 of 6 within 40 s; the medium pair's
default run decides at least 5 of 6 as the reference does; no pair ever a confident wrong verdict.

usage: python bench/time_to_answer.py [--disk /var/tmp] [--reference-rounds 20] [--reference-runtime 2]
                                     [--pairs far,medium,close] [--modes default,until,budget] [--runs N]
                                     [--cap-ratio 1.35] [--caps read_bps,...] [--capped-scheduler bfq] [--hogs N]
       python bench/time_to_answer.py --smoke   (tiny runs: the script works)
Every figure is printed with the machine's load averages (other work shares its CPUs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from _common import MOUNTBENCH, check, cpu_hogs, load, timed


def verdicts(document: dict) -> dict[tuple[str, str], str]:
    """(workload, metric) -> better | worse | same | undecided | unknown, for the non-baseline target."""
    return {
        (row["workload"], row["metric"]): row["verdict"]
        for row in document["summary"]
        if row["target"] != row["baseline"] and row["ratio"] is not None
    }


DECIDED = ("better", "worse", "same")


def confidently_wrong(got: str, expected: str) -> bool:
    return got in ("better", "worse") and expected in DECIDED and got != expected


def run(
    label: str, targets: list[str], extra: list[str], work: Path, cgroup: Path | None = None
) -> tuple[float, dict, dict]:
    """One mountbench run (started in ``cgroup``, a cgroup.procs file, when given): wall time, export, rounds."""
    out = work / f"{label}.json"
    argv = [*MOUNTBENCH, "run", *targets, "--db", str(work / "db.sqlite"), "--json", str(out), *extra]
    if cgroup is not None:
        argv = ["sh", "-c", f'echo $$ > {cgroup} && exec "$@"', "sh", *argv]
    wall, proc = timed(argv)
    check(proc)
    document = json.loads(out.read_text())
    rounds = {}
    for sample in document["runs"][0]["samples"]:
        key = (sample["target"], sample["workload"])
        rounds[key] = rounds.get(key, 0) + 1
    return wall, document, rounds


def compare(name: str, adaptive: dict, reference: dict) -> tuple[float, float, int, int]:
    """(agreement, agreement among the cells both decided, confidently wrong verdicts, cells decided as
    the reference decided them)."""
    agree = wrong = both = both_agree = 0
    for key, expected in reference.items():
        got = adaptive.get(key, "missing")
        agree += got == expected
        if got in DECIDED and expected in DECIDED:
            both += 1
            both_agree += got == expected
        bad = confidently_wrong(got, expected)
        wrong += bad
        marker = "   <-- CONFIDENTLY WRONG" if bad else ""
        print(f"  {name:8} {key[0]:18} {key[1]:11} {got:9} reference {expected:9}{marker}")
    return agree / max(1, len(reference)), both_agree / max(1, both), wrong, both_agree


def _headlines(document: dict) -> list[str]:
    """What the run's export says of its samples' noise: re-read with the report's own words."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from mountbench.analysis.noise import noise_of
    from mountbench.records.codec import run_from_dict

    runs = [run_from_dict(run) for run in document["runs"]]
    return [noise_of(s for run in runs for s in run.samples).sentence()]


@contextlib.contextmanager
def loop_ext4(image_dir: Path, name: str, size_mib: int = 1200) -> Iterator[tuple[Path, str]]:
    """A directory on ext4 on a loop device whose image is a file in ``image_dir``, and the device's
    major:minor. Everything made is removed on the way out."""
    image = Path(tempfile.mkstemp(prefix=f"tta-{name}-", suffix=".img", dir=image_dir)[1])
    mount = Path(tempfile.mkdtemp(prefix=f"tta-{name}-mnt-"))
    device = ""
    try:
        subprocess.run(["truncate", "-s", f"{size_mib}M", str(image)], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
        device = subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True,
                                text=True).stdout.strip()  # fmt: skip
        subprocess.run(["mount", device, str(mount)], check=True)
        (mount / "d").mkdir()
        rdev = os.stat(device).st_rdev
        yield mount / "d", f"{os.major(rdev)}:{os.minor(rdev)}"
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
        if device:
            subprocess.run(["losetup", "-d", device], capture_output=True)
        shutil.rmtree(mount, ignore_errors=True)
        image.unlink(missing_ok=True)


# what the caps are measured with: the quick preset's I/O (direct, libaio, 256 MiB), the pattern each cap governs.
# One IOPS cap serves both 4K depths; it is set from depth 32, the faster: capped from depth 1 it cut depth 32 to
# 1/6-1/7 (ratios of 6-7x, not medium) and left depth 1 near 1.1x; from depth 32, depth 1 runs below it (1.0x).
# So by default only the bandwidth caps are set and BFQ slows the 4K workloads (DEFAULT_CAPS, DEFAULT_SCHEDULER).
CALIBRATION = {
    "read_bps": ("read", "1M", 8, "bw_bytes"),
    "write_bps": ("write", "1M", 8, "bw_bytes"),
    "read_iops": ("randread", "4k", 32, "iops"),
    "write_iops": ("randwrite", "4k", 32, "iops"),
}
BLKIO = Path("/sys/fs/cgroup/blkio")
CAP_RATIO = 1.35  # the medium pair: the capped filesystem at 1/1.35 of the open one's speed
DEFAULT_CAPS = ("read_bps", "write_bps")
DEFAULT_SCHEDULER = "bfq"


def own_speeds(directory: Path, runtime_s: float = 1.0, times: int = 3) -> dict[str, float]:
    """The uncapped filesystem's own speed for each cap (CALIBRATION), measured with plain fio: the
    median of ``times`` samples, so that one burst of other work does not set a cap."""
    speeds = {}
    for cap, (rw, bs, depth, field) in CALIBRATION.items():
        argv = ["fio", "--name=cal", f"--directory={directory}", "--size=256M", "--direct=1", "--ioengine=libaio",
                f"--rw={rw}", f"--bs={bs}", f"--iodepth={depth}", "--time_based=1", f"--runtime={runtime_s}",
                "--output-format=json"]  # fmt: skip
        found = []
        for _ in range(times):
            job = json.loads(check(timed(argv)[1]).stdout)["jobs"][0]
            found.append(float(job["read" if "read" in rw else "write"][field]))
        speeds[cap] = sorted(found)[len(found) // 2]
        if max(found) > 1.2 * min(found):
            print(f"note: calibrating {cap}, the open filesystem's samples varied {max(found) / min(found):.2f}x "
                  f"({load()}): the caps, and so the ratios, follow the machine's load")  # fmt: skip
    for leftover in directory.glob("cal.*"):
        leftover.unlink()
    return speeds


@contextlib.contextmanager
def capped_pair(
    ratio: float,
    caps: Sequence[str] = DEFAULT_CAPS,
    scheduler: str = DEFAULT_SCHEDULER,
    image_dir: Path = Path("/dev/shm"),
) -> Iterator[tuple[list[str], Path, str] | None]:
    """The medium pair: two ext4 filesystems on loop devices whose images are files in tmpfs, the
    second's device scheduled by ``scheduler`` (the first's: none), e.g. bfq, whose work on each request
    is latency that no cap adds, and capped by the block layer's throttle (cgroup v1 blkio.throttle.*,
    on a cgroup of its own that the runs are started in) at the first's own speed ÷ ``ratio``, for
    each of ``caps`` (CALIBRATION's: bandwidth for 1M I/O, IOPS for 4K, reads and writes apart).
    Yields (targets, the cgroup's procs file, what the caps are), or None without root, losetup or
    the blkio throttle. Everything made is removed on the way out."""
    if os.geteuid() != 0 or shutil.which("losetup") is None or not (BLKIO / "blkio.throttle.read_bps_device").exists():
        yield None
        return
    opened, capped = loop_ext4(image_dir, "open"), loop_ext4(image_dir, "capped")
    with opened as (open_dir, open_device), capped as (capped_dir, device):
        if scheduler:
            (Path("/sys/dev/block") / open_device / "queue" / "scheduler").write_text("none")
            (Path("/sys/dev/block") / device / "queue" / "scheduler").write_text(scheduler)
        speeds = {cap: speed for cap, speed in own_speeds(open_dir).items() if cap in caps}
        group = Path(tempfile.mkdtemp(prefix="tta-", dir=BLKIO))
        try:
            for cap, speed in speeds.items():
                (group / f"blkio.throttle.{cap}_device").write_text(f"{device} {int(speed / ratio)}\n")
            said = ", ".join(f"{cap} {speed / ratio:.3g}" for cap, speed in speeds.items())
            said += f"; the capped device's I/O scheduler: {scheduler}" if scheduler else ""
            yield [f"open={open_dir}", f"capped={capped_dir}"], group / "cgroup.procs", said
        finally:
            _remove_cgroup(group)


def _remove_cgroup(group: Path) -> None:
    """rmdir the cgroup once its processes are gone (the runs ended: at most a moment's wait)."""
    for _ in range(50):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)
    print(f"note: could not remove the cgroup {group}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--disk", default="/var/tmp", help="a directory on the VM's disk")
    parser.add_argument("--reference-rounds", type=int, default=20)
    parser.add_argument("--reference-runtime", type=float, default=2.0)
    parser.add_argument("--pairs", default="far,medium,close", help="which pairs, comma-separated")
    parser.add_argument("--hogs", type=int, default=0, help="CPU hogs (busy loops) running during the runs, not the "
                        "reference: does a busy machine make a confident wrong verdict, and is it named?")  # fmt: skip
    parser.add_argument("--modes", default="default,until,budget", help="which runs of each pair, comma-separated")
    parser.add_argument("--runs", type=int, default=1, help="runs of each mode (each compared with the one reference)")
    parser.add_argument("--cap-ratio", type=float, default=CAP_RATIO, help="the medium pair's caps: the open "
                        "filesystem's own speed divided by this")  # fmt: skip
    parser.add_argument("--caps", default=",".join(DEFAULT_CAPS), help="the medium pair's caps, comma-separated, "
                        f"from {', '.join(CALIBRATION)}")  # fmt: skip
    parser.add_argument("--capped-scheduler", default=DEFAULT_SCHEDULER, help="the medium pair's capped device's "
                        "I/O scheduler (none, mq-deadline, kyber, bfq; the open one keeps none)")  # fmt: skip
    parser.add_argument("--budget", default="45s")
    parser.add_argument("--smoke", action="store_true", help="tiny runs of one workload: the script works")
    args = parser.parse_args()
    modes: dict[str, list[str]] = {"default": [], "until": ["--until", "5%"], "budget": ["--budget", args.budget]}
    modes = {name: extra for name, extra in modes.items() if name in args.modes.split(",")}
    reference_extra = ["--repeat", str(args.reference_rounds), "--runtime", str(args.reference_runtime)]
    if args.smoke:
        tiny = ["--only", "seq1m-q8-read", "--size", "16M"]
        modes = {"until": ["--until", "50%", "--max-repeat", "3", "--runtime", "0.2", *tiny]}
        reference_extra = ["--repeat", "2", "--runtime", "0.2", *tiny]
    wanted = ["far"] if args.smoke else args.pairs.split(",")
    work = Path(tempfile.mkdtemp(prefix="time-to-answer-"))
    disk_a = Path(tempfile.mkdtemp(prefix="tta-a-", dir=args.disk))
    disk_b = Path(tempfile.mkdtemp(prefix="tta-b-", dir=args.disk))
    caps = [cap for cap in args.caps.split(",") if cap]
    unknown = [cap for cap in caps if cap not in CALIBRATION]
    if unknown:
        parser.error(f"unknown cap {unknown[0]}; choose from {', '.join(CALIBRATION)}")
    chosen_pair = capped_pair(args.cap_ratio, caps, args.capped_scheduler)
    medium = chosen_pair if "medium" in wanted else contextlib.nullcontext(None)
    try:
        with medium as capped:
            pairs: dict[str, tuple[list[str], Path | None]] = {
                "far": (["ram=/dev/shm", f"disk={disk_a}"], None),
                "close": ([f"a={disk_a}", f"b={disk_b}"], None),
            }
            if capped is not None:
                targets, procs, caps = capped
                pairs["medium"] = (targets, procs)
                print(f"medium pair: capped at the open filesystem's own speed / {args.cap_ratio:g}: {caps}")
            for name in [n for n in wanted if n not in pairs]:
                print(f"== {name} pair: skipped (it needs root, losetup and the cgroup v1 blkio throttle)")
            chosen = {name: pairs[name] for name in wanted if name in pairs}
            _run_pairs(chosen, modes, reference_extra, work, args.hogs, args.runs)
    finally:
        shutil.rmtree(disk_a, ignore_errors=True)
        shutil.rmtree(disk_b, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def _run_pairs(
    pairs: dict[str, tuple[list[str], Path | None]],
    modes: dict[str, list[str]],
    reference_extra: list[str],
    work: Path,
    hogs: int = 0,
    runs: int = 1,
) -> None:
    for name, (targets, cgroup) in pairs.items():
        print(f"== {name} pair: {' vs '.join(targets)} ({load()})", flush=True)
        reference_wall, reference, _ = run(f"{name}-reference", targets, reference_extra, work, cgroup)
        expected = verdicts(reference)
        print(f"reference: {reference_extra} in {reference_wall:.0f} s ({load()})", flush=True)
        for row in reference["summary"]:
            if row["target"] != row["baseline"] and row["ratio"] is not None:
                print(f"  reference {row['workload']:18} {row['metric']:11} ratio {row['ratio']:.3g} "
                      f"({row['ratio_low']:.3g}-{row['ratio_high']:.3g}) {row['verdict']}")  # fmt: skip
        for mode, extra in modes.items():
            tally = []
            for index in range(runs):
                with cpu_hogs(hogs):
                    wall, document, rounds = run(f"{name}-{mode}-{index}", targets, extra, work, cgroup)
                if hogs:
                    said = [line for line in _headlines(document) if "busy" in line]
                    print(f"  with {hogs} CPU hogs: the noise named: {said[0] if said else 'NOT NAMED'}")
                agreement, decided, wrong, as_reference = compare(mode, verdicts(document), expected)
                tally.append((as_reference, wrong))
                spread = f"{min(rounds.values())}-{max(rounds.values())} rounds per cell"
                print(
                    f"{name} {mode:7}: {wall:6.1f} s to the answer ({spread}); agreement with the reference "
                    f"{agreement:.0%} (where both decided: {decided:.0%}); decided as the reference: {as_reference} "
                    f"of {len(expected)}; confidently wrong: {wrong} ({load()})",
                    flush=True,
                )
            if runs > 1:
                counts = ", ".join(str(k) for k, _ in tally)
                print(f"{name} {mode}: decided as the reference in {runs} runs: {counts} of {len(expected)}; "
                      f"confidently wrong in all: {sum(w for _, w in tally)}")  # fmt: skip


if __name__ == "__main__":
    main()
