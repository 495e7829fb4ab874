"""CI's two workers (tests/support/groups.py): the files that may run alongside the host's tests exist,
and do nothing those tests could see (no fio, mount, server, namespace, session or guest)."""

from __future__ import annotations

import re
from pathlib import Path

from support.groups import (
    ALONGSIDE,
    CLIENT_BENCHES,
    IMAGE,
    IMAGE_BENCHES,
    LAB_BENCHES,
    REFUSALS,
    xdist_group_of,
    xdist_group_of_nodeid,
)

HERE = Path(__file__).parent

# what a test file uses when it touches the machine's shared state
SHARED_STATE = re.compile(
    r"realmounts|find_fio|needs_fio|FioRunner|netns|sshd|Guest\(|lab_ready|require_lab|Popen|os\.kill|"
    r"""\(\s*["'](run|lab|cloudlab|serve)["']"""  # a mountbench helper's command: mountbench("run", ...)
)
# what a REFUSALS file may use of it: fio (to parse a job, to say its version), `mountbench run`
# (refused, or a dry run); every test of it uses tests/cli/conftest.py's no_run_started, which checks that no
# run began (the file says so with pytestmark)
REFUSED_ONLY = re.compile(r"""needs_fio|\(\s*["']run["']""")


def test_every_entry_names_a_test_file_or_folder() -> None:
    for entry in ALONGSIDE:
        path = HERE / entry
        assert path.is_dir() if entry.endswith("/") else path.is_file(), entry
    for bench in (*LAB_BENCHES, *IMAGE_BENCHES, *CLIENT_BENCHES):  # test_bench_smoke.py's ids: the scripts' names
        assert (HERE.parent / "bench" / f"{bench}.py").is_file(), bench
    for entry in IMAGE:
        assert (HERE / entry).is_file(), entry


def test_the_files_alongside_touch_no_shared_state() -> None:
    offenders = []
    for path in sorted(HERE.rglob("test_*.py")):
        where = path.relative_to(HERE).as_posix()
        if xdist_group_of(where, lab=False) is not None:
            continue
        text = path.read_text()
        refusals = where in REFUSALS
        if refusals and 'pytestmark = pytest.mark.usefixtures("no_run_started")' not in text:
            offenders.append(f"{where}: a REFUSALS file whose tests do not all use no_run_started")
        for number, line in enumerate(text.splitlines(), 1):
            found = {m.group(0) for m in SHARED_STATE.finditer(line)}
            if refusals:
                found = {f for f in found if not REFUSED_ONLY.fullmatch(f)}
            if found:
                offenders.append(f"{where}:{number}: {line.strip()}")
    assert not offenders, "move these files out of ALONGSIDE (tests/support/groups.py):\n" + "\n".join(offenders)


def test_refusals_are_alongside() -> None:
    assert all(xdist_group_of(entry, lab=False) is None for entry in REFUSALS)


def test_groups() -> None:
    assert xdist_group_of("labs/qemu/test_lab_cli.py", lab=False) == "lab"
    assert xdist_group_of("test_bench_smoke.py", lab=True) == "lab"
    assert xdist_group_of("test_bench_smoke.py", lab=False) == "host"
    assert xdist_group_of("kinds/test_http.py", lab=False) == "host"
    assert xdist_group_of("install/test_wheel.py", lab=False) == "host"  # fio runs from the installed wheel
    assert xdist_group_of("install/test_image.py", lab=False) == "lab"  # its own Podman state, beside the guests
    assert xdist_group_of_nodeid("tests/test_bench_smoke.py::test_bench_runs_in_smoke_mode[image_fidelity]") == "lab"
    assert xdist_group_of("clients/test_ssh.py", lab=False) == "clients"
    assert xdist_group_of("clients/test_results.py", lab=False) is None
    assert xdist_group_of("report/test_report_html.py", lab=False) is None
    assert xdist_group_of_nodeid("tests/test_bench_smoke.py::test_bench_runs_in_smoke_mode[studies_lab]") == "lab"
    assert xdist_group_of_nodeid("tests/test_bench_smoke.py::test_bench_runs_in_smoke_mode[aa]") == "host"
    assert xdist_group_of_nodeid("tests/test_bench_smoke.py::test_bench_runs_in_smoke_mode[ssh_clients]") == "clients"
    assert xdist_group_of_nodeid("tests/analysis/test_stats.py::test_x") is None


def test_the_grouping_scheduler_is_active_under_xdist(tmp_path: Path) -> None:
    """conftest's scheduler overrides a private method of xdist's (``_split_scope``): when xdist
    renames it, the groups silently fall apart. Six tests of one group (host: a file under
    kinds/, not alongside) run on two workers, under this suite's conftest, must all run on one."""
    import subprocess
    import sys
    import textwrap

    tests = tmp_path / "tests"
    (tests / "kinds").mkdir(parents=True)
    (tests / "conftest.py").write_text(
        textwrap.dedent(f"""
            import importlib.util, sys
            sys.path.insert(0, {str(HERE)!r})
            spec = importlib.util.spec_from_file_location("suite_conftest", {str(HERE / "conftest.py")!r})
            suite = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(suite)
            pytest_configure = suite.pytest_configure
        """)
    )
    (tests / "kinds" / "test_one_group.py").write_text(
        "import time\n" + "".join(f"def test_{n}():\n    time.sleep(0.2)\n" for n in range(6))
    )
    assert xdist_group_of_nodeid("tests/kinds/test_one_group.py::test_0") == "host"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
         "--rootdir", str(tmp_path), "tests/kinds/test_one_group.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers = set(re.findall(r"\[(gw\d+)\][^\n]*PASSED", done.stdout))
    assert len(workers) == 1, done.stdout[-2000:]


def test_pytest_alone_runs_without_xdist() -> None:
    """The xdist hook is registered only where xdist is: ``-p no:xdist`` is no INTERNALERROR."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
         "tests/test_import_rules.py::test_the_cycle_finder_finds_circles"],
        cwd=HERE.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
