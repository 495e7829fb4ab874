"""Check a run of an export document field by field, with types, before anything is stored.

records/codec.py reads forgivingly (``bool("false")`` is True, ``int(-3.7)`` is -3); a file
from elsewhere is checked here first, so nothing damaged is stored as good: booleans are
booleans, metrics are finite and non-negative numbers, rounds are measured rounds (>= 0) or
warm-ups (model.WARMUP_BASE and up), samples name the run's own targets and workloads, ids
come from the id alphabet. :func:`run_problem` names the first problem found, '' when none.
"""

from __future__ import annotations

import math
import re
from dataclasses import fields
from typing import Any, get_type_hints

from mountbench.host.targets import LABEL_MAX, label_problem
from mountbench.model import WARMUP_BASE, RunConfig, Span, stored_name

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
STATUSES = ("running", "complete", "interrupted", "failed")
MAX_WARMUPS = 100  # --warmup's range
MAX_ROUND = 100_000
# bounds of every number a run holds, so that listing, showing and reporting it never overflows
TIME_LIMIT = 253_402_300_799.0  # 9999-12-31: a later time is no time a run was made
DURATION_LIMIT = 1e7  # seconds (115 days): longer than any sample or run
METRIC_LIMIT = 1e15  # no figure mountbench measures comes near (bytes, IOPS, ns, %)
COUNT_LIMIT = 2**63 - 1  # what SQLite and fio hold
_LONGEST_LABEL = LABEL_MAX + 4096  # a default label holds its path (fstype:/path), a merged one @host


class Damage(ValueError):
    """One field of a run is not what mountbench writes."""


def run_problem(run: Any, where: str) -> str:
    """The first problem in the run dict ``run`` (``where`` names it, e.g. 'runs[0]'), or ''."""
    try:
        _check_run(run, where)
    except Damage as exc:
        return str(exc)
    return ""


def _check_run(run: Any, where: str) -> None:
    _object(run, where)
    run_id = _string(run, "id", where)
    if not ID_PATTERN.fullmatch(run_id):
        raise Damage(f"{where}.id {run_id[:80]!r} is not a run id (letters, digits, '.', '_', '-'; at most 64)")
    where = f"run {run_id}"
    _number(run, "created_at", where, TIME_LIMIT)
    if run.get("finished_at") is not None:
        _number(run, "finished_at", where, TIME_LIMIT)
    status = _string(run, "status", where)
    if status not in STATUSES:
        raise Damage(f"{where}: status {status[:40]!r} is none of {', '.join(STATUSES)}")
    if "command" in run:
        _string(run, "command", where)
    if "origin" in run:
        _string(run, "origin", where)
    if "host" in run:
        _object(run["host"], f"{where}: host")
    labels = _targets(_list(run, "targets", where), where)
    names = _workloads(_list(run, "workloads", where), where)
    if "config" in run:
        _config(run["config"], f"{where}: config")
    for index, sample in enumerate(_list(run, "samples", where)):
        _sample(sample, f"{where}, samples[{index}]", labels, names)


def _targets(targets: list[Any], where: str) -> set[str]:
    labels: set[str] = set()
    for index, target in enumerate(targets):
        here = f"{where}, targets[{index}]"
        _object(target, here)
        label = _string(target, "label", here)
        problem = label_problem(label, longest=_LONGEST_LABEL, slash=True)
        if problem:
            raise Damage(f"{here}: {problem}")
        if label in labels:
            raise Damage(f"{here}: target {label!r} appears twice")
        labels.add(label)
        _string(target, "path", here)
        info = target.get("info")
        if info is not None:
            _object(info, f"{here}.info")
            for key in ("free_bytes", "total_bytes"):
                if key in info:
                    _count(info, key, f"{here}.info")
            if "odirect" in info:
                _bool(info, "odirect", f"{here}.info")
    return labels


def _config(config: Any, where: str) -> None:
    """The run's options, each field by its type (what an older version left out is fine)."""
    _object(config, where)
    types = get_type_hints(RunConfig)
    for option in fields(RunConfig):
        key = stored_name(option)
        _within(config, key, option.metadata.get("span"), where)
        if config.get(key) is None or key == "warmup":  # warm-up rounds: read leniently (records/codec.py)
            continue
        kind = types[option.name]
        if kind is int:
            _count(config, key, where)
        elif kind is bool:
            _bool(config, key, where)
        elif kind is str:
            _string(config, key, where)
        elif kind == float | None:
            _number(config, key, where)
        elif kind == int | None:
            _count(config, key, where)
        elif kind in (tuple[str, ...], tuple[int, ...]):
            items = _list(config, key, where)
            wanted = str if kind == tuple[str, ...] else int
            if not all(isinstance(item, wanted) and not isinstance(item, bool) for item in items):
                raise Damage(f"{where}: {key} is not a list of {'strings' if wanted is str else 'whole numbers'}")


def _within(config: dict[str, Any], key: str, span: Span | None, where: str) -> None:
    """A number the command line takes only in a range gets the same range from a file (a repeat
    of 10^9 would have the planner spin)."""
    value = config.get(key)
    if span is None or not _finite(value):
        return
    problem = span.problem(value)
    if problem:
        raise Damage(f"{where}: {key} {value} {problem} (the range 'mountbench run' takes)")


