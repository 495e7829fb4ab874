"""Can two runs be compared, and which targets of theirs measured the same storage?

A result from an earlier run is a baseline only for what was measured the same way: on the same
machine, by the same fio, with the same workloads (their fio options: a preset, a job file, a size
and a runtime all land there) and the same state of the working files. Those differences *refuse*
a comparison (what changed would be in every ratio). Others are worth saying but are what a
comparison over time is often for: a new kernel, a new mountbench, other mount options, another
CPU count or RAM size of the same machine, caches that could be dropped then and not now. They
are *warnings*, said next to the result.

Targets are matched by what they measured, never by their labels: the resolved path and the
filesystem there (its type and what it is mounted from: runlevel.calibration_key's facts). A
target renamed between runs still matches; another filesystem mounted under the same path does not.

Pure: run facts in, differences out.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from mountbench.model import RunConfig, RunData, TargetInfo, TargetRecord, Workload

# what refuses a comparison (the first word of each Difference.what)
MACHINE, FIO, WORKLOADS, KIND_OPTION = "machine", "fio", "workloads", "option"
# what is only said
KERNEL, MOUNTBENCH, HARDWARE, CACHES, CLOCK = "kernel", "mountbench", "hardware", "caches", "fio clock"


@dataclass(frozen=True)
class Difference:
    """One way two runs differ: what, its value then and now, and whether it refuses a comparison."""

    what: str  # "machine", "fio", "workload seq1m-q8-read", "file state", "kernel", ...
    then: str
    now: str
    refuses: bool

    @property
    def text(self) -> str:
        """'fio fio-3.33 → fio-3.36'."""
        return f"{self.what} {self.then} → {self.now}"


@dataclass(frozen=True)
class Facts:
    """What a run measured with: its machine (host facts), its options and its workloads."""

    host: Mapping[str, Any]
    config: RunConfig
    workloads: tuple[Workload, ...]

    @classmethod
    def of(cls, run: RunData) -> Facts:
        return cls(run.host, run.config, run.workloads)


def differences(then: Facts, now: Facts, workloads: Collection[str] | None = None) -> tuple[Difference, ...]:
    """How ``now`` differs from ``then``, refusals first. ``workloads``: the names whose options must
    match (default: those the two share; a workload only one of them ran is no difference: it has
    nothing to compare)."""
    found = [*_machine(then.host, now.host), *_workloads(then.workloads, now.workloads, workloads)]
    found += _kind_options(then.config, now.config)
    found += _warnings(then, now)
    return tuple(sorted(found, key=lambda d: not d.refuses))


def refusals(found: tuple[Difference, ...]) -> tuple[Difference, ...]:
    return tuple(d for d in found if d.refuses)


def warnings(found: tuple[Difference, ...]) -> tuple[Difference, ...]:
    return tuple(d for d in found if not d.refuses)


def machine_of(host: Mapping[str, Any]) -> str:
    """How a run's machine is told from another: its machine id (a digest), else its host name."""
    return str(host.get("machine_id") or "") or f"host {host.get('hostname', '?')}"


def _machine(then: Mapping[str, Any], now: Mapping[str, Any]) -> list[Difference]:
    found = []
    then_id, now_id = str(then.get("machine_id") or ""), str(now.get("machine_id") or "")
    then_name, now_name = str(then.get("hostname", "?")), str(now.get("hostname", "?"))
    if (then_id and now_id and then_id != now_id) or ((not then_id or not now_id) and then_name != now_name):
        found.append(Difference(MACHINE, then_name, now_name if now_name != then_name else f"{now_name} (another "
                                "machine of that name)", True))  # fmt: skip
    then_fio, now_fio = str(then.get("fio_version", "")), str(now.get("fio_version", ""))
    if then_fio and now_fio and then_fio != now_fio:
        found.append(Difference(FIO, then_fio, now_fio, True))
    return found


def signature(workload: Workload) -> str:
    """What a workload measures, as text: two workloads with one signature run alike (its kind and every
    option its kind describes it by: every fio option, size and runtime included)."""
    return json.dumps([workload.kind, list(workload.description.options)])


def _workloads(
    then: tuple[Workload, ...], now: tuple[Workload, ...], names: Collection[str] | None
) -> list[Difference]:
    then_by, now_by = {w.name: w for w in then}, {w.name: w for w in now}
    wanted = list(names) if names is not None else [n for n in then_by if n in now_by]
    found = []
    for name in wanted:
        old, new = then_by.get(name), now_by.get(name)
        if old is None or new is None:
            found.append(Difference(f"workload {name}", "run" if old else "not run", "run" if new else "not run",
                                    True))  # fmt: skip
        elif signature(old) != signature(new):
            found.append(Difference(f"workload {name}", *_first_option_change(old, new), True))
    return found


