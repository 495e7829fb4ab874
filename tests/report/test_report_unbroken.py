"""Issue 48, item 2: never a number, option or unit split across lines. Seen: a note with
"0.0000000000000000000000000000000000000000157–6359999999999999985272673105858114" continued on the next
line, a cell split as "(0.140–8." / "89×)", "(baseline" / ")", and on a phone "100" / "%" and "e.g. --" /
"runtime 1"; the tree chart's "at least 4.07× slower" past the plot frame at 400 px.

The terminal at 80 and 40 columns (in process) and piped (a child process: 80 columns): every word printed is
a word the unwrapped report has (no fragment of a cut word), and every "number unit" or "--option value"
appears as often as unwrapped. The page at 400 px in headless Chromium: no such token's text spans two lines,
nothing wider than the screen, every chart's text inside its drawing and every label in a plot inside its
frame. Recorded runs (tests/data/exports)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console
from support.chromium import Browser, find_chromium

from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.grid import one_unit
from mountbench.report.html import render_html
from mountbench.report.terminal import render_run, render_short

DATA = Path(__file__).parent.parent / "data" / "exports"
RUNS = ["default-run", "three-targets", "cdm-run", "tree-run"]
BOX = re.compile(r"[│┃┏┓┗┛┡┩└┘┌┐├┤┼╇╈┳┻━─╋]")
UNIT = r"(?:%|[kMGTPE]?i?B/s|[kMGTPE]?i?B|IOPS|ns|µs|ms|s|rounds?|samples?)"
SPACED = re.compile(rf"(?<![\w.])\d[\d.,]*\s{UNIT}(?![\w/])|--[a-z][a-z0-9-]*\s(?:\d[^\s;,)]*|[\w.-]+\.[a-z]{{2,4}}\b)")
LONG_DIGITS = re.compile(r"\d{7,}(?:\.\d+)?×|0\.0{6,}\d|\d{13,}")  # a ratio of millions, tiny or huge numbers


def _report(name: str, metrics: tuple[str, ...] = ()):
    runs = read_document(DATA / f"{name}.json")
    return build_report(runs, metrics=metrics, unit=one_unit(runs, "auto", metrics))


def _printed(report, width: int, *, short: bool = False) -> str:
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    for part in [render_short(report)] if short else render_run(report):
        console.print(part)
    return console.export_text()


def _words(text: str) -> Counter:
    return Counter(word.strip(":;,") for word in BOX.sub(" ", text).split())


def _spaced(text: str) -> Counter:
    return Counter(
        m.group(0) for line in BOX.sub(" ", text).splitlines() for m in SPACED.finditer(re.sub(" +", " ", line))
    )


def assert_unbroken(narrow: str, wide: str, width: int, also: str = "") -> None:
    """``also``: what else the narrow text may show whole (`show` falls back to the full grid's layouts)."""
    assert all(len(line.rstrip()) <= width for line in narrow.splitlines()), f"a line wider than {width}"
    known = set(_words(wide)) | set(_words(also))
    # a mount's options may break after a comma (a label wraps between its parts): nothing else may
    fragments = {w for w in _words(narrow) if w not in known and not re.search(r"[,=/]", w)}
    assert not fragments, f"cut at {width} columns: {sorted(fragments)[:12]}"
    whole, held = _spaced(wide), _spaced(narrow)
    split = {token for token, count in whole.items() if held[token] < count}
    assert not split, f"split at {width} columns: {sorted(split)[:12]}"
    assert not LONG_DIGITS.search(narrow), LONG_DIGITS.search(narrow).group(0)


@pytest.mark.parametrize("width", [80, 40])
@pytest.mark.parametrize("metrics", [(), ("lat-p99",)], ids=["headline", "lat-p99"])
@pytest.mark.parametrize("name", RUNS)
def test_terminal_never_splits_a_number_an_option_or_a_unit(name, metrics, width):
    report = _report(name, metrics)
    full = _printed(report, 1000)
    assert_unbroken(_printed(report, width), full, width)
    assert_unbroken(_printed(report, width, short=True), _printed(report, 1000, short=True), width, also=full)


def test_piped_detail_of_a_latency_percentile_keeps_every_token_whole(tmp_path):
    """What the issue ran: `show last --detail --metric lat-p99`, piped (80 columns)."""
    env = dict(os.environ) | {"MOUNTBENCH_DB": str(tmp_path / "db.sqlite")}
    env.pop("COLUMNS", None)
    argv = [sys.executable, "-m", "mountbench"]
    subprocess.run([*argv, "import", str(DATA / "tree-run.json")], env=env, check=True, capture_output=True)
    piped = subprocess.run([*argv, "show", "last", "--detail", "--metric", "lat-p99"], env=env, check=True,
                           capture_output=True, text=True).stdout  # fmt: skip
    wide = subprocess.run([*argv, "show", "last", "--detail", "--metric", "lat-p99"], env=env | {"COLUMNS": "1000"},
                          check=True, capture_output=True, text=True).stdout  # fmt: skip
    assert_unbroken(piped, wide, 80)


# --- the page at 400 px ------------------------------------------------------------------------------------

SPLIT_TOKENS = r"""(() => {
  const token = new RegExp([
    String.raw`\d[\d.,]*\s(?:%|[kMGTPE]?i?B\/s|[kMGTPE]?i?B|IOPS|ns|µs|ms|s|rounds?|samples?)(?![\w\/])`,
    String.raw`--[a-z][a-z0-9-]*[ =](?:\d[^\s;,)]*|[\w.-]+\.[a-z]{2,4}\b)`,
    String.raw`\(?\d[\d.]*–\d[\d.]*×\)?`].join("|"), "g");
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {acceptNode: (n) =>
    n.parentElement.closest("svg, script, style, summary") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const split = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.data.matchAll(token)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom)));
      if (tops.size > 1) split.push(match[0]);
    }
  }
  return split;
})()"""

# a label in a chart's plot (a bar's 'at least 4.07× slower') inside the plot's frame: matplotlib's axes
# background (…patch_2) is the frame, and the tick labels and the legend are outside it by design
OUT_OF_FRAME = r"""(() => {
  const found = [];
  for (const axes of document.querySelectorAll("figure svg g[id$='axes_1']")) {
    const patch = axes.querySelector("g[id$='patch_2']");
    if (!patch) continue;
    const frame = patch.getBoundingClientRect();
    if (frame.width === 0) continue;
    for (const text of axes.querySelectorAll("text")) {
      if (text.closest("g[id*='matplotlib.axis'], g[id*='legend']")) continue;  // ticks and axis labels
      const box = text.getBoundingClientRect();
      if (box.width > 0 && (box.left < frame.left - 1 || box.right > frame.right + 1)) found.push(text.textContent);
    }
  }
  return found;
})()"""

OUTSIDE = r"""(() => {
  const found = [];
  for (const svg of document.querySelectorAll("figure svg")) {
    const frame = svg.getBoundingClientRect();
    if (frame.width === 0) continue;  // the other layout's drawing (wide or narrow), not shown
    for (const text of svg.querySelectorAll("text, g[id^='text'] use, g[id^='text'] path")) {
      const box = text.getBoundingClientRect();
      if (box.width === 0) continue;
      if (box.left < frame.left - 1 || box.right > frame.right + 1) found.push(svg.closest("figure").id);
    }
  }
  return [...new Set(found)];
})()"""


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        pytest.skip("no chromium to render the page (apt-get install chromium)")
    with Browser() as running:
        yield running


@pytest.mark.parametrize("name", RUNS)
def test_the_page_at_400px_splits_no_token_and_overflows_nothing(browser, name, tmp_path):
    path = tmp_path / f"{name}.html"
    path.write_text(render_html(_report(name)))
    page = browser.open(path, width=400)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.evaluate(SPLIT_TOKENS) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 400, "wider than the phone's screen"
    assert page.evaluate(OUTSIDE) == [], "a chart's text runs past its drawing"
    assert page.evaluate(OUT_OF_FRAME) == [], "a label runs past its plot's frame"
    assert not LONG_DIGITS.search(page.evaluate("document.body.innerText"))
