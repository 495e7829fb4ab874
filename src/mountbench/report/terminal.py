"""The terminal report: the answer first, then the detail, in the width the terminal has.

1. one headline per compared target ("disk is 6.20× slower than ram in 5 of 6 workloads…");
2. the summary grid (grid.py), then one table per metric (terminal_tables.py, laid out for
   the console's width when printed: terminal_layout.Adaptive);
3. the notes, a hint at the commands that show more, and how the run was made
   (run facts wrap between fields, not inside one);
4. each section's part (sections/).

Also every sample of a run, for 'show RUN --samples'.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import partial

from rich.console import Group
from rich.text import Text

from mountbench.analysis.metrics import describe
from mountbench.blocks.table import CellView, RichLayout, TableView
from mountbench.blocks.to_terminal import renderables, rich_table
from mountbench.blocks.tokens import hold
from mountbench.model import QUALITY_CODES, RunData
from mountbench.report.cells import format_value
from mountbench.report.grid import unit_name
from mountbench.report.methodology import run_facts
from mountbench.report.model import Report
from mountbench.report.notes import in_words
from mountbench.report.phrasing import NOISE, UNDECIDED_LEGEND, interval_legend, same_legend
from mountbench.report.rounds import rounds_legend
from mountbench.report.sections import SECTIONS, Options
from mountbench.report.terminal_layout import Adaptive, Fields, Words
from mountbench.report.terminal_tables import (
    MARK_STYLE,
    STYLES,
    compact_grid,
    detail_layouts,
    grid_layouts,
    rounds_table,
)
from mountbench.units import format_bytes, format_seconds


def render_run(report: Report, *, per_client: bool = False) -> list:
    """Everything `run`, `show` and `lab` print after a run: the report, then each section's part."""
    options = Options(per_client=per_client)
    return [
        render_report(report),
        *renderables([block for section in SECTIONS for block in section.screen(report, options)]),
    ]


def headline_lines(report: Report) -> list[Fields]:
    """A headline per target in bold, in its verdict's colour; the busy machine under them, dim (issue 48:
    the answer is the strongest type on the page, what widened it is subordinate)."""
    return [
        Fields(["·", *hold(h.text).split(" ")], style="dim", indent=2, separator="")
        if h.kind == NOISE
        else Fields(
            ["▶", *hold(h.text).split(" ")], style=f"bold {STYLES.get(h.kind, '')}".strip(), indent=2, separator=""
        )
        for h in report.headlines
    ]


def answer(report: Report) -> Group:
    """What the run decided, said last (`run` ends with it): each target's headline, and where to see the
    rest again."""
    ids = report.runs[0].id if len(report.runs) == 1 else "RUN"
    lines = [line for line, h in zip(headline_lines(report), report.headlines, strict=True) if h.kind != NOISE]
    return Group(
        Text("Answer:", style="bold"),
        *lines,
        Fields(
            [f"the grid again: mountbench show {ids}", f"charts: mountbench report {ids} --out report.html"],
            style="dim",
            indent=2,
            first_indent=2,
        ),
    )


def render_report(report: Report) -> Group:
    """Everything `run`, `show` and `lab` print after a run."""
    parts: list = [_title(report)]
    parts += headline_lines(report)
    parts += [Fields(["⚠", *w.split()], style="yellow", indent=2, separator="") for w in report.warnings]
    if report.grid.sections:
        parts.append(Text(""))
        parts.append(Text(f"Summary ({_unit_phrase(report)}):", style="bold"))
        parts += [Adaptive(partial(grid_layouts, report, section)) for section in report.grid.sections]
    parts.append(Text(""))
    parts.append(Text("Detail:", style="bold"))
    parts += [Adaptive(partial(detail_layouts, report, group)) for group in report.groups]
    if report.adaptive:
        parts += _rounds(report)
    parts.append(_notes(report))
    parts.append(Fields(_legend(report), style="dim", separator=" ·"))
    parts += environment_fields(report.runs, style="dim")
    return Group(*parts)