def _workloads(workloads: list[Any], where: str) -> set[str]:
    names: set[str] = set()
    for index, workload in enumerate(workloads):
        here = f"{where}, workloads[{index}]"
        _object(workload, here)
        name = _string(workload, "name", here)
        if name in names:
            raise Damage(f"{here}: workload {name!r} appears twice")
        names.add(name)
        _string(workload, "kind", here)
    return names


def _sample(sample: Any, where: str, labels: set[str], names: set[str]) -> None:
    _object(sample, where)
    target = _string(sample, "target", where)
    if target not in labels:
        raise Damage(f"{where}: target {target[:80]!r} is not one of the run's targets")
    workload = _string(sample, "workload", where)
    if workload not in names:
        raise Damage(f"{where}: workload {workload[:80]!r} is not one of the run's workloads")
    round_ = _integer(sample, "round", where)
    if not (0 <= round_ < MAX_ROUND or WARMUP_BASE <= round_ < WARMUP_BASE + MAX_WARMUPS):
        raise Damage(f"{where}: round {round_} is neither a measured round (0 and up) nor a warm-up")
    where = f"{where} ({target} · {workload} round {round_ + 1})"
    ok = _bool(sample, "ok", where)
    _metrics(sample.get("metrics"), f"{where}: metrics")
    error = _string(sample, "error", where) if "error" in sample else ""
    if ok and error:
        raise Damage(f"{where}: ok is true but it carries an error ({error[:60]!r})")
    for key, limit in (("started_at", TIME_LIMIT), ("wall_s", DURATION_LIMIT)):
        if key in sample:
            _number(sample, key, where, limit)
    for key in ("cache_action", "raw"):
        if key in sample:
            _string(sample, key, where)
    caveats = sample.get("caveats", [])
    if not isinstance(caveats, list):
        raise Damage(f"{where}: caveats is {_kind(caveats)}, not a list")
    for caveat in caveats:
        _object(caveat, f"{where}: a caveat")
        _string(caveat, "code", f"{where}: a caveat")
        _string(caveat, "text", f"{where}: a caveat")
    series = sample.get("series") or {}
    _object(series, f"{where}: series")
    for name, values in series.items():
        if not isinstance(values, list) or not all(_finite(v) for v in values):
            raise Damage(f"{where}: series {name!r} is not a list of finite numbers")
    clients = sample.get("clients") or []
    if not isinstance(clients, list):
        raise Damage(f"{where}: clients is {_kind(clients)}, not a list")
    for client in clients:
        _object(client, f"{where}: a client")
        _string(client, "client", f"{where}: a client")
        _metrics(client.get("metrics") or {}, f"{where}: a client's metrics")


def _metrics(metrics: Any, where: str) -> None:
    _object(metrics, where)
    for name, value in metrics.items():
        if not _finite(value):
            raise Damage(f"{where}: {name} is {_shown(value)}, not a finite number")
        if value < 0:
            raise Damage(f"{where}: {name} is {value}, below zero (no metric mountbench measures is)")
        if value > METRIC_LIMIT:
            raise Damage(f"{where}: {name} is {_shown(value)}, above {METRIC_LIMIT:g} (no metric mountbench measures "
                         "is)")  # fmt: skip


# --- one field, with its type -----------------------------------------------------------------


def _finite(value: Any) -> bool:
    """A number (no boolean) that is finite; an integer too large for a float (10**400) is not."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, int):
        return abs(value) <= COUNT_LIMIT
    return math.isfinite(value)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Damage(f"{where} is {_kind(value)}, not an object")
    return value


def _list(data: dict[str, Any], key: str, where: str) -> list[Any]:
    value = _field(data, key, where)
    if not isinstance(value, list):
        raise Damage(f"{where}: {key} is {_kind(value)}, not a list")
    return value


def _string(data: dict[str, Any], key: str, where: str) -> str:
    value = _field(data, key, where)
    if not isinstance(value, str):
        raise Damage(f"{where}: {key} is {_kind(value)}, not a string")
    return value


def _bool(data: dict[str, Any], key: str, where: str) -> bool:
    value = _field(data, key, where)
    if not isinstance(value, bool):
        raise Damage(f"{where}: {key} is {_kind(value)} {_shown(value)}, not true or false")
    return value


def _integer(data: dict[str, Any], key: str, where: str) -> int:
    value = _field(data, key, where)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Damage(f"{where}: {key} is {_kind(value)} {_shown(value)}, not a whole number")
    return value


def _count(data: dict[str, Any], key: str, where: str) -> int:
    value = _integer(data, key, where)
    if value < 0:
        raise Damage(f"{where}: {key} is {value}, below zero")
    if value > COUNT_LIMIT:
        raise Damage(f"{where}: {key} is {_shown(value)}, above 2^63")
    return value


def _number(data: dict[str, Any], key: str, where: str, limit: float = METRIC_LIMIT) -> float:
    value = _field(data, key, where)
    if not _finite(value) or value < 0:
        raise Damage(f"{where}: {key} is {_shown(value)}, not a finite number of zero or more")
    if value > limit:
        raise Damage(f"{where}: {key} is {_shown(value)}, above {limit:g}, which no run of mountbench holds")
    return float(value)


def _field(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise Damage(f"{where}: {key} is missing")
    return data[key]


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
