"""The package as pip builds it (`python -m build`: a wheel and an sdist, from a copy of the
sources so the checkout gets no build/ or egg-info), once for the session, with a wheelhouse of
its dependencies (pip download) so that every install the tests make needs no index."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.wheels import APT_TOOLS, Dist, copy_sources


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    root = tmp_path_factory.mktemp("dist")
    source = copy_sources(root / "source")
    built = root / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(built), str(source)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = built.glob("mountbench-*.whl")
    (sdist,) = built.glob("mountbench-*.tar.gz")
    wheelhouse = root / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q",
                           "--dest", str(wheelhouse), "--only-binary=:all:", str(wheel)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return Dist(wheel, sdist, wheelhouse)


@pytest.fixture
def apt_guard(tmp_path: Path) -> tuple[Path, Path]:
    """A directory to put first on PATH in which apt, apt-get, apt-cache, aptitude and dpkg only
    write their arguments to a log and fail; (the directory, the log)."""
    shims, log = tmp_path / "apt-guard", tmp_path / "apt-calls.log"
    shims.mkdir()
    for tool in APT_TOOLS:
        shim = shims / tool
        shim.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\nexit 100\n')
        shim.chmod(0o755)
    return shims, log
