""" "Pick two" for container storage, from a run made by `mountbench containers` (its facts and
probe travel in ``config.lab``: ContainerLabFacts): per mount type, three properties on
picktwo's scale, and the mount facts each stands on.

- performance: each workload's headline figure against the host's (the bind mount's directory
  measured from the host, the run's baseline; without it, the fastest mount), judged from the run's
  intervals (picktwo.scale.interval_verdict): good when the interval shows it within 2×, poor when
  it shows it beyond 10×, fair otherwise; the worst of them;
- shared with the host, as each mount type says (its facts' ``shares``): the host's directory
  itself, both ways (the bind mount: good when the probe saw a host write in the container
  within 100 ms and the container's write on the host at once; fair when slower; poor when
  never); host to container only (the overlay mount: poor, the host never sees the container's
  writes); or not at all (the volume, the layer, the tmpfs);
- local-like: what the probe found from inside: renaming a directory that came from below (the
  image, the lower directory: overlayfs answers EXDEV), chown, a user xattr and O_DIRECT: good
  when all work, fair when one is refused, poor when more are.

Also a table of the mounts as the container's mount table showed them (filesystem, options,
whether the data outlives the container) and the engine's facts (Podman, runtime, storage
driver, rootless or not, the image's ID), and the engines not measured, with why.

Pure: a Report in, records and text out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mountbench.analysis.summary import Row
from mountbench.blocks.parts import Chapter, Heading, Items, Paragraph, Table
from mountbench.blocks.table import CellView, Line, RichLayout, TableView
from mountbench.labfacts import ContainerLabFacts
from mountbench.report.cells import format_value
from mountbench.report.csvexport import records_csv
from mountbench.report.model import Report
from mountbench.report.picktwo.scale import LEGEND as SCALE
from mountbench.report.picktwo.scale import PROMPT_MS, interval_verdict, slower_than, verdict_cell, worst
from mountbench.report.sections.section import Export, Options, nothing

TITLE = "Containers: pick two (performance, shared with the host, local-like semantics)"
HOST = "host"
CHECKS = (("rename_lower_dir", "rename dir from below"), ("chown", "chown"), ("xattr", "user xattr"),
          ("o_direct", "O_DIRECT"))  # fmt: skip
LEGEND = (
    f"{SCALE} · – not shared · ? not measured; performance against the host's own, from the intervals (good: "
    f"shown within 2×; poor: shown beyond 10×; fair otherwise); shared good when a host write showed inside within "
    f"{PROMPT_MS:g} ms and a container write showed on the host; local-like: rename of a directory from below, "
    "chown, xattr, O_DIRECT all work"
)


@dataclass(frozen=True)
class ContainerRow:
    mount: str
    performance: str
    shared: str
    local: str
    perf_text: tuple[str, ...]
    shared_text: str
    local_text: tuple[str, ...]

    @property
    def gets(self) -> str:
        good = [name for name, v in (("performance", self.performance), ("shared", self.shared),
                                     ("local-like", self.local)) if v == "good"]  # fmt: skip
        return " + ".join(good) if good else "none of the three"


def container_facts(report: Report) -> dict[str, Any]:
    """The last container-lab run's facts (empty: the report has none)."""
    found = [run.config.lab.facts for run in report.runs if isinstance(run.config.lab, ContainerLabFacts)]
    return found[-1] if found else {}