def render_short(report: Report) -> Group:
    """What `show` prints by default: the answer on one 80x24 screen (issue 37: `show` ran to
    103 lines for two targets), like CrystalDiskMark's one window: the title, a headline per
    target, how many warnings and notes there are, the summary grid, and where the rest is."""
    parts: list = [_title(report)]
    parts += [line for line, h in zip(headline_lines(report), report.headlines, strict=True) if h.kind != NOISE]
    if report.busy_brief:
        parts.append(Fields(["·", *hold(report.busy_brief).split(" ")], style="dim", indent=2, separator=""))
    if report.grid.sections:
        parts.append(Adaptive(partial(_short_grid, report)))
    ids = report.runs[0].id if len(report.runs) == 1 else "RUN"
    said = []
    if report.warnings:
        said.append(f"{len(report.warnings)} warning{'s' if len(report.warnings) != 1 else ''}")
    cited = report.cited(report.grid.rows())
    if cited:
        said.append(f"{'notes' if len(cited) > 1 else 'note'} {number_ranges(cited)}")
    lead = f"{' and '.join(said)} and the detail" if said else "detail and run facts"
    parts.append(
        Fields(
            [f"{lead}: mountbench show {ids} --detail", f"charts: mountbench report {ids} --out report.html"],
            style="dim",
            separator=";",
        )
    )
    return Group(*parts)


def number_ranges(numbers: Sequence[int]) -> str:
    """[1]–[8], [10]: note numbers as runs of consecutive ones."""
    runs: list[list[int]] = []
    for number in sorted(numbers):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"[{r[0]}]" if len(r) == 1 else f"[{r[0]}]–[{r[-1]}]" for r in runs)


def _short_grid(report: Report, width: int) -> list:
    """The compact grid where it fits the width, else the summary's own layouts, section by section."""
    full = Group(
        Text(f"Summary ({_unit_phrase(report)}):", style="bold"),
        *(Adaptive(partial(grid_layouts, report, section)) for section in report.grid.sections),
    )
    return [compact_grid(report, width), full]


# --- pieces --------------------------------------------------------------------------------


def _rounds(report: Report) -> list:
    """Adaptive runs: how many rounds each cell got and why it got no more."""
    return [Text(""), rounds_table(report), Fields(rounds_legend(report).split("; "), style="dim")]


def _title(report: Report) -> Text:
    statuses = {run.status for run in report.runs}
    status = "" if statuses == {"complete"} else f" [{', '.join(sorted(statuses))}]"
    text = Text(f"mountbench run {', '.join(run.id for run in report.runs)}{status}", style="bold")
    text.append(f" · baseline {report.summary.baseline}", style="dim")
    return text


def _unit_phrase(report: Report) -> str:
    if report.grid.unit == "auto":
        return "medians; --unit MB/s, IOPS or µs for one unit throughout"
    return f"medians, --unit {unit_name(report.grid.unit)}"


def _legend(report: Report) -> list[str]:
    ids = report.runs[0].id if len(report.runs) == 1 else "RUN"
    return [
        "median ±CV",
        f"N× faster/slower than the baseline, {interval_legend(report.summary, report.adaptive)}",
        same_legend(report.summary, report.adaptive),
        UNDECIDED_LEGEND,
        "[n]: notes",
        f"every sample: mountbench show {ids} --samples",
        f"charts: mountbench report {ids} --out report.html",
    ]


def shown_rows(report: Report) -> list:
    """The rows the terminal shows with their marks: the summary grid's, then the detail tables'."""
    return report.grid.rows() + [row for group in report.groups for row in group.rows]


def _notes(report: Report) -> Text:
    """The notes the terminal's tables refer to (a percentile curve's, which it does not show, are left
    out: they are numbered after these, so the numbers run without a gap)."""
    quality = _quality_notes(report)
    text = Text()
    for index, number in enumerate(report.cited(shown_rows(report))):
        if index:
            text.append("\n")
        text.append(f"[{number}] ", style=MARK_STYLE)
        note = in_words(report.notes[number - 1], report.runs)
        text.append(note, style="magenta" if number in quality else MARK_STYLE)
    return text


def _quality_notes(report: Report) -> set[int]:
    """Numbers of notes about the samples' statistics (drift, outliers…), not how they were measured."""
    rows = report.grid.rows() + [row for group in report.groups for row in group.rows]
    found = set()
    for row in rows:
        for cell in row.cells.values():
            for caveat in cell.caveats:
                if caveat.code in QUALITY_CODES and caveat.text in report.notes:
                    found.add(report.notes.index(caveat.text) + 1)
    return found


