"""The container lab's pick two, from a run made by `mountbench containers` (its facts and probe in
``config.lab``: ContainerLabFacts): per mount type, three properties, and the mount facts each
stands on.

- performance: each workload's headline figure against the host's (the bind mount's directory
  measured from the host, the run's baseline; without it, the fastest mount), judged from the
  run's intervals (performance.py); the worst of them;
- shared with the host, as each mount type says (its facts' ``shares``, labfacts' vocabulary):
  the host's directory itself, both ways (the bind mount), judged on what the probe measured of
  that mount across, both ways, each such mount on its own (sharing.py: good when every change
  showed within 100 ms and a read right after a replace was fresh); host to container only (the
  overlay mount: poor, the host never sees the container's writes); or not at all (the volume,
  the layer, the tmpfs);
- local-like: what the capability probe found from inside: renaming a directory that came from
  below (overlayfs answers EXDEV), chown, a user xattr and O_DIRECT: good when all work, fair when
  one is refused, poor when more are.

Also a table of the mounts as the container's mount table showed them (filesystem, options,
whether the data outlives the container) and the engine's facts (Podman, runtime, storage
driver, rootless or not, the image's ID), and the engines not measured, with why.

Pure: a Report in (picktwo.pick_twos calls this once, when the report is built).
"""

from __future__ import annotations

from collections.abc import Sequence

from mountbench.blocks.table import CellView, TableView
from mountbench.labfacts import HOST_TARGET, SHARED_BOTH_WAYS, SHARED_HOST_TO_CONTAINER, ContainerLabFacts
from mountbench.probefacts import MountProbe, TargetProbe
from mountbench.report.model import Report
from mountbench.report.picktwo.performance import fastest, headline_rows, judge_row, medians
from mountbench.report.picktwo.rows import Measured, PickRow, PickTwo, Property
from mountbench.report.picktwo.scale import LEGEND as SCALE
from mountbench.report.picktwo.scale import PROMPT_MS, worst
from mountbench.report.picktwo.sharing import across

TITLE = "Containers: pick two (performance, shared with the host, local-like semantics)"
KEY = "container-pick-two"
PROPERTIES = ("performance", "shared", "local-like")
INWARD, OUTWARD = "host → container", "container → host"
CHECKS = (("lower_dir_rename", "rename dir from below"), ("chown_uid", "chown"), ("user_xattr", "user xattr"),
          ("o_direct", "O_DIRECT"))  # fmt: skip
LEGEND = (
    f"{SCALE} · – not shared · ? not measured; performance against the host's own, from the intervals (good: "
    f"shown within 2×; poor: shown beyond 10×; fair otherwise); shared good when every change made on either side "
    f"showed on the other within {PROMPT_MS:g} ms and a read right after a replace was fresh; local-like: rename of "
    "a directory from below, chown, xattr, O_DIRECT all work"
)


def container_facts(report: Report) -> ContainerLabFacts | None:
    """The last container-lab run's facts (None: the report has none)."""
    found = [run.config.lab for run in report.runs if isinstance(run.config.lab, ContainerLabFacts)]
    return found[-1] if found else None


def pick_two(report: Report) -> PickTwo | None:
    facts = container_facts(report)
    if facts is None:
        return None
    mounts = [m.name for m in facts.mounts if m.name != HOST_TARGET and m.name in report.summary.targets]
    perf = _performance(report, mounts)
    rows = []
    for name in mounts:
        probed = _probed(facts, name)
        measures = perf.get(name, ())
        performance = Property("performance", worst(*(m.verdict for m in measures)), measures)
        local = _local(probed.capabilities if probed is not None else None)
        rows.append(PickRow(name, (performance, _shared(facts, name, probed), local)))
    return PickTwo(
        ContainerLabFacts.name,
        KEY,
        TITLE,
        PROPERTIES,
        tuple(rows),
        LEGEND,
        caption="per mount type, in one rootful Podman container; the host is the baseline",
        notes=tuple(notes(facts)),
        tables=(mounts_table(facts),),
        terminal_tables=(mounts_table(facts, compact=True),),
        probes=(facts.probe,) if facts.probe is not None else (),
        probe_heading="What each mount supports, and coherence in detail (the probe inside the container)",
        probes_in_terminal=False,  # the mounts table says what matters there; Markdown and HTML have it all
    )


def _probed(facts: ContainerLabFacts, name: str) -> MountProbe | None:
    return next((m for m in facts.probe.mounts if m.label == name), None) if facts.probe is not None else None


