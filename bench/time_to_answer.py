"""Time to a trustworthy answer: how long adaptive repetitions take to decide every cell of
the quick preset, and whether their verdicts agree with a long reference run.

Three pairs of real targets:
  far:    the VM's disk (--disk, default /var/tmp) against tmpfs (/dev/shm);
  medium: an ext4 filesystem on a loop device with direct I/O (losetup --direct-io=on), its image
          a file on that same disk, against a directory of the disk: the loop layer's cost, 1.2-1.8x
          on small random I/O here, about 1x on 1M sequential (as root; skipped otherwise);
  close:  two directories on that same disk (no real difference expected).
For each pair: the default run (a plain `mountbench run A B`: quick under its default
budget), one adaptive run (`--until 5%`) and one `--budget 45s`, and one reference run
of 10 rounds x 5 s. Per cell the verdict is the run's own (better, worse, same,
undecided: three verdicts, analysis/stats.py); agreement is the share of cells whose
verdict equals the reference's, and "decided agreement" the share among the cells both
decided (better/worse/same). A confident wrong verdict is one that says better where
the reference says worse or the reverse, or better/worse where the reference says same.

Goal here (issue 31): the far pair's default run decides 6 of 6 within 40 s; the medium pair's
default run decides at least 5 of 6 as the reference does; no pair ever a confident wrong verdict.

usage: python bench/time_to_answer.py [--disk /var/tmp] [--reference-rounds 20] [--reference-runtime 2]
                                     [--pairs far,medium,close] [--modes default,until,budget]
       python bench/time_to_answer.py --smoke   (tiny runs: the script works)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from _common import MOUNTBENCH, check, timed


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


def run(label: str, targets: list[str], extra: list[str], work: Path) -> tuple[float, dict, dict]:
    out = work / f"{label}.json"
    argv = [*MOUNTBENCH, "run", *targets, "--db", str(work / "db.sqlite"), "--json", str(out)]
    wall, proc = timed([*argv, *extra])
    check(proc)
    document = json.loads(out.read_text())
    rounds = {}
    for sample in document["runs"][0]["samples"]:
        key = (sample["target"], sample["workload"])
        rounds[key] = rounds.get(key, 0) + 1
    return wall, document, rounds


def compare(name: str, adaptive: dict, reference: dict) -> tuple[float, float, int]:
    """(agreement, agreement among the cells both decided, confidently wrong verdicts)."""
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
    return agree / max(1, len(reference)), both_agree / max(1, both), wrong


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` busy loops (bounded: killed on the way out, and by themselves after 30 minutes)."""
    hogs = [subprocess.Popen(["timeout", "1800", "sh", "-c", "while :; do :; done"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.terminate()  # timeout passes SIGTERM on to its busy loop
            hog.wait()


def _headlines(document: dict) -> list[str]:
    """What the run's export says of its samples' noise: re-read with the report's own words."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from mountbench.analysis.noise import noise_of
    from mountbench.records.codec import run_from_dict

    runs = [run_from_dict(run) for run in document["runs"]]
    return [noise_of(s for run in runs for s in run.samples).sentence()]


@contextlib.contextmanager
def loop_ext4(disk: Path, size_mib: int = 1200) -> Iterator[Path | None]:
    """A directory on ext4 on a loop device (direct I/O to its image, a file on ``disk``); None
    when not root. Everything made is removed on the way out."""
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        yield None
        return
    image = Path(tempfile.mkstemp(prefix="tta-loop-", suffix=".img", dir=disk)[1])
    mount = Path(tempfile.mkdtemp(prefix="tta-loop-mnt-"))
    device = ""
    try:
        subprocess.run(["truncate", "-s", f"{size_mib}M", str(image)], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
        device = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", str(image)], check=True,
                                capture_output=True, text=True).stdout.strip()  # fmt: skip
        subprocess.run(["mount", device, str(mount)], check=True)
        (mount / "d").mkdir()
        yield mount / "d"
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
        if device:
            subprocess.run(["losetup", "-d", device], capture_output=True)
        shutil.rmtree(mount, ignore_errors=True)
        image.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--disk", default="/var/tmp", help="a directory on the VM's disk")
    parser.add_argument("--reference-rounds", type=int, default=20)
    parser.add_argument("--reference-runtime", type=float, default=2.0)
    parser.add_argument("--pairs", default="far,medium,close", help="which pairs, comma-separated")
    parser.add_argument("--hogs", type=int, default=0, help="CPU hogs (busy loops) running during the runs, not the "
                        "reference: does a busy machine make a confident wrong verdict, and is it named?")  # fmt: skip
    parser.add_argument("--modes", default="default,until,budget", help="which runs of each pair, comma-separated")
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
    work = Path(tempfile.mkdtemp(prefix="time-to-answer-"))
    disk_a = Path(tempfile.mkdtemp(prefix="tta-a-", dir=args.disk))
    disk_b = Path(tempfile.mkdtemp(prefix="tta-b-", dir=args.disk))
    with loop_ext4(Path(args.disk)) as loop:
        pairs = {"far": ["ram=/dev/shm", f"disk={disk_a}"], "close": [f"a={disk_a}", f"b={disk_b}"]}
        if loop is not None:
            pairs["medium"] = [f"disk={disk_a}", f"loop={loop}"]
        wanted = ["far"] if args.smoke else args.pairs.split(",")
        pairs = {name: pairs[name] for name in wanted if name in pairs}
        for name in set(wanted) - set(pairs):
            print(f"== {name} pair: skipped (it needs root and losetup for the loop device)")
        _run_pairs(pairs, modes, reference_extra, work, disk_a, disk_b, args.hogs)


def _run_pairs(
    pairs: dict[str, list[str]],
    modes: dict[str, list[str]],
    reference_extra: list[str],
    work: Path,
    disk_a: Path,
    disk_b: Path,
    hogs: int = 0,
) -> None:
    try:
        for name, targets in pairs.items():
            print(f"== {name} pair: {' vs '.join(targets)}", flush=True)
            reference_wall, reference, _ = run(f"{name}-reference", targets, reference_extra, work)
            expected = verdicts(reference)
            print(f"reference: {reference_extra} in {reference_wall:.0f} s", flush=True)
            for row in reference["summary"]:
                if row["target"] != row["baseline"] and row["ratio"] is not None:
                    print(f"  reference {row['workload']:18} {row['metric']:11} ratio {row['ratio']:.3g} "
                          f"({row['ratio_low']:.3g}-{row['ratio_high']:.3g}) {row['verdict']}")  # fmt: skip
            for mode, extra in modes.items():
                with cpu_hogs(hogs):
                    wall, document, rounds = run(f"{name}-{mode}", targets, extra, work)
                if hogs:
                    said = [line for line in _headlines(document) if "busy" in line]
                    print(f"  with {hogs} CPU hogs: the noise named: {said[0] if said else 'NOT NAMED'}")
                agreement, decided, wrong = compare(mode, verdicts(document), expected)
                spread = f"{min(rounds.values())}-{max(rounds.values())} rounds per cell"
                print(
                    f"{name} {mode:7}: {wall:6.1f} s to the answer ({spread}); agreement with the reference "
                    f"{agreement:.0%} (where both decided: {decided:.0%}); confidently wrong: {wrong}",
                    flush=True,
                )
    finally:
        shutil.rmtree(disk_a, ignore_errors=True)
        shutil.rmtree(disk_b, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
