"""Processes in one place: no module outside host/process.py starts a child with Popen, signals or
kills a process, or checks a TCP port by itself (host/contain.py's spawner aside, through which a
fenced child is born). The syntax tree of every module is read; what a module does that it should
not is named with its line. ALLOWED holds what is left to move, each with why, and can only
shrink: an entry that no longer matches anything fails too (remove it), and MOST bounds its size."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "mountbench"

HOME = {"host/process.py"}  # where all of it belongs
SPAWNER = {"host/contain.py": {"popen", "kill"}}  # a fenced child is born in its spawner thread

# (module, what): why it is still there. Only ever remove entries (and lower MOST with them).
ALLOWED: dict[tuple[str, str], str] = {
    ("kinds/fio.py", "kill"): "a `fio --parse-only` past its time: kinds/fio* was another helper's area when "
    "the rest moved (issue 52); it becomes host.process.kill",
    ("clients/agent.py", "port"): "the agent's own connection, which carries its requests: used, not a check",
    ("clients/fioprobe.py", "port"): "the connection fio's protocol speaks over (its identity handshake)",
}
MOST = 3

KILLING = {"kill", "killpg", "pthread_kill"}  # os's
METHODS = {"kill", "terminate", "send_signal"}  # a Popen's or a psutil.Process's


def findings(tree: ast.AST) -> Iterator[tuple[str, int, str]]:
    """(what, line, code) of each start, signal and port check in a module: 'popen', 'kill', 'port'."""
    ours = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == "mountbench.host" for alias in node.names if alias.name == "process"}  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "os"):
            for alias in node.names:
                if alias.name == "Popen" or (node.module == "os" and alias.name in KILLING):
                    what = "popen" if alias.name == "Popen" else "kill"
                    yield what, node.lineno, f"from {node.module} import {alias.name}"
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
        text = ast.unparse(func)
        if name == "Popen":
            yield "popen", node.lineno, text
        if any(isinstance(arg, ast.Attribute) and arg.attr == "Popen" for arg in node.args):
            yield "popen", node.lineno, f"{text}(…Popen…)"  # functools.partial(subprocess.Popen, ...)
        if name == "getattr" and any(isinstance(a, ast.Constant) and a.value in {"Popen", *KILLING, *METHODS}
                                     for a in node.args[1:2]):  # fmt: skip
            yield "popen" if node.args[1].value == "Popen" else "kill", node.lineno, ast.unparse(node)  # type: ignore[attr-defined]
        signals = owner == "os" and name in KILLING
        if signals or (isinstance(func, ast.Attribute) and name in METHODS and owner not in {"os", "signal", *ours}):
            yield "kill", node.lineno, text
        if owner == "socket" and name == "create_connection":
            yield "port", node.lineno, text
        if name in {"bind", "connect", "connect_ex"} and node.args and isinstance(node.args[0], ast.Tuple):
            yield "port", node.lineno, f"{text}((host, port))"


def modules() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path.relative_to(SRC).as_posix(), ast.parse(path.read_text(), str(path))


def test_no_module_starts_signals_or_port_checks_a_process_by_itself() -> None:
    wrong, used = [], set()
    for module, tree in modules():
        if module in HOME:
            continue
        for what, line, code in findings(tree):
            if what in SPAWNER.get(module, set()):
                continue
            if (module, what) in ALLOWED:
                used.add((module, what))
                continue
            wrong.append(f"{module}:{line}: {code} ({what}: use host/process.py's spawn, stream, stop_tree, "
                         "send_signal, kill or bind_error)")  # fmt: skip
    assert wrong == []
    assert set(ALLOWED) - used == set(), "these no longer need to be allowed: remove them from ALLOWED"
    assert len(ALLOWED) <= MOST, "ALLOWED only shrinks"


def test_the_guard_sees_each_way_of_doing_it() -> None:
    """Each way a module could start, signal or port-check a process is a finding."""
    code = {
        "popen": ["subprocess.Popen(['x'])", "from subprocess import Popen", "functools.partial(subprocess.Popen, 1)",
                  "getattr(subprocess, 'Popen')(['x'])", "sp.Popen(['x'])"],
        "kill": ["os.kill(1, 9)", "os.killpg(1, 9)", "proc.kill()", "proc.terminate()", "p.send_signal(15)",
                 "from os import killpg", "getattr(proc, 'kill')()"],
        "port": ["socket.create_connection(('h', 1))", "s.bind(('127.0.0.1', 0))", "s.connect(('h', 80))",
                 "s.connect_ex(('h', 80))"],
    }  # fmt: skip
    for what, lines in code.items():
        for line in lines:
            found = {kind for kind, _, _ in findings(ast.parse(line))}
            assert what in found, line
    quiet = ["proc: subprocess.Popen[bytes] = x", "s.bind('/run/x.sock')", "signal.signal(signal.SIGINT, h)",
             "subprocess.run(['x'])"]  # fmt: skip
    for line in quiet:
        assert list(findings(ast.parse(line))) == [], line