def _performance(report: Report, mounts: Sequence[str]) -> dict[str, tuple[Measured, ...]]:
    """Against the host's own speed (the baseline: how much the container's way costs); without the host,
    against the fastest mount."""
    found: dict[str, list[Measured]] = {m: [] for m in mounts}
    for row in headline_rows(report):
        figures = medians(row, mounts)
        if not figures:
            continue
        reference = None if report.summary.baseline == HOST_TARGET else fastest(row, figures)
        for mount, measured in judge_row(report, row, mounts, reference).items():
            found[mount].append(measured)
    return {m: tuple(items) for m, items in found.items()}


def _shared(facts: ContainerLabFacts, name: str, probed: MountProbe | None) -> Property:
    """From what the mount type says the host sees of it and, for the host's directory itself, what the
    probe measured across."""
    mount = facts.mount(name)
    shares = mount.shares if mount is not None else ""
    if shares == SHARED_HOST_TO_CONTAINER:
        return Property("shared", "poor", (Measured("shares", "the host's directory below; the host never sees "
                                                              "the container's writes", "poor"),))  # fmt: skip
    if shares != SHARED_BOTH_WAYS:
        return Property("shared", "not shared", (Measured("shares", "the host has no directory of its own here",
                                                          "not shared"),))  # fmt: skip
    if probed is None or (probed.to_guest is None and probed.to_host is None):
        why = "; ".join(probed.errors) if probed is not None and probed.errors else "probe not run (--no-probe)"
        return Property("shared", "not measured", (Measured("shares", why, "not measured"),))
    visibility, stale, _locks = across(probed, INWARD, OUTWARD)
    return Property("shared", worst(visibility.verdict, stale.verdict), (visibility, stale))


def _local(found: TargetProbe | None) -> Property:
    """The capability probe's answers to what a local filesystem does."""
    if found is None:
        return Property("local-like", "not measured", (Measured("local", "not measured", "not measured"),))
    seen = {r.capability: r for r in found.results}
    refused = [f"{name}: {seen[key].errno or seen[key].verdict}" for key, name in CHECKS
               if key in seen and seen[key].verdict != "yes"]  # fmt: skip
    verdict = "good" if not refused else "fair" if len(refused) == 1 else "poor"
    texts = refused or ["all work"]
    return Property("local-like", verdict, tuple(Measured("local", text, verdict) for text in texts))


def _said(found: TargetProbe | None, key: str) -> str:
    """One check as the mounts table says it: ok, its errno, or the probe's verdict."""
    result = next((r for r in found.results if r.capability == key), None) if found is not None else None
    if result is None:
        return "–"
    return "ok" if result.verdict == "yes" else str(result.errno or result.verdict)


def mounts_table(facts: ContainerLabFacts, compact: bool = False) -> TableView:
    """Every mount as the container saw it; ``compact`` (the terminal): without where, source and options."""
    headers = ["mount", "filesystem", "outlives the container", *(n for _, n in CHECKS)]
    if not compact:
        headers = ["mount", "inside at", "filesystem", "source", "outlives the container", *(n for _, n in CHECKS),
                   "options"]  # fmt: skip
    cells = []
    for mount in facts.mounts:
        probed = _probed(facts, mount.name)
        said = [_said(probed.capabilities if probed is not None else None, key) for key, _ in CHECKS]
        fstype = mount.fstype or ("the host's" if mount.name == HOST_TARGET else "")
        persists = mount.outlives or "?"
        if compact:
            short = persists.split(":")[0].split(" (")[0]
            cells.append([CellView(mount.name, strong=True), CellView(fstype), CellView(short), *map(CellView, said)])
            continue
        cells.append([CellView(mount.name, strong=True), CellView(mount.path), CellView(fstype),
                      CellView(mount.source or "–"), CellView(persists), *map(CellView, said),
                      CellView(mount.options or "–")])  # fmt: skip
    return TableView("container-mounts", "Container mounts, as the container's mount table showed them", headers,
                     cells, numeric_from=1_000)  # fmt: skip


def notes(facts: ContainerLabFacts) -> list[str]:
    image = facts.image
    lines = [
        f"{facts.engine} ({'rootless' if facts.rootless else 'rootful'}), {facts.runtime}, storage driver "
        f"{facts.storage_driver}, cgroup manager {facts.cgroup_manager}, network {facts.network}; image {image.name} "
        f"{image.id} (built here from the host's tools)"
    ]
    lines += [f"not measured: {engine} ({why})" for engine, why in facts.engines.items() if why != "measured"]
    if facts.probe is not None:
        lines += [f"probe: {error}" for error in facts.probe.errors]
        lines += [f"{m.label}: {error}" for m in facts.probe.mounts for error in m.errors]
    return lines
