"""--sweep and the s3 preset with real fio on real directories (tmpfs and the test's disk)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from support import realmounts
from support.runhelpers import load_export, mountbench, plant_neighbours, snapshot
from support.tools import needs_fio

from mountbench.records.export import FORMAT_VERSION

QUICK = ["--runtime", "0.2", "--size", "8M"]


@pytest.fixture(autouse=True)
def _fio():
    needs_fio()


def assert_one_line_error(proc, *fragments: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.slow
def test_s3_preset_swept_on_tmpfs_and_a_directory_in_every_format(tmp_path, mb_env):
    disk = tmp_path / "disk"
    disk.mkdir()
    before = plant_neighbours(disk)
    out = tmp_path / "run.json"
    with realmounts.tmpfs("64m") as ram:
        proc = mountbench(
            "run", f"ram={ram}", f"disk={disk}", "--preset", "s3", "--sweep", "bs=4k,64k,1M", "--only", "seq*",
            "--repeat", "1", *QUICK, "--json", str(out), env=mb_env, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert not [p for p in Path(ram).iterdir() if p.name.startswith(".mountbench-")]
    assert snapshot(disk) == before
    (run,) = load_export(out)["runs"]
    names = {w["name"] for w in run["workloads"]}
    assert names == {f"{w}@bs={bs}" for w in ("seqw-buffered", "seqw-fsync", "seqr") for bs in ("4k", "64k", "1M")}
    assert run["config"]["sweeps"][0]["values"] == ["4k", "64k", "1M"]
    assert len(run["samples"]) == 9 * 2 and all(s["ok"] for s in run["samples"])
    for sample in run["samples"]:
        texts = " ".join(c["text"] for c in sample["caveats"])
        if sample["workload"].startswith("seqw-buffered"):
            assert "what S3's dd loop measured" in texts and "page cache may serve these" not in texts
        if sample["workload"].startswith("seqw-fsync"):
            assert "page cache" not in texts  # synced before it counts
        assert sample["metrics"]["write.bw" if "seqw" in sample["workload"] else "read.bw"] > 0
    # the terminal: a table per sweep after the comparison table
    words = " ".join(proc.stdout.split())  # the terminal wraps at its width
    assert words.count("against block size") == 3 and "★ optimum" in words and "◆ knee" in words
    # CSV: the sweeps file; JSON: its rows; Markdown: a chart per sweep
    table = tmp_path / "r.csv"
    assert mountbench("report", "--format", "csv", "--out", str(table), env=mb_env).returncode == 0
    rows = list(csv.DictReader((tmp_path / "r-sweeps.csv").open()))
    assert len(rows) == 3 * 3 * 2 and sum(r["optimum"] == "true" for r in rows) == 3 * 2
    shown = mountbench("report", "--format", "json", env=mb_env)
    document = json.loads(shown.stdout)
    assert document["version"] == FORMAT_VERSION and len(document["sweeps"]) == len(rows)
    post = tmp_path / "post.md"
    assert mountbench("report", "--out", str(post), env=mb_env).returncode == 0
    assert all((tmp_path / f"post-sweep-{i}-{m}.png").stat().st_size > 10_000 for i, m in
               ((1, "write-bw"), (2, "write-bw"), (3, "read-bw")))  # fmt: skip
    assert "## Sweeps" in post.read_text()


@pytest.mark.slow
def test_a_job_files_hand_written_sweep_and_a_grid(tmp_path, mb_env):
    target = tmp_path / "t"
    target.mkdir()
    job = tmp_path / "bs.fio"
    sections = "".join(f"[w-{bs}]\nbs={bs}\n" for bs in ("4k", "16k", "64k"))
    job.write_text("[global]\nrw=write\nsize=4M\nstonewall\n" + sections)  # stonewall: one after another
    out = tmp_path / "run.json"
    proc = mountbench("run", str(target), "--job", str(job), "--repeat", "1", "--json", str(out), env=mb_env)
    assert proc.returncode == 0, proc.stderr
    (run,) = load_export(out)["runs"]
    points = [w["description"]["sweep"] for w in run["workloads"]]
    assert [p["value"] for p in points] == ["4k", "16k", "64k"] and not any(p["generated"] for p in points)
    words = " ".join(proc.stdout.split())  # the terminal wraps at its width
    assert "sections of job:" in words and "differing in bs alone" in words
    # the same file swept over a grid: a heat map's rows in JSON, one per cell
    one = tmp_path / "one.fio"
    one.write_text("[w]\nrw=write\nsize=4M\n")
    proc = mountbench("run", str(target), "--job", str(one), "--sweep", "bs=4k,64k", "--sweep", "iodepth=1,4",
                      "--repeat", "1", "--runtime", "0.2", env=mb_env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    words = " ".join(proc.stdout.split())
    assert "w (bs=64k, iodepth=4)" in words and "bs ↓ iodepth →" in words
    document = json.loads(mountbench("report", "--format", "json", env=mb_env).stdout)
    assert {r["kind"] for r in document["sweeps"]} == {"grid"} and len(document["sweeps"]) == 4


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--sweep", "bs=1k..10k"], ("10k is not 1k times a power of two", "e.g. bs=1k..8k")),
        (["--sweep", "rw=read"], ("cannot sweep 'rw'",)),
        (["--sweep", "bs=4k", "--sweep", "bs=8k"], ("given twice",)),
        (["--sweep", "size=8M,16M", "--size", "1G"], ("--size and a sweep of size",)),
        (["--tree", "tiny", "--only", "extract", "--sweep", "bs=4k"], ("none of the chosen workloads is a fio job",)),
    ],
)
def test_bad_sweeps_are_one_line_errors_before_anything_runs(tmp_path, mb_env, args, fragments):
    target = tmp_path / "t"
    target.mkdir()
    before = plant_neighbours(target)
    assert_one_line_error(mountbench("run", str(target), *args, env=mb_env), *fragments)
    assert snapshot(target) == before


def test_lab_takes_sweep_as_run_does():
    """lab reads --sweep with the same options as run, before anything boots."""
    assert_one_line_error(mountbench("lab", "--sweep", "iodepth=0"), "iodepth must be between 1 and 65536")
