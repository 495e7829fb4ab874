"""`mountbench history` on a database of recorded runs (synthetic: support/factories.history_runs): ten
runs with one step in the middle show that step and no other, on the terminal (within 80 columns) and in
the HTML page's chart; targets are listed without a TARGET; what names nothing is one line, exit 2."""

from __future__ import annotations

from pathlib import Path

from support.factories import history_runs
from support.runhelpers import assert_one_line_error, mountbench

from mountbench.store import Store

STEP = [1.0] * 5 + [0.6] * 5


def _stored(env: dict[str, str]) -> list[str]:
    runs = history_runs(STEP, seed=21)
    with Store(Path(env["MOUNTBENCH_DB"])) as store:
        for run in runs:
            assert store.import_run(run)
    return [run.id for run in runs]


def test_ten_recorded_runs_with_one_step_show_that_step_and_no_other(tmp_path, mb_env):
    ids = _stored(mb_env)
    page = tmp_path / "history.html"
    proc = mountbench("history", "/ram", "--out", str(page), env={**mb_env, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("History of /ram (tmpfs): 10 runs")
    assert all(len(line) <= 80 for line in lines)
    steps = [line for line in lines if "── step: " in line]
    assert len(steps) == 3 and all("lower (worse)" in line for line in steps)  # one per workload
    between = [line for line in lines if line.startswith("  between runs")]
    assert len(between) == 1 and between[0].startswith("  between runs 5 and 6")
    for table in proc.stdout.split("── step: ")[1:]:
        assert ids[5] in table.splitlines()[1]  # the step lies right before the sixth run
    html = page.read_text()
    assert "<svg " in html and "History of /ram (tmpfs)" in html and f"wrote {page}" in proc.stderr


def test_without_a_target_the_storage_with_runs_is_listed(mb_env):
    _stored(mb_env)
    proc = mountbench("history", env={**mb_env, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    assert "/ram" in proc.stdout and "tmpfs" in proc.stdout and " 10 " in proc.stdout
    by_label = mountbench("history", "ram", env={**mb_env, "COLUMNS": "80"})
    assert by_label.returncode == 0 and by_label.stdout.startswith("History of /ram")


def test_what_names_nothing_is_refused_in_one_line(tmp_path, mb_env):
    _stored(mb_env)
    assert_one_line_error(mountbench("history", "/nowhere", env=mb_env), "no stored run measured /nowhere", "/ram")
    assert_one_line_error(mountbench("history", "--out", str(tmp_path / "h.html"), env=mb_env), "give the TARGET")
    assert not (tmp_path / "h.html").exists()
