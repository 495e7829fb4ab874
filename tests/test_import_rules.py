"""The import rules of src/mountbench, kept: each package imports only the packages RULES
gives it (imports point down the floors, so no two packages import each other), no module
imports a private (underscore) name of another, and no modules import each other in a
circle. Each package's docstring says what it may import; it must say what RULES says.

The import graph is read from the syntax tree of every module: function-local imports count
too (a lazy import is still a dependency), ``if TYPE_CHECKING:`` imports as well."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "mountbench"

# "mountbench": the package root (__version__)
GROUND = frozenset({"model", "labfacts", "probefacts", "plain", "errors", "units", "mountbench"})

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
# The ground floor's own rule: units may use errors; plain (records as JSON) nothing; probefacts (what a
# probe found) plain; labfacts (each lab's facts record) plain and probefacts; model may use errors, units
# and labfacts (RunConfig.lab); nothing above.
GROUND_RULES: dict[str, frozenset[str]] = {"errors": frozenset(), "units": frozenset({"errors"}),
                                           "plain": frozenset(), "probefacts": frozenset({"plain"}),
                                           "labfacts": frozenset({"plain", "probefacts"}),
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


# The one import by a name computed at run time, and what it imports: the commands, each loaded on first use.
DYNAMIC_IMPORTS: dict[str, Callable[[], list[str]]] = {
    "mountbench.cli.main": lambda: sorted({module for module, _ in _cli_commands().values()}),
}
_IMPORT_CALLS = {"import_module", "__import__"}  # importlib.import_module, its bare name, __import__


def _cli_commands() -> dict[str, tuple[str, str]]:
    from mountbench.cli.main import COMMANDS

    return COMMANDS


def dynamic_imports(module: str, node: ast.Call) -> Iterator[str]:
    """What a call of importlib.import_module or __import__ imports: its string, else DYNAMIC_IMPORTS's
    list for the module; an import by a computed name elsewhere is refused (it would be a hole)."""
    arg = node.args[0] if node.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        if arg.value.startswith("mountbench"):
            yield arg.value
        return
    if module not in DYNAMIC_IMPORTS:
        raise AssertionError(f"{module}:{node.lineno} imports a module by a computed name: the rules cannot see it "
                             "(import it by name, or list what it imports in DYNAMIC_IMPORTS)")  # fmt: skip
    yield from DYNAMIC_IMPORTS[module]()


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def imports_of(path: Path, module: str = "") -> Iterator[Import]:
    """The imports of a module; ``module``: its dotted name when the file is not under SRC (a test's)."""
    module = module or module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and _call_name(node) in _IMPORT_CALLS:
            for target in dynamic_imports(module, node):
                yield Import(module, target, (), node.lineno)
        elif isinstance(node, ast.Import):
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


# --- sub-packages --------------------------------------------------------------------------------

# What each sub-package may import of the other sub-packages of its top-level package (its own
# sub-packages, and the modules beside it, it may import always). The labs are three programs on
# one frame: none imports another's code.
SUBPACKAGE_RULES: dict[str, frozenset[str]] = {
    "cli.formats": frozenset(),
    "kinds.engines": frozenset(),
    "labs.cloud": frozenset(),
    "labs.cloud.mounts": frozenset(),
    "labs.containers": frozenset(),
    "labs.containers.mounts": frozenset(),
    "labs.qemu": frozenset(),
    "labs.qemu.mounts": frozenset(),
    "report.picktwo": frozenset(),
    "report.sections": frozenset({"report.picktwo"}),
    "report.sections.clients": frozenset(),
    "report.sections.sweeps": frozenset(),
}


def subpackages() -> set[str]:
    return {
        ".".join(p.parent.relative_to(SRC).parts) for p in SRC.rglob("__init__.py") if len(p.relative_to(SRC).parts) > 2
    }


def subpackage_of(module: str, known: set[str]) -> str | None:
    """The deepest sub-package a module is in (mountbench.labs.qemu.mounts.nine -> labs.qemu.mounts)."""
    parts = module.split(".")[1:]
    for depth in range(len(parts), 1, -1):
        if ".".join(parts[:depth]) in known:
            return ".".join(parts[:depth])
    return None


def within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer + ".")


