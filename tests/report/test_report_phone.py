"""Issue 37: the HTML report leads with the answer and stays short on a phone. Real runs
(a default run of two targets, a tree run of three, recorded on a 2-core VM and exported
with fio's raw JSON left out) rendered in headless Chromium at 400 px, light and dark:
the headline is on the first screen, the page is at most 6 screens (10 for the tree run),
and text meant for one medium shows in no other (the page, the phone, the PDF)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.chromium import Browser, find_chromium

from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.html import render_html

DATA = Path(__file__).parent.parent / "data" / "exports"
SCREEN = 800  # a phone's screen, in CSS pixels, at 400 px wide
RUNS = {"default-run": 6, "tree-run": 10}  # export -> the most screens its page may take

ON_NO_PAGE = ("'mountbench report --format html' draws it",)  # the page is what it points at
ON_NO_PHONE = ("Click a column heading to sort",)  # phone cards have no headings to click
ON_NO_PAPER = ("Click a column heading to sort", "scrolls sideways", "⇠", "⇢", "▾ ")  # paper opens nothing

MEASURE = """(() => {
  const top = (selector) => { const e = document.querySelector(selector);
    return e ? e.getBoundingClientRect().top + scrollY : null; };
  return {height: document.documentElement.scrollHeight, headline: top("#headlines li"),
          summary: top("#summary"), ratio: top("#chart-ratio"), text: document.body.innerText,
          closed: [...document.querySelectorAll("details.more")].filter(d => !d.open).length,
          parts: document.querySelectorAll("details.more").length};
})()"""


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        pytest.skip("no chromium to render the page (apt-get install chromium)")
    with Browser() as running:
        yield running


@pytest.fixture(scope="module", params=sorted(RUNS))
def page(request, tmp_path_factory) -> tuple[str, Path, str]:
    report = build_report(read_document(DATA / f"{request.param}.json"))
    html = render_html(report)
    path = tmp_path_factory.mktemp("phone") / f"{request.param}.html"
    path.write_text(html)
    return request.param, path, html


def test_the_page_says_nothing_meant_for_another_medium(page):
    _, _, html = page
    for phrase in ON_NO_PAGE:
        assert phrase not in html and phrase.replace("'", "&#39;") not in html


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_phone_shows_the_answer_first_and_the_page_is_short(browser, page, scheme):
    name, path, _ = page
    view = browser.open(path, width=400, height=SCREEN)
    if scheme == "dark":
        browser.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
                     session=view.session)  # fmt: skip
    seen = view.evaluate(MEASURE)
    assert seen["headline"] is not None and seen["headline"] < SCREEN, "the headline must be on the first screen"
    assert seen["summary"] < seen["ratio"], "the summary grid, then the chart of the ratios"
    assert seen["closed"] == seen["parts"] > 0, "after the answer, every part is closed on a phone"
    screens = seen["height"] / SCREEN
    print(f"{name} at 400 px ({scheme}): {seen['height']} px, {screens:.1f} screens")
    assert screens <= RUNS[name], f"{name}: {screens:.1f} screens at 400 px"
    for phrase in ON_NO_PHONE:
        assert phrase not in seen["text"]
    assert view.problems() == [] and view.requests() == []


def test_a_note_link_opens_its_closed_part(browser, page):
    _, path, html = page
    if 'href="#note-1"' not in html:
        pytest.skip("no note on this page")
    view = browser.open(path.as_uri() + "#note-1", width=400, height=SCREEN)
    assert view.evaluate("document.getElementById('notes-more').open") is True
    assert view.evaluate("document.getElementById('results-more').open") is False


def test_print_opens_every_part_and_says_nothing_about_screens(browser, page, tmp_path):
    name, path, _ = page
    if shutil.which("pdftotext") is None:
        pytest.skip("no pdftotext to read the printed pages (apt-get install poppler-utils)")
    for width in (400, 1300):
        view = browser.open(path, width=width, height=SCREEN)
        view.media("print")
        pdf = tmp_path / f"{name}-{width}.pdf"
        pdf.write_bytes(view.pdf())
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
        for phrase in ON_NO_PAPER + ON_NO_PAGE:
            assert phrase not in text, f"{phrase!r} printed at {width} px"
        flat = " ".join(text.split())
        assert "Methodology" in flat and "Hosts" in flat, "every part is printed, open"


def test_warnings_of_one_kind_are_one_line_with_their_count():
    """Issue 37: in an A/A report 12 'not steady' warnings pushed the summary three screens down."""
    from support.factories import make_run

    from mountbench.model import UNSTEADY, Caveat
    from mountbench.report.html import warning_groups

    values = {(t, w): [100.0, 101.0, 99.0] for t in ("a", "b") for w in ("w1", "w2", "w3")}
    caveats = {
        (t, w): (
            Caveat(
                UNSTEADY,
                f"not steady within the sample: read IOPS fell {n}% from its first intervals to its "
                "last (a cache filling, throttling?); 'mountbench report --format html' draws it",
            ),
        )
        for n, (t, w) in enumerate(values)
    }
    report = build_report([make_run(values, caveats=caveats)])
    groups = warning_groups(report)
    unsteady = [g for g in groups if g.title == "not steady within the sample"]
    assert len(unsteady) == 1 and len(unsteady[0].items) == 6
    html = render_html(report, with_charts=False)
    assert (
        html.count('<details class="group">') == 1
        and 'not steady within the sample <span class="count">(6)</span>' in html
    )
    assert "draws it" not in html and "throttling?)" in html  # said on the page it points at: cut there alone
    from mountbench.report.markdown import render_markdown

    # Markdown names the command that draws it, for this run (issue 48: '--format html' printed the page)
    assert "'mountbench report r1 --out report.html' draws it" in render_markdown(report)
