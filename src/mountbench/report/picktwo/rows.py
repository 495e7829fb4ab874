"""What pick two is, for every lab: rows (a lab's mounts or targets) × properties (performance and
two more, each lab's own) × measured verdicts, on one scale (scale.py). A lab's judges
(vmshares.py, clouddrives.py, containermounts.py) read its typed facts and the report and make one
:class:`PickTwo`; the report holds one per lab it has runs of (Report.pick_two), and one section
(sections/picktwo.py) shows them all alike, in every format, with the chart (chart.py)."""

from __future__ import annotations

from dataclasses import dataclass

from mountbench.blocks.table import TableView
from mountbench.probefacts import LabProbe
from mountbench.report.picktwo.scale import MARK


@dataclass(frozen=True)
class Measured:
    """One measure of a row: what it says and its verdict ('' for a fact beside the verdicts, as the
    cloud lab's wire), its number for CSV and JSON, and the report's notes on it."""

    measure: str  # its name in the records: "write", "visibility", "random-read", "at_fsync", ...
    text: str
    verdict: str = ""
    value: float | None = None
    unit: str = ""
    notes: tuple[int, ...] = ()  # the report's note numbers of the caveats on the number

    @property
    def marked(self) -> str:
        return f"{MARK[self.verdict]} {self.text}" if self.verdict in MARK else self.text


@dataclass(frozen=True)
class Property:
    """One property of a row: its verdict (the worst of its measures') and the measures it stands on."""

    name: str
    verdict: str
    measures: tuple[Measured, ...] = ()


@dataclass(frozen=True)
class PickRow:
    """A lab's mount or target: a verdict per property, and what it gets (the properties judged good).
    ``baseline``: the run's baseline, which pick two judges against and does not judge; ``apart``:
    what is said after what it gets (" (not shared with the host)")."""

    label: str
    properties: tuple[Property, ...]
    about: tuple[Measured, ...] = ()  # facts beside the verdicts, in the about column
    baseline: bool = False
    apart: str = ""

    def prop(self, name: str) -> Property:
        return next(p for p in self.properties if p.name == name)

    def verdict(self, name: str) -> str:
        return self.prop(name).verdict

    @property
    def gets(self) -> str:
        """'performance + coherence', 'none of the three', 'the baseline'."""
        if self.baseline:
            return "the baseline"
        good = [p.name for p in self.properties if p.verdict == "good"]
        return (" + ".join(good) if good else "none of the three") + self.apart


@dataclass(frozen=True)
class PickTwo:
    """One lab's pick two: its rows and what the section says around them."""

    lab: str  # the lab's facts name (labfacts: "qemu", "cloud", "containers")
    key: str  # the section's id, the chart's key
    title: str
    properties: tuple[str, ...]
    rows: tuple[PickRow, ...]
    legend: str
    label_header: str = "mount"
    about_header: str = ""  # the column of the rows' facts ('' : none)
    intro: str = ""
    caption: str = ""
    notes: tuple[str, ...] = ()  # what the verdicts stand on, and what limits them
    tables: tuple[TableView, ...] = ()  # the lab's own tables beside it (its mounts, what each supports)
    terminal_tables: tuple[TableView, ...] = ()  # ... the terminal's (compact) versions, when they differ
    probes: tuple[LabProbe, ...] = ()  # probes whose own tables the section shows too (probe/render.py)
    probe_heading: str = ""
    probes_in_terminal: bool = True  # False: the terminal shows the lab's own tables only (they say the same, short)
    chart: bool = False  # draw the chart (rows down, properties across)
    chart_note: str = ""  # what the chart says under it
    spell_caveats: bool = False  # the terminal spells the notes on the measures out under the table
