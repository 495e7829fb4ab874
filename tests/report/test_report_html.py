"""The HTML report: one self-contained page, checked as text and rendered in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from support.chromium import Browser, find_chromium
from support.factories import fio_workload, make_run
from support.synthetic import HOST, study_run

from mountbench.report.content import build_report
from mountbench.report.html import page_charts, render_html

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
    shown = page_charts(report)  # one chart per question: the per-metric bars give way to one of them all
    assert [c.kind for c in shown].count("overview") == 1 and "bars" not in [c.kind for c in shown]
    assert page.count("<svg ") == len(shown) + sum(c.narrow is not None for c in shown)  # and a phone's drawing
    assert "<figcaption" not in page  # each chart's title is in the chart, once
    cell = re.search(
        r'<td class="num caveat"[^>]*title="\[1\] buffered: O_DIRECT refused[^"]*"><span class="v">8\.60k IOPS', page
    )
    assert cell, "the 9p cell must be highlighted and carry its caveat"
    assert "virtiofs is 2.75× slower than native at extracting the tree" in page


def test_ratio_cells_carry_the_caveats_of_both_sides(report, page):
    cache = report.notes.index(next(n for n in report.notes if n.startswith("page cache"))) + 1
    results = page.split('<section id="results">', 1)[1]
    row = next(r for r in re.findall(r"<tr>.*?</tr>", results, flags=re.S) if "random read 4k QD1 (S4)" in r)
    ratios = re.findall(r'<td class="num ratio[^"]*"[^>]*>(.*?)</td>', row, flags=re.S)
    link = f'<a class="mark" href="#note-{cache}" title="[{cache}] page cache may serve these'
    assert len(ratios) == 2 and all(link in r for r in ratios), ratios
    assert "2.22× slower (2.06–2.40×)" in re.sub(r"</?span[^>]*>", "", ratios[0])
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
    svgs: [...document.querySelectorAll("figure.chart svg")].filter(s => s.getBoundingClientRect().width > 0).length,
    chartWidth: Math.min(...[...document.querySelectorAll("figure.chart svg")]
      .map(s => s.getBoundingClientRect().width).filter(w => w > 0)),
    contentWidth: document.getElementById("results").getBoundingClientRect().width,
  };
})()"""


@pytest.mark.parametrize("width", [1300, 400])
def test_chromium_at_desktop_and_phone_widths(browser, saved, report, width):
    """Issue 13: the summary and verdicts read without sideways scrolling, every note link
    resolves, no console error, no network request; charts use the page's width."""
    view = browser.open(saved, width=width)
    seen = view.evaluate(LAYOUT)
    assert seen["viewport"] == width
    assert seen["summary"] == 0 and seen["verdicts"] == 0 and seen["headlines"] == 0, seen
    assert seen["page"] == 0, "nothing outside a scrolling table may widen the page"
    assert seen["links"] > 20 and seen["broken"] == [] and seen["marks"] > 10, seen
    assert seen["sortable"] == seen["tables"] > 0, "the sorting script failed"
    if width > 700:  # every chart, as wide as the page
        assert seen["svgs"] == len(page_charts(report)) and seen["chartWidth"] >= seen["contentWidth"] - 2, seen
    else:  # the charts drawn for a phone (the others give way to their tables), never wider than the page
        assert seen["svgs"] == 2 and seen["chartWidth"] <= seen["contentWidth"] + 1, seen
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


OPEN_ALL = "document.querySelectorAll('details.more').forEach(d => { d.open = true; }); true"

SHOTS = Path(os.environ.get("MOUNTBENCH_SHOTS", "/tmp/mountbench-shots"))

SEEN_AT = """(() => {
  const visible = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  // every results table: is the comparison column (its last) on screen, inside the viewport?
  const tables = [...document.querySelectorAll("#results table.sortable")].map(t => {
    const cells = [...t.querySelectorAll("td:last-child")].filter(visible);
    return {id: t.id, cells: cells.length,
            inside: cells.every(c => {
              const r = c.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth + 0.5; }),
            text: cells.map(c => c.textContent.trim())};
  });
  // every text of every chart on screen, in CSS pixels as drawn
  const texts = [...document.querySelectorAll("figure.chart svg text")].filter(visible).map(t => ({
    text: t.textContent.trim(), px: t.getBoundingClientRect().height,
    size: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b) }));
  // every chart on screen: where it is on the whole page, and the colour of its background (the
  // figure's patch, matplotlib's first path)
  const charts = [...document.querySelectorAll("figure.chart svg")].filter(visible).map(s => {
    const r = s.getBoundingClientRect();
    return {key: s.getAttribute("aria-label"), left: r.left + scrollX, top: r.top + scrollY, width: r.width,
            height: r.height, background: getComputedStyle(s.querySelector("g[id$='patch_1'] path")).fill};
  });
  return {tables, texts, charts};
})()"""


