"""Installed without apt: the wheel pip builds holds every module and data file (presets,
report templates, the lab's guest script), so does the sdist, and `pip install` of the wheel into
a fresh virtualenv outside the checkout runs `run --preset quick` on two directories, then
`show`, `report` (HTML and Markdown), `probe` and `presets`, with apt, apt-get and dpkg on PATH
refusing (and logging) any call."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from support.wheels import REPO

pytestmark = pytest.mark.slow


def _package_files() -> set[str]:
    """Every file of src/mountbench (modules and data), as a path from src/."""
    package = REPO / "src" / "mountbench"
    return {
        path.relative_to(package.parent).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_wheel_and_the_sdist_hold_every_module_and_data_file(dist) -> None:
    wanted = _package_files()
    assert {"mountbench/presets/quick.toml", "mountbench/report/templates/report.html.j2"} <= wanted
    in_wheel = set(zipfile.ZipFile(dist.wheel).namelist())
    assert not wanted - in_wheel, f"missing from the wheel: {sorted(wanted - in_wheel)}"
    top = dist.sdist.name.removesuffix(".tar.gz")
    with tarfile.open(dist.sdist) as sdist:
        names = set(sdist.getnames())
    in_sdist = {name.removeprefix(f"{top}/src/") for name in names}
    assert not wanted - in_sdist, f"missing from the sdist: {sorted(wanted - in_sdist)}"
    assert {f"{top}/pyproject.toml", f"{top}/README.md"} <= names


def _outside_checkout_path(extra: list[Path]) -> str:
    """PATH with ``extra`` first and nothing of the checkout (its .venv/bin)."""
    kept = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not p.startswith(str(REPO))]
    return os.pathsep.join([*map(str, extra), *kept])


def test_pip_install_of_the_wheel_runs_quick_on_two_directories_without_apt(dist, apt_guard, tmp_path: Path) -> None:
    shims, apt_log = apt_guard
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MOUNTBENCH_", "PYTHON", "VIRTUAL_"))}
    env |= {"PATH": _outside_checkout_path([shims, bin_dir]), "HOME": str(tmp_path / "home"), "COLUMNS": "120",
            "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def call(*argv: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(a) for a in argv], cwd=elsewhere, env=env, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip

    install = call(bin_dir / "pip", "install", "--disable-pip-version-check", "--no-index", "--find-links",
                   dist.wheelhouse, dist.wheel, timeout=600)  # fmt: skip
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    where = call(bin_dir / "python", "-c", "import mountbench; print(mountbench.__file__)")
    assert where.stdout.strip().startswith(str(venv)), where.stdout + where.stderr

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    run = call("mountbench", "run", f"a={a}", f"b={b}", "--preset", "quick", "--repeat", "1", "--runtime", "0.3",
               "--size", "4M")  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "12 samples stored, 0 failed" in run.stderr, run.stderr[-2000:]
    assert (tmp_path / "data" / "mountbench").is_dir()  # the default database, in the user's data directory
    show = call("mountbench", "show")
    assert show.returncode == 0 and "RND 4K Q1" in show.stdout, show.stdout + show.stderr
    for out in ("report.html", "report.md"):
        report = call("mountbench", "report", "--out", elsewhere / out)
        assert report.returncode == 0, report.stderr
    assert "<html" in (elsewhere / "report.html").read_text()
    assert "| workload" in (elsewhere / "report.md").read_text() or "RND 4K" in (elsewhere / "report.md").read_text()
    probe = call("mountbench", "probe", a)
    assert probe.returncode == 0, probe.stdout[-2000:] + probe.stderr[-2000:]
    presets = call("mountbench", "presets")
    assert presets.returncode == 0 and "quick" in presets.stdout
    assert not apt_log.exists(), f"apt was called: {apt_log.read_text()}"
    assert not list(a.iterdir()) and not list(b.iterdir()), "a scratch directory was left behind"
