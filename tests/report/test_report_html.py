"""The HTML report: one self-contained page, checked as text and rendered in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.chromium import Browser, find_chromium
from support.factories import fio_workload, make_run
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
    assert "Content-Security-Policy" in page and "default-src 'none'" in page  # the browser enforces it
    assert "<link" not in page and "@import" not in page
    assert not re.search(r'\b(src|href)="(https?:)?//', page), "nothing may be fetched"
    assert not re.search(r"url\((https?:)?//", page)
    assert "<script src" not in page


def test_page_has_every_section_charts_and_highlighted_caveats(report, page):
    for section in (
        'id="headlines"',
        'id="summary"',
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
    results = page.split('<section id="results">', 1)[1]
    row = next(r for r in re.findall(r"<tr>.*?</tr>", results, flags=re.S) if "random read 4k QD1 (S4)" in r)
    ratios = re.findall(r'<td class="num ratio[^"]*"[^>]*>(.*?)</td>', row, flags=re.S)
    link = f'<a class="mark" href="#note-{cache}" title="[{cache}] page cache may serve these'
    assert len(ratios) == 2 and all(link in r for r in ratios), ratios
    assert "2.22× slower (2.05–2.41×)" in ratios[0]
    assert "Every (target, workload) pair ran 3 measured times" in page


def test_merged_hosts_are_named_and_differences_warned(tmp_path):
    merged = build_report([study_run("a", targets=("native",)), study_run("b", host=GUEST, targets=("9p",))])
    page = render_html(merged, with_charts=False)
    assert "native@studio (baseline)" in page and "9p@guest" in page
    assert "hosts differ in fio version (studio: fio-3.33; guest: fio-3.36)" in page


# --- in a real browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(page, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(page)
    return path


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        pytest.skip("no chromium to render the page (apt-get install chromium)")
    with Browser() as running:
        yield running


LAYOUT = """(() => {
  const overflow = (id) => { const e = document.getElementById(id); return e ? e.scrollWidth - e.clientWidth : null; };
  const links = [...document.querySelectorAll('a[href^="#"]')];
  return {
    viewport: window.innerWidth,
    summary: overflow("summary"), verdicts: overflow("verdicts"), headlines: overflow("headlines"),
    page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    links: links.length,
    broken: links.map(a => a.getAttribute("href")).filter(h => !document.getElementById(h.slice(1))),
    marks: document.querySelectorAll("a.mark[title]").length,
    sortable: document.querySelectorAll('[data-sortable="ready"]').length,
    tables: document.querySelectorAll("table.sortable").length,
    svgs: document.querySelectorAll("figure.chart svg").length,
    chartWidth: Math.min(...[...document.querySelectorAll("figure.chart svg")]
      .map(s => s.getBoundingClientRect().width)),
    contentWidth: document.getElementById("results").getBoundingClientRect().width,
  };
})()"""


@pytest.mark.parametrize("width", [1300, 400])
def test_chromium_at_desktop_and_phone_widths(browser, saved, width):
    """Issue 13: the summary and verdicts read without sideways scrolling, every note link
    resolves, no console error, no network request; charts use the page's width."""
    view = browser.open(saved, width=width)
    seen = view.evaluate(LAYOUT)
    assert seen["viewport"] == width
    assert seen["summary"] == 0 and seen["verdicts"] == 0 and seen["headlines"] == 0, seen
    assert seen["page"] == 0, "nothing outside a scrolling table may widen the page"
    assert seen["links"] > 20 and seen["broken"] == [] and seen["marks"] > 10, seen
    assert seen["sortable"] == seen["tables"] > 0, "the sorting script failed"
    assert seen["svgs"] == 6 and seen["chartWidth"] >= seen["contentWidth"] - 2, seen
    assert view.problems() == [] and view.requests() == []


def test_chromium_phone_width_turns_the_grid_into_labelled_cards(browser, saved):
    view = browser.open(saved, width=400)
    cards = view.evaluate(
        """[...document.querySelectorAll("#summary td.value")].map(td => {
             const label = td.querySelector(".label").getBoundingClientRect();
             const figures = td.querySelector(".figures").getBoundingClientRect();
             const cell = td.getBoundingClientRect();
             return {label: td.querySelector(".label").textContent, shown: label.width > 0,
                     apart: label.right <= figures.left + 0.5, inside: figures.right <= cell.right + 0.5};
           })"""
    )
    assert [c["label"] for c in cards[:3]] == ["native (baseline)", "virtiofs", "9p"]
    assert all(c["shown"] and c["apart"] and c["inside"] for c in cards), cards
    comparison = view.evaluate("""getComputedStyle(document.querySelector("#summary .cmp.worse")).color""")
    assert comparison == "rgb(163, 38, 27)"  # red: slower
    wide = browser.open(saved, width=1300)
    assert wide.evaluate("""document.querySelector("#summary .label").getBoundingClientRect().width""") == 0