def _performance(report: Report, mounts: Sequence[str]) -> dict[str, tuple[str, tuple[str, ...]]]:
    verdicts: dict[str, list[str]] = {m: [] for m in mounts}
    texts: dict[str, list[str]] = {m: [] for m in mounts}
    done: set[str] = set()
    for row in report.summary.rows:
        if row.workload in done:
            continue  # each workload's headline row only
        done.add(row.workload)
        medians = {m: c.summary.median for m in mounts if (c := row.cells.get(m)) and c.summary and c.summary.median}
        if not medians:
            continue
        baseline = report.summary.baseline
        # against the host's own speed (the baseline: how much the container's way costs), from the intervals
        reference = None if baseline == HOST else _fastest(row, medians)
        for mount in mounts:
            if mount not in medians:
                verdicts[mount].append("poor")
                texts[mount].append(f"{row.workload}: failed")
                continue
            found = slower_than(row, mount, baseline, reference)
            if found is None:
                verdicts[mount].append("not measured")
                texts[mount].append(f"{row.workload}: {format_value(medians[mount], row.metric)} (no interval)")
                continue
            factor, near, far = found
            verdicts[mount].append(interval_verdict(near, far))
            shown = format_value(medians[mount], row.metric)
            texts[mount].append(f"{row.workload}: {shown}{_span(factor, near, far)}")
    return {m: (worst(*verdicts[m]), tuple(texts[m])) for m in mounts}


def _fastest(row: Row, medians: Mapping[str, float]) -> str:
    return (max if row.metric.higher_is_better else min)(medians, key=lambda m: medians[m])


def _span(factor: float, near: float, far: float) -> str:
    """' (1.80×, 1.60–2.10×)': how many times slower, with its interval; '' when it is no slower."""
    if far <= 1.0:
        return ""
    return f" ({factor:.3g}×, {max(near, 0):.3g}–{far:.3g}×)"


def _shared(mount: Mapping[str, Any], coherence: Mapping[str, Any] | None) -> tuple[str, str]:
    """From what the mount type says the host sees of it (its facts' ``shares``) and, for the host's
    directory itself, what the probe measured."""
    shares = mount.get("shares")
    if shares == "host to container":
        return "poor", "the host's directory below; the host never sees the container's writes"
    if shares != "both ways":
        return "not shared", "the host has no directory of its own here"
    if not coherence or "host_to_container_s" not in coherence:
        return "not measured", "probe not run (--no-probe)"
    seen, back = coherence.get("host_to_container_s"), coherence.get("container_to_host")
    inotify = "inotify saw it" if coherence.get("host_to_container_inotify") else "inotify did not see it"
    if seen is None or not back:
        return "poor", f"host → container: {'never' if seen is None else 'ok'}; container → host: {back}"
    verdict = "good" if seen * 1000 <= PROMPT_MS else "fair"
    return verdict, f"host → container {seen * 1000:.1f} ms ({inotify}); container → host at once"


