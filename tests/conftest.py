"""Shared fixtures. Real mounts come from support/realmounts.py (created and removed by the suite)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
HERE = Path(__file__).parent

# With pytest-xdist (`scripts/test.sh -n 2 --dist loadgroup`, a quicker local look; CI runs one
# worker), tests that share one scarce thing run on one worker, one after another: the lab tests
# each boot an emulated guest that takes both CPUs; the multi-client tests set up network
# namespaces and fio servers; the nginx tests check that no nginx is left running, which another
# test's nginx would upset.
SERIAL_GROUPS = {
    "lab/": "lab",
    "clients/": "clients",
    "kinds/test_http.py": "nginx",
    "cli/test_s1.py": "nginx",
}


# Tests whose assertions depend on how fast something ran, marked `timing`: a throttled target's
# drift, round 1 against the rest, CPU seconds of a burner, visibility delays, a clock matched to
# within 50 ms, a hang cut within a second or two of its timeout. scripts/test.sh runs them after
# the rest, on one worker, so no other test's load can decide them. (A bound that only tells a hang
# from a normal end, e.g. "stopped within 20 s" of a 60 s run, is not a timing assertion.)
TIMING = (
    "kinds/test_fio_files.py::test_round_1_of_a_random_write_no_longer_differs_from_the_rest",
    "kinds/test_fio_series.py::test_a_sample_slowed_halfway_says_it_was_not_steady",
    "kinds/test_fio_series.py::test_fio_steadystate_that_is_not_met_is_said",
    "test_watch.py",
    "test_sequential.py::test_a_budget_stops_the_run_and_says_so",
    "cli/test_drift_real.py",
    "clients/test_serve.py::test_the_probe_session_runs_steps_only_in_probe_scratch_directories",
    "probe/test_probe_coherence.py",
    "probe/test_probe_agent.py::test_the_clock_is_matched_to_within_half_a_round_trip",
    "probe/test_probe_agent.py::test_a_directory_seen_from_both_sides_of_the_channel_is_coherent",
    "probe/test_probe_safety.py::test_injected_hang_is_reported_in_time_and_probing_goes_on",
    "probe/test_probe_safety.py::test_frozen_fuse_server_before_probing",
    "probe/test_probe_safety.py::test_fuse_server_freezing_mid_probe",
    "probe/test_probe_sandbox.py::test_hang_is_cut_at_the_timeout_and_kills_helpers",
    "probe/test_probe_sandbox.py::test_death_is_seen_even_while_a_helper_holds_the_pipe",
)


def pytest_configure(config: pytest.Config) -> None:
    # A shell without job control starts background commands (`pytest ... &`, nohup, some CI
    # runners) with SIGINT ignored, and every program the tests start inherits that: the Ctrl-C
    # tests then see a run that never stops. Python's own handler is reset to the default on exec.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.path)).relative_to(HERE).as_posix()
        group = next((g for prefix, g in SERIAL_GROUPS.items() if where.startswith(prefix)), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
        test_id = f"{where}::{item.name}"
        if any(test_id.startswith(entry) if "::" in entry else where == entry for entry in TIMING):
            item.add_marker(pytest.mark.timing)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def mb_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment whose results database lives in the test's temp dir."""
    db = tmp_path / "results.sqlite"
    monkeypatch.setenv("MOUNTBENCH_DB", str(db))
    env = dict(os.environ)
    env["MOUNTBENCH_DB"] = str(db)
    return env