@pytest.mark.parametrize("width", [400, 1300])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chromium_comparison_readable_and_chart_text_legible(browser, saved, width, scheme):
    """Issue 25: at a phone's width every table's comparison with the baseline is on screen (not
    cut off past the right edge) and no chart text is smaller than 9 CSS pixels; the same at
    1300 px, in light and in dark mode. The screenshots are kept for people to look at."""
    view = browser.open(saved, width=width)
    if scheme == "dark":
        browser.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
                     session=view.session)  # fmt: skip
    view.evaluate(OPEN_ALL)  # closed on a phone until asked for: open, they must read as well
    seen = view.evaluate(SEEN_AT)
    assert seen["tables"] and all(t["cells"] and t["inside"] for t in seen["tables"]), seen["tables"]
    assert any("slower" in text for t in seen["tables"] for text in t["text"]), "no comparison shown"
    assert seen["texts"], "no chart text on screen"
    small = [t for t in seen["texts"] if t["size"] < 9]
    assert not small, f"chart text under 9 CSS px at {width} px: {small[:5]}"
    # drawn once: in dark mode the same SVG's background turns dark and its ink light (custom properties)
    background, ink = {
        "light": ("rgb(255, 255, 255)", "rgb(0, 0, 0)"),
        "dark": ("rgb(22, 22, 22)", "rgb(230, 230, 230)"),
    }[scheme]
    assert seen["charts"] and {c["background"] for c in seen["charts"]} == {background}, seen["charts"]
    assert view.evaluate("getComputedStyle(document.querySelector('figure.chart svg text')).fill") == ink
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = view.screenshot(SHOTS / f"study-{width}-{scheme}.png")
    print(f"screenshot: {shot}")
    assert view.problems() == []
    # and on screen: most of every chart's area is its background, dark in dark mode, light in light
    pixels = matplotlib.image.imread(shot)[..., :3].mean(axis=-1)
    for chart in seen["charts"]:
        top, left = round(chart["top"]), round(chart["left"])
        area = pixels[top : top + round(chart["height"]), left : left + round(chart["width"])]
        median = float(np.median(area))
        assert (median < 0.15) if scheme == "dark" else (median > 0.9), (chart["key"], median)


def test_chromium_targets_table_fits_at_desktop_width(browser, saved):
    view = browser.open(saved, width=1300)
    box = "document.querySelector('table.targets').parentElement"
    overflow = view.evaluate(f"{box}.scrollWidth - {box}.clientWidth")
    assert overflow == 0


def test_chromium_sorts_a_table(browser, saved):
    script = """[...document.querySelectorAll('#results-1 tbody tr')].map(r => r.cells[0].textContent.trim())"""
    unsorted = browser.open(saved, width=1300).evaluate(script)
    by_native = browser.open(saved.as_uri() + "#sort=results-1:1:desc", width=1300).evaluate(script)
    assert unsorted == ["RND 4K Q1 read", "random read 4k QD1 (S4)"]
    assert by_native == ["random read 4k QD1 (S4)", "RND 4K Q1 read"]  # 30.0k IOPS before 20.0k


def test_chromium_screenshot_shows_a_page(browser, saved, tmp_path):
    shot = browser.open(saved, width=1280).screenshot(tmp_path / "page.png")
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[1] == 1280 and pixels.shape[0] > 3000  # the whole page, not the first screen
    assert np.mean(np.any(pixels < 0.9, axis=-1)) > 0.03  # text, tables and charts, not a blank page
    warn = np.array([0xFF, 0xF4, 0xD6]) / 255  # the warnings box and highlighted cells
    assert np.any(np.all(np.abs(pixels - warn) < 0.01, axis=-1))
