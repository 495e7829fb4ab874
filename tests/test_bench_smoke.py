"""Every script in bench/ runs: each with --smoke (the smallest sizes, one round, seconds), so a
bench that breaks fails CI instead of waiting for the next person who needs its figures. The
figures themselves are not checked (a smoke run is too small to mean anything); what is
checked is that the script ends well and prints what it is for."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.labhelpers import require_lab
from support.tools import needs_fio

BENCH = Path(__file__).resolve().parents[1] / "bench"

# script -> (a line its output must contain, its prerequisites as marks)
EXPECTED = {
    "aa.py": "called faster/slower",
    "aa_against.py": "pairs calling anything regressed",
    "clients_scaling.py": "wall time of the whole run",
    "cloudlab_byhand.py": "lab medians within the by-hand range",
    "container_fidelity.py": "alternating blocks: median ratio",
    "fidelity.py": "all workloads pooled",
    "first_eta.py": "first ETA",
    "image_fidelity.py": "interleaved pairs",
    "jobfiles.py": "mountbench / plain fio, each job's IOPS",
    "lab_boot.py": "in guest: python",
    "overhead.py": "mountbench's own share",
    "placement.py": "b slower in",
    "report_speed.py": "html + SVG charts",
    "sample_cost.py": "one process per sample (mountbench)",
    "six_mounts.py": "tmpfs vs disk decided",
    "ssh_clients.py": "left running on the clients: 0 marked processes, 0 ssh sessions",
    "studies_lab.py": "loose vs none at 32k, by hand",
    "time_to_answer.py": "to the answer",
    "tree_extract.py": "paired: median of the 1 per-pair ratios",
    "variance.py": "between back-to-back samples",
}


def _scripts() -> list[str]:
    return sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))


def test_every_bench_script_has_a_smoke_run() -> None:
    assert _scripts() == sorted(EXPECTED), "a new bench script needs an entry here (and a --smoke mode)"


def _params() -> list[object]:
    params = []
    for name in sorted(EXPECTED):
        marks = [pytest.mark.slow]
        if name in ("lab_boot.py", "studies_lab.py"):
            marks.append(
                pytest.mark.lab
            )  # support/groups.py: group "lab"; the client benches "clients"; the rest "host"
        params.append(pytest.param(name, marks=marks, id=name.removesuffix(".py")))
    return params


def _prerequisites(name: str) -> None:
    if name != "report_speed.py":
        needs_fio()
    if name == "tree_extract.py" and shutil.which("hyperfine") is None:
        pytest.skip("hyperfine is not installed (apt-get install hyperfine)")
    if name == "lab_boot.py":
        require_lab(types={"guest-tmpfs"})
    if name == "studies_lab.py":
        require_lab(types={"9p"})
    if name == "container_fidelity.py":
        from mountbench.labs.containers.prereq import lab_problems

        if lab_problems():
            pytest.skip(f"bench/{name} needs the container lab: {lab_problems()[0]} ({lab_problems()[0].fix})")
    if name == "cloudlab_byhand.py":
        from mountbench.labs.cloud.prereq import lab_problems as cloud_problems

        if cloud_problems() or os.geteuid() != 0:
            why = f"{cloud_problems()[0]} ({cloud_problems()[0].fix})" if cloud_problems() else "root (drop_caches)"
            pytest.skip(f"bench/{name} needs the cloud lab and {why}")
    if name in ("clients_scaling.py", "ssh_clients.py") and os.geteuid() != 0:
        pytest.skip(f"bench/{name} needs root (network namespaces, a tmpfs)")


@pytest.mark.parametrize("name", _params())
def test_bench_runs_in_smoke_mode(name: str, tmp_path: Path, mb_env: dict[str, str], request) -> None:
    _prerequisites(name)
    if name == "image_fidelity.py":  # the session's image (tests/support/image.py), not one more build
        built = request.getfixturevalue("mountbench_image")
        mb_env = {**mb_env, "MOUNTBENCH_IMAGE": built.tag, "MOUNTBENCH_IMAGE_STATE": str(built.state)}
    proc = subprocess.run(
        [sys.executable, str(BENCH / name), "--smoke"],
        cwd=tmp_path,  # overhead.py measures the current directory
        env=mb_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, f"{name} --smoke failed ({proc.returncode}):\n{output}"
    assert EXPECTED[name] in proc.stdout, proc.stdout[-2000:]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".mountbench-")], "a scratch dir was left behind"
