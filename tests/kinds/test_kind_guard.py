"""Adding a workload kind is one module and one registry line (kinds/__init__.py): no code
outside kinds/ decides by a kind's name, imports a kind's own modules, reads a workload's
spec (what a kind alone understands), reads a kind's run option (--file-state, --tree: only its
kind reads it) or asks a kind or runner for a hook by name (``getattr``/``hasattr``: the hooks
are in the WorkloadKind and Runner protocols). What the
rest of the program needs, a kind says through WorkloadKind, its runner, or the description
it gives every workload it makes.

The check reads the syntax tree of every module, so a name split over lines, an alias or a
``from ... import`` list cannot hide an offence as a line pattern could."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mountbench.kinds import KINDS, declared_options

SRC = Path(__file__).resolve().parents[2] / "src" / "mountbench"

# What the rest of the program may import from kinds/: the package (its registry and public
# functions) and the two interfaces every kind implements. Everything else in kinds/ is a
# kind's own: its module, and the modules that serve it (fiofiles, trees, engines/...).
PUBLIC = {"mountbench.kinds", "mountbench.kinds.base", "mountbench.kinds.runner"}
# Names a workload is held by, whose ``.spec`` only its kind may read.
WORKLOAD_NAMES = {"w", "workload", "workloads", "variant", "variants", "job"}
# The run options the kinds declare (kinds.base.KindOption), by the name their values are kept under
OPTIONS = {option.name for option in declared_options()}
# Objects whose attributes are the kinds' protocols: asked by name, a hook escapes them.
HOOK_HOLDERS = ("kind", "runner")

# Files that still break the rule, each with its offence. Shrink this list; never grow it.
ALLOWED: dict[str, str] = {}


def _private_module(module: str) -> bool:
    """A module of kinds/ other than its public ones (a name imported from kinds/ is a module
    when kinds/ has a file or folder of that name)."""
    if not module.startswith("mountbench.kinds.") or module in PUBLIC:
        return False
    path = SRC.parent / module.replace(".", "/")
    return path.with_suffix(".py").exists() or path.is_dir()


def _text(node: ast.AST) -> str:
    return ast.unparse(node)


def _holds_workload(node: ast.expr) -> bool:
    """w.spec, workload.spec, variants[0].spec, self.workload.spec, run.workload(name).spec, x_workload.spec."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call):
        node = node.func
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in WORKLOAD_NAMES or name.endswith("_workload")


def _names_kind(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in KINDS


def _about_kind(node: ast.expr) -> bool:
    return "kind" in _text(node).lower()


# Calls of a string's own methods: on a kind's name, each decides by part of it (.startswith("fio"))
STRING_METHODS = {"startswith", "endswith", "removeprefix", "removesuffix", "partition", "rpartition", "split",
                  "find", "index", "count", "casefold", "lower", "upper", "strip", "__contains__"}  # fmt: skip
IMPORT_CALLS = {"import_module", "__import__"}


def _bound_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for elt in target.elts for name in _bound_names(elt)]
    return []


