"""The import rules of src/mountbench, kept: each package imports only the packages RULES
gives it (imports point down the floors, so no two packages import each other), no module
imports a private (underscore) name of another, and no modules import each other in a
circle. Each package's docstring says what it may import; it must say what RULES says.

The import graph is read from the syntax tree of every module: function-local imports count
too (a lazy import is still a dependency), ``if TYPE_CHECKING:`` imports as well."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "mountbench"

# "mountbench": the package root (__version__)
GROUND = frozenset({"model", "labfacts", "errors", "units", "mountbench"})

# What each package may import besides the ground floor (which every package may import).
# The floors: ground <- analysis, fio, host <- probe <- clients <- kinds <- presets, records
# <- store <- engine <- report, labs <- cli.
RULES: dict[str, frozenset[str]] = {
    "analysis": frozenset(),
    "blocks": frozenset(),
    "fio": frozenset({"analysis"}),
    "host": frozenset(),
    "probe": frozenset({"blocks", "host"}),
    "clients": frozenset({"analysis", "host", "fio", "probe"}),
    "kinds": frozenset({"analysis", "fio", "host", "clients"}),
    "presets": frozenset({"fio", "kinds"}),
    "records": frozenset({"host", "kinds"}),
    "store": frozenset({"records"}),
    "engine": frozenset({"analysis", "kinds", "fio", "host", "clients", "presets", "store", "records"}),
    "report": frozenset({"analysis", "blocks", "records", "probe"}),
    "labs": frozenset({"engine", "fio", "host", "kinds", "probe", "store", "records"}),
    "cli": frozenset(
        [
            "analysis",
            "blocks",
            "clients",
            "engine",
            "fio",
            "host",
            "kinds",
            "labs",
            "presets",
            "probe",
            "records",
            "report",
            "store",
        ]
    ),
}
# The ground floor's own rule: units may use errors; labfacts (each lab's facts record) nothing;
# model may use errors, units and labfacts (RunConfig.lab); nothing above.
GROUND_RULES: dict[str, frozenset[str]] = {"errors": frozenset(), "units": frozenset({"errors"}),
                                           "labfacts": frozenset(),
                                           "model": frozenset({"errors", "units", "labfacts"})}  # fmt: skip


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted, e.g. mountbench.report.terminal
    target: str  # the imported module, dotted
    names: tuple[str, ...]  # the names taken from it (from-imports)
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(module: str) -> bool:
    return (SRC.parent / module.replace(".", "/") / "__init__.py").exists()


def imports_of(path: Path) -> Iterator[Import]:
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("mountbench"):
                    yield Import(module, alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if not base.startswith("mountbench"):
                continue
            names = tuple(alias.name for alias in node.names)
            submodules = [n for n in names if is_package(base) and _exists(f"{base}.{n}")]
            yield Import(module, base, tuple(n for n in names if n not in submodules), node.lineno)
            for name in submodules:
                yield Import(module, f"{base}.{name}", (), node.lineno)


def _exists(module: str) -> bool:
    path = SRC.parent / module.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def all_imports() -> list[Import]:
    return [imp for path in sorted(SRC.rglob("*.py")) for imp in imports_of(path)]


def unit(module: str) -> str:
    """The package (or ground-floor module) a module belongs to: mountbench.report.views -> report."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "mountbench"


def may_import(source: str, target: str) -> bool:
    if source == target or source == "__main__":
        return True
    if source in GROUND_RULES:
        return target in GROUND_RULES[source] or target == "mountbench"
    if target in GROUND:
        return True
    return target in RULES.get(source, frozenset())


def test_every_package_has_a_rule() -> None:
    packages = {p.parent.name for p in SRC.glob("*/__init__.py")}
    modules = {p.stem for p in SRC.glob("*.py")} - {"__init__", "__main__"}
    assert packages == set(RULES), (
        f"packages without a rule: {packages - set(RULES)}; rules without a package: {set(RULES) - packages}"
    )
    assert modules == set(GROUND) - {"mountbench"}, (
        f"top-level modules not on the ground floor: {modules - set(GROUND)}"
    )


def test_packages_import_only_what_their_rule_allows() -> None:
    broken = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in all_imports()
        if not may_import(unit(imp.module), unit(imp.target))
    ]
    assert not broken, "\n".join(broken)


def test_no_module_imports_a_private_name_of_another() -> None:
    broken = [
        f"{imp.module}:{imp.line} imports {name} from {imp.target}"
        for imp in all_imports()
        for name in imp.names
        if name.startswith("_") and not name.startswith("__") and imp.target != imp.module
    ]
    assert not broken, "\n".join(broken)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan), each a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_packages_import_each_other() -> None:
    graph: dict[str, set[str]] = {}
    for imp in all_imports():
        source, target = unit(imp.module), unit(imp.target)
        if source != target:
            graph.setdefault(source, set()).add(target)
    assert not _cycles(graph)


def test_no_modules_import_each_other_in_a_circle() -> None:
    """Between modules, imports made when a module loads (a package's __init__ importing its
    own modules is how a package is made, and does not count)."""
    graph: dict[str, set[str]] = {}
    for imp in all_imports():
        if imp.target == imp.module or imp.module.startswith(imp.target + "."):
            continue  # a module importing its own package's __init__ names
        graph.setdefault(imp.module, set()).add(imp.target)
    assert not _cycles(graph)


def test_the_cycle_finder_finds_circles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# --- the docstrings say the same -------------------------------------------------------------

_MAY_IMPORT = re.compile(r"May import:?(.*?)(?:\.\s|\.$|;|$)", re.S)
_EVERYTHING = "everything below it"


def stated_rule(package: str) -> frozenset[str] | None:
    """The packages a package's docstring says it may import (None: it says nothing)."""
    doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text())) or ""
    found = _MAY_IMPORT.search(doc)
    if found is None:
        return None
    text = found.group(1)
    if _EVERYTHING in text:
        return frozenset(RULES) - {package}
    words = set(re.findall(r"[a-z]+", text))
    return frozenset(words & (set(RULES) - {package}))


def test_every_package_docstring_states_its_rule_as_the_table_does() -> None:
    wrong = {}
    for package, allowed in RULES.items():
        stated = stated_rule(package)
        if stated is None:
            wrong[package] = "its __init__ docstring has no 'May import:' sentence"
        elif stated != allowed:
            wrong[package] = f"docstring says {sorted(stated)}, the rule is {sorted(allowed)}"
    assert not wrong, wrong
