"""mountbench's image: built here with no registry (scripts/build-image.sh: the Debian bookworm
base from Debian's packages with mmdebstrap, imported, then the Containerfile on top), run as the
README shows it: a bind mount, a named volume and the container's own layer compared from inside,
each said for what it is, with the results database and reports on a mounted directory that
outlives the container. Runs where the container lab's tests run (root, Podman, runc; and
mmdebstrap): tests/support/image.py skips elsewhere and says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.image import BuiltImage

pytestmark = pytest.mark.slow
SHORT = ("--repeat", "1", "--runtime", "0.3", "--size", "4M")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_image_builds_here_from_debian_packages(mountbench_image: BuiltImage) -> None:
    said = mountbench_image.output
    assert "made with mmdebstrap from" in said, said
    assert f"image: {mountbench_image.tag}" in said and "mountbench, version" in said and "Python 3.11" in said, said
    assert "fio-3." in said, said
    # Podman kept everything in the build's own directory
    assert (mountbench_image.state / "storage" / "overlay-images").is_dir()


def test_a_run_in_the_image_compares_bind_volume_and_layer_and_keeps_its_results(
    mountbench_image: BuiltImage, tmp_path: Path
) -> None:
    here = tmp_path / "project"  # the user's directory: "$PWD" in the README
    results = here / "results"
    results.mkdir(parents=True)
    env_columns = ["-e", "COLUMNS=160"]
    run = mountbench_image.run([*env_columns, "-v", f"{here}:/host", "-v", "mbvol:/vol", "-v", f"{results}:/results",
                                mountbench_image.tag, "run", "/host", "/vol", "/tmp", *SHORT])  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out, err = _flat(run.stdout), _flat(run.stderr)
    # the run knows where it is, and which mount is which: labels, and the facts of every target
    assert "in a container: Podman (/run/.containerenv, container=podman" in out, out[-3000:]
    for label in ("/host (bind, ", "/vol (volume, ", "/tmp (layer, overlay)"):
        assert label in out, label
    assert f"bind mount: {here} of " in out
    assert "named volume mbvol (a directory in the engine's storage: " in out
    assert "the container's writable layer (overlay over the image; its data goes with the container)" in out
    # said once before the first sample: a sample's own files are evicted, the machine's caches cannot be dropped
    assert err.count("the machine's caches cannot be dropped") == 1, err[-2000:]
    assert "the files a buffered sample reads are evicted (no root needed)" in err
    assert "read-only here, as /proc/sys is in a container that is not privileged" in err
    assert "18 samples stored, 0 failed" in err

    # the store outlived the container: the host's own mountbench reads it, another container reports from it
    database = results / "results.sqlite"
    assert database.is_file()
    env = {**os.environ, "COLUMNS": "160"}
    show = subprocess.run([sys.executable, "-m", "mountbench", "show", "--db", str(database)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert show.returncode == 0 and "/vol (volume, " in show.stdout, show.stdout + show.stderr
    report = mountbench_image.run(["-v", f"{results}:/results", mountbench_image.tag, "report", "--out", "report.md"])
    assert report.returncode == 0, report.stderr
    markdown = (results / "report.md").read_text()
    assert "in a container: Podman" in markdown and "named volume mbvol" in markdown

    # without a directory mounted for it the database would go with the container: said up front
    lost = mountbench_image.run([*env_columns, "-v", f"{here}:/host", mountbench_image.tag, "run", "/host", "--only",
                                 "rnd4k-q1-read", *SHORT])  # fmt: skip
    assert lost.returncode == 0, lost.stderr[-2000:]
    assert "the results database /results/results.sqlite is on the container's writable layer: it goes with the " \
        "container" in _flat(lost.stderr)  # fmt: skip

    # doctor says where it is, and what each target's mount is
    doctor = mountbench_image.run([*env_columns, "-v", f"{here}:/host", "-v", "mbvol:/vol", mountbench_image.tag,
                                   "doctor", "/host", "/vol"])  # fmt: skip
    said = _flat(doctor.stdout)
    assert doctor.returncode == 0, said[-2000:]
    assert "Podman (/run/.containerenv" in said and "bind mount:" in said and "named volume mbvol" in said, said
    assert "--privileged" in said  # the fix for caches that cannot be dropped in a container

    # nothing left: no container, no scratch directory in the bind mount or the volume
    left = mountbench_image.podman.run(["ps", "--all", "--quiet"])
    assert left.strip() == ""
    volume = Path(mountbench_image.podman.run(["volume", "inspect", "--format", "{{.Mountpoint}}", "mbvol"]).strip())
    assert [p.name for p in here.iterdir()] == ["results"]
    assert list(volume.iterdir()) == []
