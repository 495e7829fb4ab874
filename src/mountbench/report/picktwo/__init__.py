""" "Pick two", measured, for every lab: rows (its mounts) × properties × measured verdicts, one model
(rows.py) built once when the report is built (Report.pick_two: one per lab the report has runs
of) and shown by one section (sections/picktwo.py). A lab supplies only its judges, each a module
reading its typed facts (labfacts.py) and the report:

- ``vmshares``: the QEMU lab's (performance, coherence, concurrency);
- ``clouddrives``: the cloud lab's (performance, consistency with the remote, durability at fsync);
- ``containermounts``: the container lab's (performance, shared with the host, local-like);

on what they share: ``scale`` (the verdict scale: good, fair, poor, data loss, not shared, not
measured; its marks and colours; the one performance judge's arithmetic, from the run's intervals:
slower_than, interval_verdict), ``performance`` (that judge on each workload's headline figure),
``sharing`` (coherence and locks across a lab's boundary, from its probe), and ``chart`` (mounts
down, properties across, coloured by verdict). A lab joins with one module and one line in JUDGES.

Of report/'s sub-packages it may import: none.
Beside that: the ground floor, analysis/, probe/ (the rendering of its results), and report modules
below the sections (model, labels, cells, chartkit inside the chart function); tables are
blocks/table.py's.
"""

from __future__ import annotations

from collections.abc import Callable

from mountbench.report.model import Report
from mountbench.report.picktwo import clouddrives, containermounts, vmshares
from mountbench.report.picktwo.rows import PickTwo

JUDGES: tuple[Callable[[Report], PickTwo | None], ...] = (
    vmshares.pick_two,
    clouddrives.pick_two,
    containermounts.pick_two,
)


def pick_twos(report: Report) -> tuple[PickTwo, ...]:
    """Every lab's pick two the report has runs for (content.build_report stores them on the Report)."""
    return tuple(found for judge in JUDGES if (found := judge(report)) is not None)
