"""The HTML report: one self-contained page, checked as text and rendered in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.synthetic import HOST, study_run

from mountbench.report.charts import plan_charts
from mountbench.report.content import build_report
from mountbench.report.html import render_html

GUEST = HOST | {"hostname": "guest", "kernel": "6.8.0", "fio_version": "fio-3.36"}


@pytest.fixture(scope="module")
def report():
    return build_report([study_run()])


@pytest.fixture(scope="module")
def page(report) -> str:
    return render_html(report)


def test_page_is_self_contained(page):
    assert "<link" not in page and "@import" not in page
    assert not re.search(r'\b(src|href)="(https?:)?//', page), "nothing may be fetched"
    assert not re.search(r"url\((https?:)?//", page)
    assert "<script src" not in page


def test_page_has_every_section_charts_and_highlighted_caveats(report, page):
    for section in (
        'id="warnings"',
        'id="verdicts"',
        'id="results"',
        'id="percentiles"',
        'id="sweeps"',
        'id="environment"',
        'id="methodology"',
        'id="notes"',
    ):
        assert section in page
    assert page.count("<svg ") == len(plan_charts(report))
    cell = re.search(r'<td class="num caveat"[^>]*title="\[1\] buffered: O_DIRECT refused[^"]*">8\.60k IOPS', page)
    assert cell, "the 9p cell must be highlighted and carry its caveat"
    assert "virtiofs is 2.75× slower than native at extracting the tree" in page


def test_ratio_cells_carry_the_caveats_of_both_sides(report, page):
    cache = report.notes.index(next(n for n in report.notes if n.startswith("page cache"))) + 1
    row = next(r for r in re.findall(r"<tr>.*?</tr>", page, flags=re.S) if "random read 4k QD1 (S4)" in r)
    ratios = re.findall(r'<td class="num ratio[^"]*"[^>]*>(.*?)</td>', row, flags=re.S)
    assert len(ratios) == 2 and all(f'<span class="mark">[{cache}]</span>' in r for r in ratios), ratios
    assert "Every (target, workload) pair ran 3 measured times" in page


def test_merged_hosts_are_named_and_differences_warned(tmp_path):
    merged = build_report([study_run("a", targets=("native",)), study_run("b", host=GUEST, targets=("9p",))])
    page = render_html(merged, with_charts=False)
    assert "native@studio (baseline)" in page and "9p@guest" in page
    assert "hosts differ in fio version (studio: fio-3.33; guest: fio-3.36)" in page


# --- in a real browser ------------------------------------------------------------------------------


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium to render the page (apt-get install chromium)")


def _browse(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # any network fetch would fail: the page must not need one
        f"--user-data-dir={tmp_path / 'profile'}",
        *extra,
        url,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def saved(page, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(page)
    return path


def test_chromium_renders_the_content_and_the_charts(saved, tmp_path):
    proc = _browse(tmp_path, saved.as_uri(), "--dump-dom")
    dom = proc.stdout
    assert proc.returncode == 0 and "<html" in dom, proc.stderr[-2000:]
    assert "<title>mountbench: native vs virtiofs vs 9p</title>" in dom
    assert "9p ≈ native at SEQ 1M Q8 write (write bandwidth): the same within noise" in dom
    assert dom.count("<svg") == 7 and dom.count('class="chart"') == 7
    assert "read IOPS by workload and target" in dom  # chart text, inline in the page
    assert dom.count('data-sortable="ready"') == dom.count('class="sortable"'), "the sorting script failed"


def test_chromium_sorts_a_table(saved, tmp_path):
    def first_rows(dom: str) -> list[str]:
        table = re.search(r'<table class="sortable" id="results-1".*?</table>', dom, flags=re.S).group(0)
        return re.findall(r"<tr>\s*<td[^>]*>([^<]+)</td>", table)

    unsorted = first_rows(_browse(tmp_path, saved.as_uri(), "--dump-dom").stdout)
    by_native = first_rows(_browse(tmp_path, saved.as_uri() + "#sort=results-1:1:desc", "--dump-dom").stdout)
    assert unsorted == ["RND 4K Q1 read", "random read 4k QD1 (S4)"]
    assert by_native == ["random read 4k QD1 (S4)", "RND 4K Q1 read"]  # 30.0k IOPS before 20.0k


def test_chromium_screenshot_shows_a_page(saved, tmp_path):
    import matplotlib.image
    import numpy as np

    shot = tmp_path / "page.png"
    proc = _browse(tmp_path, saved.as_uri(), f"--screenshot={shot}", "--window-size=1280,2400")
    assert shot.exists(), proc.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2400, 1280)
    assert np.mean(np.any(pixels < 0.9, axis=-1)) > 0.03  # text, tables and charts, not a blank page
    warn = np.array([0xFF, 0xF4, 0xD6]) / 255  # the warnings box and highlighted cells
    assert np.any(np.all(np.abs(pixels - warn) < 0.01, axis=-1))