def _local(found: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    if not found:
        return "not measured", ()
    refused = [f"{name}: {found[key].get('errno') or 'refused'}" for key, name in CHECKS
               if key in found and not found[key].get("ok")]  # fmt: skip
    verdict = "good" if not refused else "fair" if len(refused) == 1 else "poor"
    return verdict, tuple(refused) or ("all work",)


def container_rows(report: Report) -> list[ContainerRow]:
    facts = container_facts(report)
    if not facts:
        return []
    mounts = [m for m in (facts.get("mounts") or {}) if m != HOST and m in report.summary.targets]
    perf = _performance(report, mounts)
    probe = facts.get("probe") or {}
    caps = probe.get("capabilities") or {}
    rows = []
    for mount in mounts:
        shared, shared_text = _shared((facts.get("mounts") or {}).get(mount) or {}, probe.get("coherence"))
        local, local_text = _local(caps.get(mount) or {})
        performance, perf_text = perf.get(mount, ("not measured", ()))
        rows.append(ContainerRow(mount, performance, shared, local, perf_text, shared_text, local_text))
    return rows


# --- views -------------------------------------------------------------------------------------


def table(rows: Sequence[ContainerRow]) -> TableView:
    headers = ["mount", "performance", "shared with the host", "local-like semantics", "gets"]
    cells = [
        [
            CellView(r.mount, strong=True),
            verdict_cell(r.performance, [Line(t) for t in r.perf_text]),
            verdict_cell(r.shared, [Line(r.shared_text)]),
            verdict_cell(r.local, [Line(t) for t in r.local_text]),
            CellView(r.gets),
        ]
        for r in rows
    ]
    return TableView("container-pick-two", TITLE, headers, cells, numeric_from=1_000,
                     caption="per mount type, in one rootful Podman container; the host is the baseline")  # fmt: skip


def mounts_table(facts: Mapping[str, Any], compact: bool = False) -> TableView:
    """Every mount as the container saw it; ``compact`` (the terminal): without where, source and options."""
    caps = (facts.get("probe") or {}).get("capabilities") or {}
    headers = ["mount", "filesystem", "outlives the container", *(n for _, n in CHECKS)]
    if not compact:
        headers = ["mount", "inside at", "filesystem", "source", "outlives the container", *(n for _, n in CHECKS),
                   "options"]  # fmt: skip
    cells = []
    for name, mount in (facts.get("mounts") or {}).items():
        found = caps.get(name) or {}
        said = [
            ("ok" if found[key].get("ok") else str(found[key].get("errno") or "refused")) if key in found else "–"
            for key, _ in CHECKS
        ]
        fstype = str(mount.get("fstype") or ("the host's" if name == HOST else ""))
        persists = str(mount.get("outlives") or "?")
        if compact:
            short = persists.split(":")[0].split(" (")[0]
            cells.append([CellView(name, strong=True), CellView(fstype), CellView(short), *map(CellView, said)])
            continue
        cells.append([CellView(name, strong=True), CellView(str(mount.get("path", ""))), CellView(fstype),
                      CellView(str(mount.get("source", "–"))), CellView(persists), *map(CellView, said),
                      CellView(str(mount.get("options", "–")))])  # fmt: skip
    return TableView("container-mounts", "Container mounts, as the container's mount table showed them", headers,
                     cells, numeric_from=1_000)  # fmt: skip


def notes(facts: Mapping[str, Any]) -> list[str]:
    image = facts.get("image") or {}
    lines = [
        f"{facts.get('engine')} ({'rootless' if facts.get('rootless') else 'rootful'}), {facts.get('runtime')}, "
        f"storage driver {facts.get('storage_driver')}, cgroup manager {facts.get('cgroup_manager')}, network "
        f"{facts.get('network')}; image {image.get('name')} {image.get('id')} (built here from the host's tools)"
    ]
    lines += [f"not measured: {engine} ({why})" for engine, why in (facts.get("engines") or {}).items()
              if why != "measured"]  # fmt: skip
    return lines


# --- parts -------------------------------------------------------------------------------------


def screen(report: Report, options: Options) -> list:
    rows = container_rows(report)
    if not rows:
        return []
    facts = container_facts(report)
    return [Paragraph(""), Table(table(rows), RichLayout(show_lines=True)), Paragraph(LEGEND, "legend"),
            Paragraph(""), Table(mounts_table(facts, compact=True)), Items.of(notes(facts), "note")]  # fmt: skip


def document(report: Report, options: Options) -> Chapter | None:
    rows = container_rows(report)
    if not rows:
        return None
    facts = container_facts(report)
    mounts = mounts_table(facts)
    view = table(rows)
    blocks = (Paragraph(view.caption, "caption"), Table(view), Paragraph(LEGEND, "legend"), Heading(mounts.heading),
              Table(mounts), Items.of(notes(facts), "note"))  # fmt: skip
    return Chapter("container-pick-two", TITLE, blocks)


def records(report: Report) -> list[dict[str, Any]]:
    facts = container_facts(report)
    mounts = facts.get("mounts") or {}
    return [
        {
            "mount": r.mount,
            "performance": r.performance,
            "performance_measures": list(r.perf_text),
            "shared": r.shared,
            "shared_measures": r.shared_text,
            "local_like": r.local,
            "local_measures": list(r.local_text),
            "gets": r.gets,
            "fstype": (mounts.get(r.mount) or {}).get("fstype"),
            "options": (mounts.get(r.mount) or {}).get("options"),
        }
        for r in container_rows(report)
    ]


def exports(report: Report) -> list[Export]:
    found = records(report)
    if not found:
        return []
    note = "containers: performance, sharing with the host and local-like semantics per mount type"
    return [Export("container_pick_two", "-containerpick", note, found, records_csv(found))]


charts = nothing
page_charts = nothing  # the page draws no chart of its own here
