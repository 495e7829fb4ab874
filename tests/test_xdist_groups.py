"""CI's two workers (tests/support/groups.py): the files that may run alongside the host's tests exist,
and do nothing those tests could see (no fio, mount, server, namespace, session or guest)."""

from __future__ import annotations

import re
from pathlib import Path

from support.groups import ALONGSIDE, xdist_group_of, xdist_group_of_nodeid

HERE = Path(__file__).parent

# what a test file uses when it touches the machine's shared state
SHARED_STATE = re.compile(
    r"realmounts|find_fio|needs_fio|FioRunner|netns|sshd|Guest\(|lab_ready|require_lab|Popen|os\.kill|"
    r"""\(\s*["'](run|lab|cloudlab|serve)["']"""  # a mountbench helper's command: mountbench("run", ...)
)


def test_every_entry_names_a_test_file_or_folder() -> None:
    for entry in ALONGSIDE:
        path = HERE / entry
        assert path.is_dir() if entry.endswith("/") else path.is_file(), entry


def test_the_files_alongside_touch_no_shared_state() -> None:
    offenders = []
    for path in sorted(HERE.rglob("test_*.py")):
        where = path.relative_to(HERE).as_posix()
        if xdist_group_of(where, lab=False) is not None:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if SHARED_STATE.search(line):
                offenders.append(f"{where}:{number}: {line.strip()}")
    assert not offenders, "move these files out of ALONGSIDE (tests/support/groups.py):\n" + "\n".join(offenders)


def test_groups() -> None:
    assert xdist_group_of("labs/qemu/test_lab_cli.py", lab=False) == "lab"
    assert xdist_group_of("test_bench_smoke.py", lab=True) == "lab"
    assert xdist_group_of("test_bench_smoke.py", lab=False) == "host"
    assert xdist_group_of("kinds/test_http.py", lab=False) == "host"
    assert xdist_group_of("report/test_report_html.py", lab=False) is None
    assert xdist_group_of_nodeid("tests/test_bench_smoke.py::test_bench_runs_in_smoke_mode[studies_lab]") == "lab"
    assert xdist_group_of_nodeid("tests/test_bench_smoke.py::test_bench_runs_in_smoke_mode[aa]") == "host"
    assert xdist_group_of_nodeid("tests/analysis/test_stats.py::test_x") is None