def environment_fields(runs: Iterable[RunData], *, style: str = "") -> list[Fields]:
    """How each run was made, and each target: phrases that wrap between fields."""
    found = []
    for run in runs:
        host = run.host
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.created_at)) if run.created_at else "?"
        fields = [
            f"run {run.id} on {host.get('hostname', '?')} at {when}",
            str(host.get("os", "?")),
            str(host.get("cpu_model", "?")),
            f"{host.get('cpu_count', '?')} CPUs",
            f"{format_bytes(host.get('ram_bytes', 0))} RAM",
            str(host.get("fio_version", "")),
            f"mountbench {host.get('mountbench_version', '?')}",
            *([f"in a container: {host['container']}"] if host.get("container") else []),
            *run_facts(run),
        ]
        found.append(Fields(fields, style=style))
        for record in run.targets:
            info = record.info
            if info is None:
                continue
            direct = "O_DIRECT ok" if info.odirect else f"O_DIRECT refused ({info.odirect_detail})"
            found.append(
                Fields(
                    [
                        f"{record.target.label}: {record.target.path}",
                        f"{info.fstype} from {info.mount_source}",
                        *([info.mount_kind] if info.mount_kind else []),
                        f"options {info.mount_options}",
                        direct,
                        f"{format_bytes(info.free_bytes)} free",
                    ],
                    style=style,
                    first_indent=2,
                    indent=6,
                )
            )
    return found


# --- show RUN --samples -------------------------------------------------------------------------------


SAMPLE_HEADERS = ["#", "time", "round", "target", "workload", "value", "wall", "notes"]


def render_samples(run: RunData) -> Adaptive:
    """Every sample of a run in the order it was taken: what 'show RUN --samples' prints, so
    outliers, drift and failures can be seen sample by sample. A table where it fits whole
    (without the clock time and the wall time where that is what fits), else a line per
    sample wrapped between words: a workload's name is never cut to 'seq1m-q8-…' (issue 37)."""
    rows = _sample_rows(run)
    title = f"samples of run {run.id}, in the order they were taken"

    def layouts(width: int) -> list:
        view = TableView("samples", title, SAMPLE_HEADERS, rows, align="rlrllrrl")
        keep = [i for i, h in enumerate(SAMPLE_HEADERS) if h not in ("time", "wall")]
        narrow = TableView("samples", title, [SAMPLE_HEADERS[i] for i in keep], [[r[i] for i in keep] for r in rows],
                           align="".join("rlrllrrl"[i] for i in keep))  # fmt: skip
        lines = [
            Words(
                [
                    Text(f"{r[0].text}. round {r[2].text} · {r[3].text} · {r[4].text}:"),
                    Text(r[5].text, style=r[5].style),
                    Text(f"· {r[6].text}"),
                    Text(r[7].text, style=r[7].style),
                ],
                indent=4,
            )
            for r in rows
        ]
        fixed = RichLayout(title_justify="center", no_wrap=True)
        return [rich_table(view, layout=fixed), rich_table(narrow, layout=fixed), Group(Text(title), *lines)]

    return Adaptive(layouts)


def _sample_rows(run: RunData) -> list[list[CellView]]:
    workloads = {w.name: w for w in run.workloads}
    ordered = sorted(run.samples, key=lambda s: (s.started_at, s.round))
    rows = []
    for index, sample in enumerate(ordered, 1):
        workload = workloads.get(sample.workload)
        headline = [m for m in (workload.description.headline if workload else ()) if m in sample.metrics]
        value = ", ".join(format_value(sample.metrics[m], describe(m)) for m in headline) or "–"
        when = time.strftime("%H:%M:%S", time.localtime(sample.started_at)) if sample.started_at else "?"
        codes = " ".join(dict.fromkeys(c.code for c in sample.caveats))
        rows.append([
            *map(CellView, (str(index), when, str(sample.round + 1), sample.target, sample.workload)),
            CellView(value) if sample.ok else CellView("failed", style="red"),
            CellView(format_seconds(sample.wall_s)),
            CellView(sample.error, style="red") if not sample.ok else CellView(codes, style="yellow"),
        ])  # fmt: skip
    return rows