def _first_option_change(old: Workload, new: Workload) -> tuple[str, str]:
    """The first of a workload's options that differs ('size=256M', 'size=1G'), else its kind or spec."""
    if old.kind != new.kind:
        return old.kind, new.kind
    old_options, new_options = _options(old), _options(new)
    for key in dict.fromkeys([*old_options, *new_options]):
        if old_options.get(key) != new_options.get(key):
            return f"{key}={old_options.get(key, '(none)')}", f"{key}={new_options.get(key, '(none)')}"
    return "its definition", "another"


def _options(workload: Workload) -> dict[str, str]:
    """A workload's options as its kind describes them, read as fio reads them (a later one replaces an
    earlier one); an option without a value (a flag, a section's header) stands for itself."""
    found: dict[str, str] = {}
    for option in workload.description.options:
        key, _, value = option.partition("=")
        found[key.strip()] = value.strip()
    return found


def _kind_options(then: RunConfig, now: RunConfig) -> list[Difference]:
    """The options workload kinds declare (fio's --file-state, the tree's --tree, ...): how every round
    sees its files is part of what is measured."""
    old = {name: json.dumps(value.to_json(), sort_keys=True) for name, value in then.kind_options.values}
    new = {name: json.dumps(value.to_json(), sort_keys=True) for name, value in now.kind_options.values}
    return [
        Difference(name.replace("_", " "), _plain(old.get(name)), _plain(new.get(name)), True)
        for name in dict.fromkeys([*old, *new])
        if name in old and name in new and old[name] != new[name]
    ]


def _plain(text: str | None) -> str:
    if text is None:
        return "(not recorded)"
    value = json.loads(text)
    return value if isinstance(value, str) else text


def _warnings(then: Facts, now: Facts) -> list[Difference]:
    found = []
    for key, what in (("kernel", KERNEL), ("mountbench_version", MOUNTBENCH), ("fio_clocksource", CLOCK)):
        old, new = str(then.host.get(key, "")), str(now.host.get(key, ""))
        if old and new and old != new:
            found.append(Difference(what, old, new, False))
    hardware = [("cpu_model", "CPU"), ("cpu_count", "CPUs"), ("ram_bytes", "RAM bytes")]
    for key, word in hardware:
        old, new = then.host.get(key), now.host.get(key)
        if old is not None and new is not None and old != new:
            found.append(Difference(f"{HARDWARE} ({word})", str(old), str(new), False))
    if bool(then.host.get("root")) != bool(now.host.get("root")) and "root" in then.host and "root" in now.host:
        could = {True: "root: caches dropped", False: "not root: caches not dropped"}
        found.append(Difference(CACHES, could[bool(then.host["root"])], could[bool(now.host["root"])], False))
    for name, word in (("presets", "presets"), ("job_files", "job files")):
        old_set, new_set = getattr(then.config, name), getattr(now.config, name)
        if old_set != new_set:  # what each workload ran is compared workload by workload (above)
            found.append(Difference(word, ", ".join(old_set) or "none", ", ".join(new_set) or "none", False))
    if then.config.drop_caches != now.config.drop_caches:
        found.append(Difference(f"{CACHES} (--drop-caches)", then.config.drop_caches, now.config.drop_caches, False))
    return found


# --- which targets measured the same storage ------------------------------------------------------


@dataclass(frozen=True)
class Storage:
    """What a target measured: its resolved path and the filesystem there (type, mount source)."""

    path: str
    fstype: str
    source: str

    @classmethod
    def of(cls, record: TargetRecord) -> Storage:
        info = record.info
        return cls(record.target.path, info.fstype if info else "", info.mount_source if info else "")

    @classmethod
    def at(cls, path: str, info: TargetInfo) -> Storage:
        return cls(path, info.fstype, info.mount_source)

    @property
    def filesystem(self) -> str:
        """'ext4 on /dev/vda1', 'tmpfs' (a source that only repeats the type is not said twice)."""
        if not self.fstype:
            return "an unknown filesystem"
        return self.fstype if self.source in ("", self.fstype, "none") else f"{self.fstype} on {self.source}"

    @property
    def text(self) -> str:
        return f"{self.path} ({self.filesystem})"


def storage_change(then: Storage, now: Storage) -> str:
    """Why ``now`` is not the storage ``then`` measured ('' when it is): another path, or another
    filesystem under the same path."""
    if then.path != now.path:
        return f"another path: {then.path} → {now.path}"
    if then.fstype and now.fstype and (then.fstype, then.source) != (now.fstype, now.source):
        return f"another filesystem under {now.path}: {then.filesystem} → {now.filesystem}"
    return ""
