"""Issue 48, item 1: the headline states exactly what the notes state. "loop vs ram: undecided in all 6
workloads (each within 7.57× either way)" stood over notes of 0.0122–82.0× and 0.0000000169–59000000×, and
"(more rounds would decide)" over notes saying ±5 % was out of reach in any number of rounds.

Every kind of undecided comparison (too wide to rank, out of reach in any number of rounds because of the run
level or of the spread measured, beyond --max-repeat, within it, no spread yet, known to ±5 %) gets its note
from analysis/quality.py and its headline from report/phrasing.py; `said_by_notes` reads the notes the way a
reader would, and the headline must say the same. Then the same check over recorded runs."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from mountbench import model
from mountbench.analysis import quality
from mountbench.analysis.metrics import describe
from mountbench.analysis.reach import Reach
from mountbench.analysis.stats import Comparison
from mountbench.analysis.summary import Cell, Row
from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.phrasing import UNDECIDED, cell_standing, headlines

DATA = Path(__file__).parent.parent / "data" / "exports"


def _undecided(low: float, high: float) -> Comparison:
    return Comparison(math.sqrt(low * high), low, high, 0.5, False, level=0.99, n=3, spread=0.2)


def _reach(low: float, high: float, rounds, sure, *, run_level: bool = False, max_repeat: int = 12) -> Reach:
    more = None if sure is None else max(0, sure - 3)
    return Reach(max(high, 1 / low), rounds, more, max_repeat, True, 0.99, sure, run_level)


KINDS = {  # what a comparison's note says → (its interval, its reach)
    "within max-repeat": ((0.8, 1.3), lambda lo, hi: _reach(lo, hi, 6, 8)),
    "beyond max-repeat": ((0.7, 1.5), lambda lo, hi: _reach(lo, hi, 40, 60)),
    "out of reach: spread": ((0.6, 1.7), lambda lo, hi: _reach(lo, hi, None, None)),
    "out of reach: run level": ((0.75, 1.4), lambda lo, hi: _reach(lo, hi, None, None, run_level=True)),
    "too wide to rank": ((0.0122, 82.0), lambda lo, hi: _reach(lo, hi, None, None)),
    "too wide, far beyond": ((0.0000000169, 59000000.0), lambda lo, hi: _reach(lo, hi, None, None)),
    "no spread yet": ((0.85, 1.2), lambda lo, hi: None),
    "known to ±5%": ((0.99, 1.07), lambda lo, hi: _reach(lo, hi, 3, 3)),
}


def _cell(kind: str, target: str = "loop", baseline: str = "ram") -> Cell:
    (low, high), make = KINDS[kind]
    comparison = _undecided(low, high)
    found = make(low, high)
    shown = quality.Shown(found, target, baseline, 2.0, adaptive=False)
    note = quality.undecided_caveat(comparison, shown)
    return Cell(target, None, comparison, (note,), (), 0, (), reach=found)


def _rows(kinds: list[str]) -> list[Row]:
    base = Cell("ram", None, None, (), (), 0, ())
    return [Row(f"w{i}", f"W{i}", describe("read.iops"), {"ram": base, "loop": _cell(k)}) for i, k in enumerate(kinds)]


def said_by_notes(notes: list[str]) -> dict[str, object]:
    """What undecided comparisons' notes say, read as a reader reads them."""
    wide = sum("too wide to rank" in note for note in notes)
    bounds = []
    for note in notes:
        beyond = re.search(r"no difference beyond ([\d.]+)× either way", note)
        interval = re.search(r"its CI \(([\d.]+)–([\d.]+)×", note)
        if beyond:
            bounds.append(float(beyond.group(1)))
        elif interval:  # known to ±5 %: its interval, folded the way the headline folds it
            low, high = float(interval.group(1)), float(interval.group(2))
            bounds.append(high if high >= 1 / low else float(f"{1 / low:.3g}"))
    never = sum("out of reach in any number of rounds" in note for note in notes)
    beyond = sum("out of reach in this run" in note for note in notes)
    known = sum(note.startswith("known to ±") for note in notes)
    return {"wide": wide, "bounds": bounds, "never": never, "beyond": beyond, "known": known,
            "more": len(notes) - never - beyond - known}  # fmt: skip


def assert_headline_says(text: str, notes: list[str]) -> None:
    said = said_by_notes(notes)
    total = len(notes)
    clause = text[text.index("undecided") :].split(");")[0]
    for digits in re.findall(r"\d[\d.]*×", clause):  # no digit of a too-wide interval reaches the headline
        assert float(digits[:-1]) in said["bounds"], (digits, clause, notes)
    for note in notes:  # nor of its note: a 100× interval's digits claim more than it knows
        if "too wide to rank" in note:
            assert not re.search(r"\d×", note.replace("more than 100×", "")), note
    if said["wide"] == total:
        assert "(too wide to rank" in clause, clause
    elif said["wide"]:
        assert f"{total - said['wide']} within " in clause and f", {said['wide']} too wide to rank" in clause, clause
    if said["bounds"]:
        found = re.search(r"within ([\d.]+)× either way", clause)
        assert found and float(found.group(1)) == max(said["bounds"]), (clause, said["bounds"])
    if said["never"] == total:
        assert "out of reach in any number of rounds" in clause, clause
    if said["beyond"]:
        assert "out of reach in this run" in clause, clause
    if said["more"]:
        assert "more rounds would decide" in clause, clause
    else:
        assert "more rounds" not in clause, clause
    if said["known"]:
        assert "known" in clause and "to ±5%" in clause, clause


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_one_undecided_comparison(kind):
    rows = _rows([kind])
    (line,) = headlines(rows, ["ram", "loop"], "ram")
    assert_headline_says(line.text, [c.text for c in rows[0].cells["loop"].caveats])


@pytest.mark.parametrize(
    "kinds",
    [
        ["too wide to rank", "too wide, far beyond", "out of reach: spread"],  # the loop vs ram
        ["too wide to rank", "too wide, far beyond"],  # all too wide: no "more rounds would decide"
        ["out of reach: run level", "out of reach: spread", "beyond max-repeat"],
        ["within max-repeat", "beyond max-repeat", "no spread yet"],
        ["within max-repeat", "known to ±5%"],
        sorted(KINDS),
    ],
)
def test_several_undecided_comparisons(kinds):
    rows = _rows(kinds)
    (line,) = headlines(rows, ["ram", "loop"], "ram")
    assert_headline_says(line.text, [c.text for row in rows for c in row.cells["loop"].caveats])


@pytest.mark.parametrize("name", ["default-run", "tree-run"])
def test_recorded_runs_headlines_say_their_notes(name):
    report = build_report(read_document(DATA / f"{name}.json"))
    checked = 0
    for line in report.headlines:
        if not line.target or "undecided" not in line.text:
            continue
        cells = [row.cells[line.target] for row in report.grid.rows()]
        undecided = [c for row, c in zip(report.grid.rows(), cells, strict=True)
                     if (s := cell_standing(row, line.target)) is not None and s.kind == UNDECIDED]  # fmt: skip
        notes = [c.text for cell in undecided for c in cell.caveats if c.code == model.WIDE_RATIO]
        assert len(notes) == len(undecided)
        assert_headline_says(line.text, notes)
        checked += 1
    assert checked, f"{name}: no headline with an undecided comparison"