def may_import_subpackage(source: str, target: str) -> bool:
    """``source`` (a sub-package) may import ``target`` (another, of the same top-level package):
    its own, one it is in or one inside it, or one its rule names (and anything inside that)."""
    if within(target, source) or within(source, target):
        return True
    return any(within(target, allowed) for allowed in SUBPACKAGE_RULES.get(source, frozenset()))


def test_every_subpackage_has_a_rule() -> None:
    found = subpackages()
    assert found == set(SUBPACKAGE_RULES), (
        f"sub-packages without a rule: {found - set(SUBPACKAGE_RULES)}; "
        f"rules without a sub-package: {set(SUBPACKAGE_RULES) - found}"
    )


def subpackage_breaches(imports: list[Import]) -> list[str]:
    known = subpackages()
    broken = []
    for imp in imports:
        source, target = subpackage_of(imp.module, known), subpackage_of(imp.target, known)
        if source is None or target is None or unit(imp.module) != unit(imp.target):
            continue
        if not may_import_subpackage(source, target):
            broken.append(f"{imp.module}:{imp.line} imports {imp.target} ({source}/ may not import {target}/)")
    return broken


def test_subpackages_import_only_what_their_rule_allows() -> None:
    broken = subpackage_breaches(all_imports())
    assert not broken, "\n".join(broken)


def test_the_guard_sees_a_lab_importing_another_labs_module(tmp_path: Path) -> None:
    """labs.containers importing labs.qemu.guest (the issue's example), directly, lazily and through importlib."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from mountbench.labs.qemu import guest\n"
        "def later():\n    from mountbench.labs.qemu.guest import boot\n"
        "def hidden():\n    import importlib\n    return importlib.import_module('mountbench.labs.qemu.guest')\n"
    )
    imports = list(imports_of(source, "mountbench.labs.containers.probe"))
    seen = {line.split(" imports ")[0] for line in subpackage_breaches(imports)}
    assert seen == {f"mountbench.labs.containers.probe:{line}" for line in (1, 3, 6)}


def test_an_import_by_a_computed_name_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "sneaky.py"
    source.write_text("import importlib\nname = 'mountbench.cli'\nimportlib.import_module(name)\n")
    with pytest.raises(AssertionError, match="computed name"):
        list(imports_of(source, "mountbench.report.sneaky"))
    source.write_text("from importlib import import_module as load\nload('mountbench.' + 'cli')\n")
    # an alias of import_module is a name the guard does not know: refused outright
    assert "import_module" in source.read_text() and not _imports_importlib_by_alias_ok(source)


def _imports_importlib_by_alias_ok(path: Path) -> bool:
    """No module takes import_module or __import__ under another name (the guard looks for those names)."""
    tree = ast.parse(path.read_text())
    return not any(
        isinstance(node, ast.ImportFrom)
        and node.module == "importlib"
        and any(alias.name == "import_module" and alias.asname not in (None, "import_module") for alias in node.names)
        for node in ast.walk(tree)
    )


def test_no_module_renames_import_module() -> None:
    renamed = [
        str(path.relative_to(SRC)) for path in sorted(SRC.rglob("*.py")) if not _imports_importlib_by_alias_ok(path)
    ]
    assert not renamed, renamed


# --- the docstrings say the same, in one form the test reads ----------------------------------------

_MAY_IMPORT = re.compile(r"May import: (.*?)\.(?:\s|$)", re.S)
_SUB_MAY_IMPORT = re.compile(r"Of ([a-z]+)/'s sub-packages it may import: (.*?)\.(?:\s|$)", re.S)
_REMARK = re.compile(r"\s*\([^()]*\)")
GROUND_FLOOR = "the ground floor"


def rule_sentence(package: str) -> str:
    """The sentence a package's docstring states its rule in (paste it, remarks in parentheses allowed)."""
    return "May import: " + ", ".join([GROUND_FLOOR, *(f"{p}/" for p in sorted(RULES[package]))]) + "."


def subpackage_sentence(subpackage: str) -> str:
    top = subpackage.split(".")[0]
    allowed = sorted(s.partition(".")[2] + "/" for s in SUBPACKAGE_RULES[subpackage])
    return f"Of {top}/'s sub-packages it may import: {', '.join(allowed) or 'none'}."