def _aliases(tree: ast.AST) -> tuple[set[str], set[str], set[str]]:
    """Names bound in the module to a kind's name (``FIO = "fio"``), to what is said about a kind
    (``k = w.kind``, repeated until nothing more is bound: ``name = k``), and to a dispatch table keyed by
    kinds' names (``RUN = {"fio": ...}``)."""
    constants: set[str] = set()
    about: set[str] = set()
    tables: set[str] = set()
    pairs: list[tuple[list[str], ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs += [(_bound_names(t), node.value) for t in node.targets]
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            pairs.append((_bound_names(node.target), node.value))
        elif isinstance(node, ast.For | ast.comprehension):
            pairs.append((_bound_names(node.target), node.iter))
        elif isinstance(node, ast.match_case):
            pass
    for names, value in pairs:
        if _names_kind(value):
            constants.update(names)
        if isinstance(value, ast.Dict) and any(_names_kind(k) for k in value.keys if k is not None):
            tables.update(names)
    grown = True
    while grown:
        before = len(about)
        for names, value in pairs:
            if _reads_kind(value) or (isinstance(value, ast.Name) and value.id in about):
                about.update(n for n in names if n not in constants)
        grown = len(about) > before
    return constants, about, tables


def _reads_kind(node: ast.expr) -> bool:
    """A kind's name read as it is: ``w.kind``, ``kind``, ``job["kind"]``, ``job.get("kind")``."""
    if isinstance(node, ast.Attribute | ast.Name):
        return (node.attr if isinstance(node, ast.Attribute) else node.id) == "kind"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        return isinstance(node.args[0], ast.Constant) and node.args[0].value == "kind"
    return False


class _Guard(ast.NodeVisitor):
    def __init__(self, tree: ast.AST) -> None:
        self.found: list[str] = []
        self.constants, self.about, self.tables = _aliases(tree)

    def _kind_name(self, node: ast.expr) -> bool:
        """A kind's name: the string itself or a name bound to it."""
        return _names_kind(node) or (isinstance(node, ast.Name) and node.id in self.constants)

    def _about(self, node: ast.expr) -> bool:
        """Something said about a kind: its text names a kind, or it uses a name bound to one."""
        return _about_kind(node) or any(isinstance(n, ast.Name) and n.id in self.about for n in ast.walk(node))

    def _offence(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{getattr(node, 'lineno', '?')}: {what}: {_text(node)[:100]}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _private_module(alias.name):
                self._offence(node, "imports a kind's own module")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if _private_module(module):
            self._offence(node, "imports a kind's own module")
        elif module == "mountbench.kinds":
            own = [
                alias.name for alias in node.names if alias.name in KINDS or _private_module(f"{module}.{alias.name}")
            ]
            if own:
                self._offence(node, f"imports a kind's own module ({', '.join(own)})")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "spec" and _holds_workload(node.value):
            self._offence(node, "reads a workload's spec")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        constants = [
            c
            for side in sides
            for c in ([side] if self._kind_name(side) else getattr(side, "elts", ()))
            if self._kind_name(c)
        ]
        if constants and any(self._about(side) for side in sides if side not in constants):
            self._offence(node, "decides by a kind's name")
        self.generic_visit(node)

    def visit_Match(self, node: ast.Match) -> None:
        if self._about(node.subject):
            for case in node.cases:
                if any(isinstance(p, ast.MatchValue) and self._kind_name(p.value) for p in ast.walk(case.pattern)):
                    self._offence(node, "decides by a kind's name (match)")
                    break
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = _text(node.func)
        if func in ("getattr", "hasattr") and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            holder = _text(node.args[0]).lower()
            if any(word in holder for word in HOOK_HOLDERS):
                self._offence(node, "asks a kind or runner for a hook by name")
            if node.args[1].value == "spec" and _holds_workload(node.args[0]):
                self._offence(node, "reads a workload's spec")
            if node.args[1].value in OPTIONS and "option" in holder:
                self._offence(node, "reads a kind's run option")
        name = func.split(".")[-1]
        if name in IMPORT_CALLS and node.args:
            target = node.args[0]
            if not (isinstance(target, ast.Constant) and isinstance(target.value, str)):
                parts = [n.value for n in ast.walk(target) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                if self._about(target) or any(part.startswith("mountbench.kinds") for part in parts):
                    self._offence(node, "imports a kind's module by a computed name")
            elif _private_module(target.value) or (
                target.value.startswith("mountbench.kinds.") and target.value.rpartition(".")[2] in KINDS
            ):
                self._offence(node, "imports a kind's own module")
        if (
            isinstance(node.func, ast.Attribute)
            and name in STRING_METHODS
            and self._about(node.func.value)
            and any(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
        ):
            self._offence(node, "decides by part of a kind's name")
        if name == "get" and isinstance(node.func, ast.Attribute) and self._dispatches(node.func.value, node.args):
            self._offence(node, "picks by a kind's name from a table")
        picks = func.split(".")[-1] == "kind_of" or (func.endswith(".get") and ("kind" in func or "runners" in func))
        reads_kind = func.endswith(".get") and node.args and _text(node.args[0]) == "'kind'"
        if (picks or reads_kind) and any(_names_kind(arg) for arg in node.args):
            self._offence(node, "picks a kind by its name")
        option = node.args[0] if node.args else None
        if func.endswith(".get") and isinstance(option, ast.Constant) and option.value in OPTIONS and "option" in func:
            self._offence(node, "reads a kind's run option")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self._kind_name(node.slice) and any(word in _text(node.value).lower() for word in ("kind", "runners")):
            self._offence(node, "picks a kind by its name")
        if self._dispatches(node.value, [node.slice]):
            self._offence(node, "picks by a kind's name from a table")
        self.generic_visit(node)

    def _dispatches(self, table: ast.expr, keys: list[ast.expr]) -> bool:
        """``{"fio": a, "tree": b}[w.kind]``, or the same through a name bound to such a table."""
        keyed = (isinstance(table, ast.Dict) and any(k is not None and self._kind_name(k) for k in table.keys)) or (
            isinstance(table, ast.Name) and table.id in self.tables
        )
        return keyed and bool(keys) and self._about(keys[0])

    def visit_Assign(self, node: ast.Assign) -> None:
        if _names_kind(node.value) and any(_text(t).split(".")[-1].upper().startswith("KIND") for t in node.targets):
            self._offence(node, "names a kind")
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "kind" and _names_kind(value):
                self._offence(node, "names a kind")
        self.generic_visit(node)


def offences(source: str) -> list[str]:
    tree = ast.parse(source)
    guard = _Guard(tree)
    guard.visit(tree)
    return guard.found


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
    for source in [
        'if w.kind == "fio":\n    pass',
        'others = [w for w in workloads if w.kind not in ("tree", "http")]',
        'KIND = "fioclients"',
        'clock = request.runners["fio"].clocksource',
        'kind_of(job.get("kind", "fio"))',
        "from mountbench.kinds.fioclients import client_host_facts",
        "from mountbench.kinds import RunnerSetup, fioclients, kind_of",
        "from mountbench.kinds import trees",
        "from mountbench.kinds.fiofiles import FILE_STATES",
        "import mountbench.kinds.engines.nginx",
        "from mountbench.kinds.trees import (\n    PROFILES,\n)",
        'title = variants[0].spec.get("job", {})',
        "specs.add(repr(workload.spec))",
        "x = run.workload(name).spec",
        'variant = getattr(kind_of(w.kind), "fsync_variant", None)',
        'if hasattr(runner, "close"):\n    pass',
        'meta = {"kind": "tree"}',
        'state = config.kind_options.get("file_state")',
        'tree = options.get("tree")',
    ]:
        assert offences(source), source


# The 13 ways past the guard (issue 52), one test each: the five it caught, and the eight
# it missed.
EVASIONS = {
    "compare": 'if w.kind == "fio":\n    pass',
    "membership": 'others = [w for w in workloads if w.kind not in ("tree", "http")]',
    "registry_pick": 'clock = request.runners["fio"].clocksource',
    "private_import": "from mountbench.kinds.fioclients import client_host_facts",
    "spec": 'title = variants[0].spec.get("job", {})',
    "match": 'match w.kind:\n    case "fio":\n        pass',
    "alias": 'k = w.kind\nif k == "tree":\n    pass',
    "alias_of_alias": 'k = w.kind\nname = k\nif name in ("http",):\n    pass',
    "constant": 'FIO = "fio"\nif w.kind == FIO:\n    pass',
    "startswith": 'if w.kind.startswith("fio"):\n    pass',
    "getattr_spec": 'job = getattr(w, "spec")["job"]',
    "dict_dispatch": 'RUN = {"fio": run_fio, "tree": run_tree}\nRUN[w.kind](w)',
    "dict_dispatch_get": '{"fio": run_fio}.get(workload.kind, run_other)(workload)',
    "importlib": 'import importlib\nimportlib.import_module("mountbench.kinds.fio")',
    "importlib_computed": 'import importlib\nimportlib.import_module("mountbench.kinds." + w.kind)',
    "getattr_option": 'tree = getattr(options, "tree", None)',
}


@pytest.mark.parametrize("evasion", sorted(EVASIONS))
def test_the_guard_catches_each_evasion(evasion: str) -> None:
    assert offences(EVASIONS[evasion]), EVASIONS[evasion]
    for source in [
        'DEFAULT_PRESET = "quick"',
        'find("fio")',
        "kind_of(workload.kind).takes_runtime",
        "mount.spec.get('x')",
        "from mountbench.kinds import KINDS, FILE_STATES, kind_of",
        "from mountbench.kinds.runner import Runner",
        "value = options.get(option.name)",
        "facts += [fact for value in config.kind_options if (fact := value.fact())]",
        "if w.kind == other.kind:\n    pass",
    ]:
        assert not offences(source), source
