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


class _Guard(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[str] = []

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
            c for side in sides for c in ([side] if _names_kind(side) else getattr(side, "elts", ())) if _names_kind(c)
        ]
        if constants and any(_about_kind(side) for side in sides if side not in constants):
            self._offence(node, "decides by a kind's name")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = _text(node.func)
        if func in ("getattr", "hasattr") and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            holder = _text(node.args[0]).lower()
            if any(word in holder for word in HOOK_HOLDERS):
                self._offence(node, "asks a kind or runner for a hook by name")
        picks = func.split(".")[-1] == "kind_of" or (func.endswith(".get") and ("kind" in func or "runners" in func))
        reads_kind = func.endswith(".get") and node.args and _text(node.args[0]) == "'kind'"
        if (picks or reads_kind) and any(_names_kind(arg) for arg in node.args):
            self._offence(node, "picks a kind by its name")
        option = node.args[0] if node.args else None
        if func.endswith(".get") and isinstance(option, ast.Constant) and option.value in OPTIONS and "option" in func:
            self._offence(node, "reads a kind's run option")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if _names_kind(node.slice) and any(word in _text(node.value).lower() for word in ("kind", "runners")):
            self._offence(node, "picks a kind by its name")
        self.generic_visit(node)

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
    guard = _Guard()
    guard.visit(ast.parse(source))
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
    for source in [
        'DEFAULT_PRESET = "quick"',
        'find("fio")',
        "kind_of(workload.kind).takes_runtime",
        "mount.spec.get('x')",
        "from mountbench.kinds import KINDS, FILE_STATES, kind_of",
        "from mountbench.kinds.runner import Runner",
        'getattr(options, "tree", None)',
        "value = options.get(option.name)",
        "facts += [fact for value in config.kind_options if (fact := value.fact())]",
        "if w.kind == other.kind:\n    pass",
    ]:
        assert not offences(source), source