def read_list(text: str) -> list[str]:
    """A stated list's items: remarks in parentheses dropped, split at commas and 'and'."""
    plain = " ".join(_REMARK.sub("", text).split())
    return [item.strip() for part in plain.split(",") for item in part.split(" and ") if item.strip()]


def stated_rule(package: str) -> frozenset[str] | str:
    """The packages a package's docstring says it may import, or what is wrong with how it says it."""
    doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text())) or ""
    found = _MAY_IMPORT.search(doc)
    if found is None:
        return f"no 'May import: ...' sentence; write {rule_sentence(package)!r}"
    stated = set()
    for item in read_list(found.group(1)):
        if item == GROUND_FLOOR or item in GROUND:  # the ground floor, or a module of it
            continue
        if not item.endswith("/") or item[:-1] not in RULES:
            return f"{item!r} is not a package (name each as 'name/'); write {rule_sentence(package)!r}"
        stated.add(item[:-1])
    return frozenset(stated)


def stated_subpackage_rule(subpackage: str) -> frozenset[str] | str:
    path = SRC / subpackage.replace(".", "/") / "__init__.py"
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    found = _SUB_MAY_IMPORT.search(doc)
    top = subpackage.split(".")[0]
    if found is None or found.group(1) != top:
        return f"no such sentence; write {subpackage_sentence(subpackage)!r}"
    items = read_list(found.group(2))
    if items == ["none"]:
        return frozenset()
    if not all(item.endswith("/") for item in items):
        return f"name each as 'name/'; write {subpackage_sentence(subpackage)!r}"
    return frozenset(f"{top}.{item[:-1].replace('/', '.')}" for item in items)


def test_every_package_docstring_states_its_rule_as_the_table_does() -> None:
    wrong = {}
    for package, allowed in RULES.items():
        stated = stated_rule(package)
        if isinstance(stated, str):
            wrong[package] = stated
        elif stated != allowed:
            wrong[package] = (
                f"docstring says {sorted(stated)}, the rule is {sorted(allowed)}: {rule_sentence(package)!r}"
            )
    assert not wrong, wrong


# The labs' sub-packages state their rule in their own words until the labs' work (issue 52's first
# half) writes the sentence; the imports themselves are checked above all the same.
SUBPACKAGE_DOCSTRINGS_PENDING = frozenset(s for s in SUBPACKAGE_RULES if s.startswith("labs."))


def test_every_subpackage_docstring_states_its_rule_as_the_table_does() -> None:
    wrong = {}
    for subpackage, allowed in SUBPACKAGE_RULES.items():
        stated = stated_subpackage_rule(subpackage)
        if subpackage in SUBPACKAGE_DOCSTRINGS_PENDING:
            continue
        if isinstance(stated, str):
            wrong[subpackage] = stated
        elif stated != allowed:
            wrong[subpackage] = f"docstring says {sorted(stated)}: {subpackage_sentence(subpackage)!r}"
    assert not wrong, wrong


def test_the_docstring_reader_is_no_bag_of_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A docstring that merely mentions packages, or names one the rule lacks, is refused."""
    root = tmp_path / "mountbench"
    (root / "report").mkdir(parents=True)
    monkeypatch.setattr(sys.modules[__name__], "SRC", root)
    init = root / "report" / "__init__.py"
    for doc, expected in [
        (rule_sentence("report"), RULES["report"]),
        ("May import: the ground floor (and __version__), analysis/ (pure), blocks/, records/ and probe/.",
         RULES["report"]),
        ("May import everything below it: engine, analysis.", "no 'May import: ...' sentence"),
        ("May import: the ground floor, analysis/, blocks/, records/, probe/ but never cli/.", "is not a package"),
        ("May import: the ground floor, analysis/, blocks/, records/, probe/, cli/.",
         frozenset({*RULES["report"], "cli"})),
    ]:  # fmt: skip
        init.write_text(f'"""Reports.\n\n{doc}\n"""\n')
        stated = stated_rule("report")
        assert stated == expected if not isinstance(expected, str) else expected in stated, (doc, stated)
