"""The `timing` and `alone` lists (support/timing.py) name tests that exist: a renamed or moved test
would otherwise fall out of the last part silently and run, with its speed assertion or its need of an
undisturbed page cache, among the rest."""

from __future__ import annotations

import ast
from pathlib import Path

from support.timing import ALONE, TIMING

HERE = Path(__file__).parent


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_timing_entry_names_an_existing_test() -> None:
    missing = []
    for entry in (*TIMING, *ALONE):
        where, _, name = entry.partition("::")
        path = HERE / where
        if not path.is_file() or (name and name not in _test_functions(path)):
            missing.append(entry)
    assert not missing, f"tests/support/timing.py names tests that do not exist: {missing}"