def test_chromium_phone_width_with_long_labels(browser, tmp_path):
    """Default labels are fstype:path: they wrap inside their card, beside the numbers."""
    run = make_run(
        {
            ("tmpfs:/var/tmp/glance-shm", "seq-read"): [2.28e9, 2.1e9, 2.4e9],
            ("ext4:/var/tmp/glance-disk", "seq-read"): [5.5e8, 5.0e8, 6.0e8],
        },
        metric="read.bw",
        workloads=[fio_workload("seq-read", "read", "1M")],
    )
    path = tmp_path / "long.html"
    path.write_text(render_html(build_report([run]), with_charts=False))
    view = browser.open(path, width=400)
    seen = view.evaluate(LAYOUT.replace('document.getElementById("results").getBoundingClientRect().width', "0"))
    assert seen["summary"] == 0 and seen["verdicts"] == 0 and seen["page"] == 0, seen
    apart = view.evaluate(
        """[...document.querySelectorAll("#summary td.value")].every(td =>
             td.querySelector(".label").getBoundingClientRect().right
               <= td.querySelector(".figures").getBoundingClientRect().left + 0.5)"""
    )
    assert apart and view.problems() == []


def test_chromium_dark_mode_and_print(browser, saved, tmp_path):
    view = browser.open(saved, width=1300)
    light = view.evaluate("getComputedStyle(document.body).backgroundColor")
    browser.call(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
        session=view.session,
    )
    dark = view.evaluate("getComputedStyle(document.body).backgroundColor")
    assert light == "rgb(255, 255, 255)" and dark == "rgb(22, 22, 24)"
    view.media("print")
    breaks = view.evaluate("[...document.querySelectorAll('h2, h3')].map(h => getComputedStyle(h).breakAfter)")
    assert set(breaks) == {"avoid"}, "a heading must stay with what follows it"
    headings = set(view.evaluate("[...document.querySelectorAll('h1, h2, h3')].map(h => h.textContent.trim())"))
    pdf = view.pdf()
    assert pdf.startswith(b"%PDF") and view.problems() == []
    if shutil.which("pdftotext") is None:
        pytest.skip("no pdftotext to read the printed pages (apt-get install poppler-utils)")
    pages = _pdf_pages(pdf, tmp_path)
    assert len(pages) >= 2
    for number, text in enumerate(pages, 1):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        assert lines and lines[-1] not in headings, f"page {number} ends with the heading {lines[-1]!r}"


def _pdf_pages(pdf: bytes, tmp_path: Path) -> list[str]:
    path = tmp_path / "printed.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return [page for page in text.split("\f") if page.strip()]


def test_chromium_sorts_a_table(browser, saved):
    script = """[...document.querySelectorAll('#results-1 tbody tr')].map(r => r.cells[0].textContent.trim())"""
    unsorted = browser.open(saved, width=1300).evaluate(script)
    by_native = browser.open(saved.as_uri() + "#sort=results-1:1:desc", width=1300).evaluate(script)
    assert unsorted == ["RND 4K Q1 read", "random read 4k QD1 (S4)"]
    assert by_native == ["random read 4k QD1 (S4)", "RND 4K Q1 read"]  # 30.0k IOPS before 20.0k


def test_chromium_screenshot_shows_a_page(browser, saved, tmp_path):
    import matplotlib.image
    import numpy as np

    shot = browser.open(saved, width=1280).screenshot(tmp_path / "page.png")
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[1] == 1280 and pixels.shape[0] > 3000  # the whole page, not the first screen
    assert np.mean(np.any(pixels < 0.9, axis=-1)) > 0.03  # text, tables and charts, not a blank page
    warn = np.array([0xFF, 0xF4, 0xD6]) / 255  # the warnings box and highlighted cells
    assert np.any(np.all(np.abs(pixels - warn) < 0.01, axis=-1))
