"""Shared fixtures. Real mounts come from support/realmounts.py (created and removed by the suite)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.groups import xdist_group_of_nodeid
from support.timing import ALONE, TIMING

if TYPE_CHECKING:
    from support.image import BuiltImage

DATA = Path(__file__).parent / "data"
HERE = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    # A shell without job control starts background commands (`pytest ... &`, nohup, some CI
    # runners) with SIGINT ignored, and every program the tests start inherits that: the Ctrl-C
    # tests then see a run that never stops. Python's own handler is reset to the default on exec.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(GroupScheduling(), "mountbench-group-scheduling")


class GroupScheduling:
    """`--dist loadgroup` by the groups of tests/support/groups.py (lab, host), by node id. A
    plugin registered only when xdist is there: with pytest alone (``-p no:xdist``) an xdist
    hook in a conftest is an unknown hook, which pytest refuses (INTERNALERROR)."""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadGroupScheduling

        class Groups(LoadGroupScheduling):
            # xdist's scope of a test (its own node id, or an xdist_group mark's name): ours by path
            def _split_scope(self, nodeid: str) -> str:
                return xdist_group_of_nodeid(nodeid) or nodeid

        return Groups(config, log)


def _listed(where: str, test_id: str, entries: tuple[str, ...]) -> bool:
    return any(test_id.startswith(entry) if "::" in entry else where == entry for entry in entries)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.path)).relative_to(HERE).as_posix()
        test_id = f"{where}::{item.name}"
        if _listed(where, test_id, TIMING):
            item.add_marker(pytest.mark.timing)
        if _listed(where, test_id, ALONE):
            item.add_marker(pytest.mark.alone)


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


@pytest.fixture(scope="session")
def mountbench_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuiltImage]:
    """mountbench's image, built once for the session with scripts/build-image.sh in a Podman state
    directory of its own and removed at the end (tests/support/image.py); skips where it cannot be."""
    from support.image import built

    yield from built(tmp_path_factory.mktemp("image") / "state")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """With MOUNTBENCH_TEST_TIMELINE=FILE, one line per test: worker, start, end (epoch seconds) and
    node id, appended to FILE: what ran beside what on the workers (docs/development.md)."""
    path = os.environ.get("MOUNTBENCH_TEST_TIMELINE")
    start = time.time()
    yield
    if path:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(path, "a") as timeline:
            timeline.write(f"{worker} {start:.3f} {time.time():.3f} {item.nodeid}\n")
