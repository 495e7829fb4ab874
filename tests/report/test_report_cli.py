"""report, export and import as a user runs them: a child process, real files, exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.synthetic import HOST, study_run

from mountbench.records.export import FORMAT_VERSION, write_document
from mountbench.report.document import make_document
from mountbench.store import Store

GUEST = HOST | {"hostname": "guest", "kernel": "6.8.0", "fio_version": "fio-3.36", "cpu_model": "Other CPU"}


def mountbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "mountbench", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def stored(mb_env) -> dict[str, str]:
    """A results database holding the synthetic study run."""
    with Store(Path(mb_env["MOUNTBENCH_DB"])) as store:
        store.import_run(study_run())
    return mb_env


def test_markdown_report_with_charts_next_to_it(stored, tmp_path):
    out = tmp_path / "post" / "s0.md"
    out.parent.mkdir()
    proc = mountbench("report", "--out", str(out), env=stored)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert len(images) == 6 and all((out.parent / name).stat().st_size > 10_000 for name in images)
    assert "virtiofs is 2.75× slower than native at extracting the tree" in text
    assert proc.stdout == "" and "wrote" in proc.stderr


def test_html_csv_and_json_formats(stored, tmp_path):
    html = tmp_path / "r.html"
    assert mountbench("report", "last", "--out", str(html), env=stored).returncode == 0  # format from the suffix
    assert html.read_text().startswith("<!DOCTYPE html>") and html.read_text().count("<svg ") == 6
    csv_out = tmp_path / "r.csv"
    assert mountbench("report", "--format", "csv", "--out", str(csv_out), env=stored).returncode == 0
    assert csv_out.read_text().startswith("run_id,workload,") and (tmp_path / "r-samples.csv").read_text().startswith(
        "run_id,"
    )
    proc = mountbench("report", "--format", "json", "--metric", "lat-p99", env=stored)
    document = json.loads(proc.stdout)
    assert document["format"] == "mountbench-runs" and {r["metric"] for r in document["summary"]} == {"read.lat_p99"}
    proc = mountbench("report", "--format", "csv", "--samples", env=stored)
    assert proc.stdout.startswith("run_id,") and proc.stdout.count("\n") == 1 + len(study_run().samples)


def test_export_then_import_twice_stores_one_copy(stored, tmp_path):
    exported = tmp_path / "runs.json"
    proc = mountbench("export", "last", "--out", str(exported), env=stored)
    assert proc.returncode == 0 and "exported 1 run(s)" in proc.stdout, proc.stderr
    other = dict(stored, MOUNTBENCH_DB=str(tmp_path / "other.sqlite"))
    first = mountbench("import", str(exported), env=other)
    second = mountbench("import", str(exported), env=other)
    assert "imported run 20260101-120000-abcd from studio" in first.stdout
    assert "already stored; skipped" in second.stdout and second.returncode == 0
    with Store(tmp_path / "other.sqlite") as store:
        assert len(store.list_runs()) == 1
        assert store.load_run("last") == study_run()


def test_runs_from_two_hosts_merge_into_one_report(tmp_path, mb_env):
    files = []
    for name, run in (
        ("mac", study_run("r-mac", targets=("native",))),
        ("vm", study_run("r-vm", host=GUEST, targets=("virtiofs", "9p"))),
    ):
        files.append(tmp_path / f"{name}.json")
        write_document(files[-1], make_document([run]))
    proc = mountbench("report", "--from", str(files[0]), "--from", str(files[1]), "--format", "md", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert "| workload | native@studio (baseline) | virtiofs@guest | 9p@guest |" in proc.stdout
    assert "hosts differ in fio version" in proc.stdout and "hosts differ in CPU" in proc.stdout
    assert not Path(mb_env["MOUNTBENCH_DB"]).exists(), "--from alone must not touch the store"
    merged = tmp_path / "merged.json"
    as_json = mountbench(
        "report", "--from", str(files[0]), "--from", str(files[1]), "--format", "json", "--out", str(merged), env=mb_env
    )
    assert as_json.returncode == 0, as_json.stderr
    hosts = {row["target"]: row["host"] for row in json.loads(merged.read_text())["summary"]}
    assert hosts == {"native@studio": "studio", "virtiofs@guest": "guest", "9p@guest": "guest"}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{not json", "not a readable JSON file"),
        ('{"format": "something-else", "runs": []}', "not a mountbench export"),
        (json.dumps({"format": "mountbench-runs", "version": "2.0", "runs": []}), "newer than this mountbench"),
        (json.dumps({"format": "mountbench-runs", "version": FORMAT_VERSION, "runs": [{"id": "x"}]}), "damaged"),
    ],
)
@pytest.mark.parametrize("command", ["import", "report"])
def test_bad_files_are_one_line_errors(tmp_path, mb_env, content, fragment, command):
    path = tmp_path / "in.json"
    path.write_text(content)
    args = ["import", str(path)] if command == "import" else ["report", "--from", str(path)]
    assert_one_line_error(mountbench(*args, env=mb_env), str(path), fragment)


def test_unknown_run_and_missing_metric(stored):
    assert_one_line_error(mountbench("report", "nope", env=stored), "no run 'nope'", "mountbench list")
    assert_one_line_error(mountbench("export", "nope", "--out", "/tmp/x.json", env=stored), "no run 'nope'")
    assert_one_line_error(mountbench("report", "--metric", "trim.iops", env=stored), "no workload", "trim.iops")


def test_unwritable_output_paths(stored, tmp_path):
    assert_one_line_error(
        mountbench("report", "--out", str(tmp_path / "missing" / "r.md"), env=stored), "does not exist"
    )
    assert_one_line_error(mountbench("report", "--out", str(tmp_path), env=stored), "is a directory")
    assert_one_line_error(mountbench("report", "--format", "html", "--out", "/proc/r.html", env=stored), "cannot write")
    assert_one_line_error(mountbench("export", "last", "--out", "/proc/r.json", env=stored), "cannot write")
    assert list(tmp_path.iterdir()) == [tmp_path / "results.sqlite"], "nothing may be left behind"


def test_bad_baseline_names_the_choices(stored):
    assert_one_line_error(mountbench("report", "--baseline", "nfs", env=stored), "'nfs'", "native, virtiofs, 9p")


def test_pdf_is_the_html_printed_by_chromium_and_unknown_suffixes_are_refused(stored, tmp_path):
    """Issue 25: 'report --out r.pdf' wrote Markdown into r.pdf and exited 0."""
    from support.chromium import find_chromium

    refused = mountbench("report", "--out", str(tmp_path / "r.txt"), env=stored)
    assert_one_line_error(refused, "--out", "suffix .txt", ".pdf")
    assert not (tmp_path / "r.txt").exists()
    if find_chromium() is None:
        pytest.skip("no chromium to print the PDF (apt-get install chromium)")
    pdf = tmp_path / "r.pdf"
    proc = mountbench("report", "--out", str(pdf), env=stored)
    assert proc.returncode == 0, proc.stderr
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 50_000
    import shutil

    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        assert "virtiofs is slower than native" in text and "Summary" in text


def test_pdf_under_a_memory_limit_says_chromium_died_of_what_and_what_to_do(stored, tmp_path):
    """Issue 48: under `ulimit -v 6000000` the error quoted a line of Debian's launcher script ('/usr/bin/chromium:
    9: [: 25276424192: unexpected operator') while Chromium had died of SIGTRAP (exit 133). It says the real
    exit, the limit and how to raise it, in one line; nothing is written."""
    import resource

    from support.chromium import find_chromium

    if find_chromium() is None:
        pytest.skip("no chromium to print the PDF (apt-get install chromium)")
    pdf = tmp_path / "r.pdf"
    limit = 6_000_000 * 1024  # bytes, as `ulimit -v 6000000` (KiB)
    proc = subprocess.run(
        [sys.executable, "-m", "mountbench", "report", "--out", str(pdf)], capture_output=True, text=True, env=stored,
        timeout=300, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
    )  # fmt: skip
    line = assert_one_line_error(proc, "Chromium could not print the report", "ulimit -v")
    assert "unexpected operator" not in line and "/usr/bin/" not in line, line
    assert re.search(r"\((it died of SIG[A-Z]+ \(exit -?\d+\)|exit \d+)", line), line
    assert not pdf.exists()


def test_a_launcher_scripts_line_is_never_the_cause():
    from mountbench.cli.pdf import failure

    stderr = (
        "/usr/bin/chromium: 9: [: 25276424192: unexpected operator\n"
        "[1234:1234:1129/101500.123456:ERROR:zygote_host_impl_linux.cc(100)] No usable sandbox! Update your kernel\n"
    )
    said = failure(-5, stderr)
    assert "SIGTRAP (exit -5)" in said and "No usable sandbox" in said and "sandbox could not start" in said
    assert "unexpected operator" not in said
    assert "SIGTRAP (exit 133)" in failure(133, "/usr/bin/chromium: 9: [: 1: unexpected operator\n")


def test_charts_dir_writes_every_chart_as_png_and_svg_for_any_format(stored, tmp_path):
    """Issue 37: each chart as an image of its own (like fio-plot), whatever the report's format."""
    charts = tmp_path / "charts"
    proc = mountbench("report", "--format", "csv", "--out", str(tmp_path / "r.csv"), "--charts", str(charts),
                      env=stored)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    pngs, svgs = sorted(charts.glob("*.png")), sorted(charts.glob("*.svg"))
    assert pngs and [p.stem for p in pngs] == [s.stem for s in svgs]
    assert {"bars-all", "ratio"} <= {p.stem for p in pngs}
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)
    assert all(b"<svg" in s.read_bytes()[:2000] for s in svgs)
    assert f"wrote {len(pngs) * 2} chart files into {charts}" in proc.stderr
    a_file = tmp_path / "r.csv"
    refused = mountbench("report", "--format", "json", "--charts", str(a_file), env=stored)
    assert_one_line_error(refused, "--charts", "not a directory")
