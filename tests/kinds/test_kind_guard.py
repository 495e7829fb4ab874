"""Adding a workload kind is one module and one registry line (kinds/__init__.py): no code
outside kinds/ decides by a kind's name, imports a kind's module or reads a workload's spec
(what a kind alone understands). What the rest of the program needs, a kind says through
WorkloadKind, its runner, or the description it gives every workload it makes."""

from __future__ import annotations

import re
from pathlib import Path

from mountbench.kinds import KINDS

SRC = Path(__file__).resolve().parents[2] / "src" / "mountbench"

# Files that still break the rule, each with its offence. Shrink this list; never grow it.
ALLOWED: dict[str, str] = {}

_NAMES = "|".join(re.escape(name) for name in KINDS)
_NAME = rf"""["']({_NAMES})["']"""
_DECIDES = re.compile(
    "|".join(
        [
            rf"kind\w*\s*(==|!=)\s*{_NAME}",  # w.kind == "fio"
            rf"kind\w*\s+(not\s+)?in\s*[(\[{{][^)\]}}]*{_NAME}",  # w.kind in ("fio", ...)
            rf"\bKIND\w*\s*(:[^=]*)?=\s*{_NAME}",  # KIND = "fioclients"
            rf"(runners|KINDS|kind_of)\s*[\[(]\s*{_NAME}",  # runners["fio"], kind_of("tree")
            rf"""["']kind["']\s*(,|:)\s*{_NAME}""",  # .get("kind", "fio"), {"kind": "tree"}
            rf"\bkinds(\.|\s+import\s+([\w\s,]*,\s*)?)({_NAMES})\b",  # from mountbench.kinds import fio
        ]
    )
)
_READS_SPEC = re.compile(r"\b(w|workload|variants?(\[[^\]]*\])?|\w+_workload)\.spec\b")


def offences(text: str) -> list[str]:
    return [
        f"{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if _DECIDES.search(line) or _READS_SPEC.search(line)
    ]


def test_only_workload_kinds_name_a_kind() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        if where.startswith("kinds/") or where in ALLOWED:
            continue
        lines = offences(path.read_text())
        if lines:
            found[where] = lines
    assert not found, found


def test_the_allowed_files_still_offend() -> None:
    """A file that no longer offends leaves ALLOWED, so the rule only tightens."""
    clean = [where for where in ALLOWED if not (SRC / where).exists() or not offences((SRC / where).read_text())]
    assert not clean, f"remove from ALLOWED: {clean}"


def test_the_guard_sees_the_usual_ways_of_naming_a_kind() -> None:
    for line in [
        'if w.kind == "fio":',
        'others = [w for w in workloads if w.kind not in ("tree", "http")]',
        'KIND = "fioclients"',
        'clock = request.runners["fio"].clocksource',
        'kind_of(job.get("kind", "fio"))',
        "from mountbench.kinds.fioclients import client_host_facts",
        "from mountbench.kinds import RunnerSetup, fioclients, kind_of",
        'title = variants[0].spec.get("job", {})',
        "specs.add(repr(workload.spec))",
    ]:
        assert offences(line), line
    for line in ['TREE_PRESET = "tree"', 'find("fio")', "kind_of(workload.kind).takes_runtime", "mount.spec.get('x')"]:
        assert not offences(line), line
