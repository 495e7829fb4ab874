"""The container lab's parts that need no container: its mount-kind registry, the options it
takes and refuses (one line, exit 2, before anything starts), the Podman configuration it
writes for itself, and mount paths as the kernel escapes them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from mountbench.errors import UsageError
from mountbench.labs.containers.mounts import MOUNT_TYPES, MountType
from mountbench.labs.containers.mounts.containermount import PlainMount
from mountbench.labs.containers.rounds import HOST, mount_types, with_defaults
from mountbench.labs.containers.workdir import LabDir, Names, sweep_dead
from mountbench.labs.frame import Problem
from mountbench.labs.leftovers import decode_mount_path
from mountbench.labs.members import LABS
from mountbench.model import RunOptions

DOCS = Path(__file__).resolve().parents[3] / "docs" / "containers.md"


def docs_table_problems(types: Mapping[str, MountType]) -> list[str]:
    """docs/containers.md's table of mount types against a registry: one row a type, in its order, at its
    path inside; what differs, one line each (nothing: the page says what the lab mounts)."""
    table = DOCS.read_text().split("| mount | inside at |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", table, re.MULTILINE)
    wanted = [(kind.name, kind.path) for kind in types.values()]
    problems = [
        f"docs/containers.md has no row for {name} at {path}" for name, path in wanted if (name, path) not in rows
    ]
    problems += [f"docs/containers.md lists {name} at {path}, not a mount type" for name, path in rows
                 if (name, path) not in wanted]  # fmt: skip
    if not problems and rows != wanted:
        problems.append(f"docs/containers.md lists the mount types as {rows}, not in the registry's order")
    return problems


def test_the_registry_is_what_help_docs_and_the_lab_list_each_type_at_its_own_path() -> None:
    from click.testing import CliRunner

    from mountbench.cli.containers import containers

    assert docs_table_problems(MOUNT_TYPES) == []
    assert len({kind.path for kind in MOUNT_TYPES.values()}) == len(MOUNT_TYPES)
    assert LABS["containers"].variants is MOUNT_TYPES
    said = " ".join(CliRunner().invoke(containers, ["--help"], terminal_width=200).output.split())
    assert f"mount types, comma-separated or repeated: {', '.join(MOUNT_TYPES)}" in said, said


class _Scratch(PlainMount):
    """A throwaway mount type: what adding one takes (this class and one registry line)."""

    name = "scratch"
    path = "/mnt/scratch"
    meaning = "a throwaway type that shows the registry is the list"
    outlives = "no: a test's"

    def prerequisites(self) -> list[Problem]:
        return [Problem("no scratch tool", "apt-get install scratch")]

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        return ["--tmpfs", f"{self.path}:rw"]


def test_a_mount_type_added_to_the_registry_is_chosen_checked_started_and_missed_by_the_docs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 52: adding a container mount type is one module and one registry line; the choice, the
    checks, the container's options and the docs check follow from the registry (a throwaway type)."""
    from mountbench.labs.containers.containerlab import run_options
    from mountbench.labs.containers.containerplan import _stand_in

    monkeypatch.setitem(MOUNT_TYPES, "scratch", _Scratch())
    assert [t.name for t in mount_types(["scratch,bind"])] == ["bind", "scratch"]
    assert [t.name for t in mount_types([])][-1] == "scratch"
    with pytest.raises(UsageError, match=r"choose from: bind, volume, layer, tmpfs, overlay, scratch$"):
        mount_types(["nfs"])
    assert "no scratch tool" in [p.what for p in LABS["containers"].prerequisites(variants=["scratch"])]
    assert "no scratch tool" not in [p.what for p in LABS["containers"].prerequisites(variants=["bind"])]
    argv = run_options(_stand_in(), mount_types(["scratch"]))
    assert argv[-2:] == ["--tmpfs", "/mnt/scratch:rw"]
    assert docs_table_problems(MOUNT_TYPES) == ["docs/containers.md has no row for scratch at /mnt/scratch"]


def test_mount_types_are_chosen_in_registry_order_and_unknown_ones_refused() -> None:
    assert [t.name for t in mount_types(["tmpfs,bind"])] == ["bind", "tmpfs"]
    assert [t.name for t in mount_types([])] == list(MOUNT_TYPES)
    with pytest.raises(UsageError, match="'nfs' is not a container mount type; choose from: bind, volume"):
        mount_types(["nfs"])


def test_defaults_fix_runtime_and_size_and_the_host_is_the_baseline() -> None:
    chosen = with_defaults(RunOptions())
    assert (chosen.presets, chosen.runtime, chosen.size, chosen.baseline) == (("quick",), 1.0, 64 * 1024**2, HOST)
    assert with_defaults(RunOptions(runtime=2.0, size=1024)).runtime == 2.0


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (RunOptions(until=0.05), "--until is for 'mountbench run'"),
        (RunOptions(budget=60.0), "--budget is for 'mountbench run'"),
        (RunOptions(baseline="bind"), "compares with the host"),
    ],
)
def test_options_both_sides_cannot_share_are_refused(options: RunOptions, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        with_defaults(options)


def test_bad_input_is_one_line_and_exit_2_before_anything_starts(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for args in (["--mount", "nfs"], ["--until", "5%"]):
        done = subprocess.run([sys.executable, "-m", "mountbench", "containers", *args], env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "mountbench").exists(), "nothing was made"


def test_the_lab_writes_its_own_podman_configuration_inside_its_directory(tmp_path: Path) -> None:
    lab = LabDir.create(tmp_path)
    conf = lab.containers_conf.read_text()
    assert 'runtime = "runc"' in conf and 'cgroup_manager = "cgroupfs"' in conf and "default_ulimits = []" in conf
    assert f'tmp_dir = "{lab.path / "tmp"}"' in conf
    assert f'graphroot = "{lab.path / "storage"}"' in lab.storage_conf.read_text()
    assert lab.podman.env["CONTAINERS_CONF"] == str(lab.containers_conf)
    assert lab.owner_alive(), "this process owns it"
    assert sweep_dead(tmp_path) == [] and lab.path.exists(), "a live lab is never swept"


def test_a_lab_whose_owner_died_is_swept(tmp_path: Path) -> None:
    lab = LabDir.create(tmp_path)
    (lab.path / "owner.json").write_text('{"pid": 999999999, "started": 0}')
    assert sweep_dead(tmp_path) == [str(lab.path)]
    assert not lab.path.exists()


def test_mount_paths_are_decoded_as_the_kernel_escapes_them() -> None:
    assert decode_mount_path(r"/tmp/a\040b\011c") == "/tmp/a b\tc"
    assert decode_mount_path("/tmp/é") == "/tmp/é"


def test_a_container_run_stores_its_own_facts_and_reads_them_back() -> None:
    from mountbench.labfacts import ContainerImage, ContainerLabFacts, ContainerMount
    from mountbench.model import RunConfig
    from mountbench.records.codec import config_from_dict, config_to_dict

    bind = ContainerMount("bind", "/mnt/bind", fstype="ext4", shares="both ways")
    facts = ContainerLabFacts(engine="podman 4.3.1", image=ContainerImage(id="abc"), mounts=(bind,))
    config = RunConfig(repeat=3, seed=1, baseline="host", drop_caches="auto", lab=facts)
    stored = config_to_dict(config)
    assert stored["lab"]["name"] == "containers"
    assert config_from_dict(stored).lab == facts
    # what the lab stored before issue 52 (one dict, its own in-container checks) reads as the same record
    early = {"name": "containers", "facts": {"engine": "podman 4.3.1", "image": {"id": "abc"},
             "mounts": {"bind": {"path": "/mnt/bind", "fstype": "ext4", "shares": "both ways"}},
             "probe": {"capabilities": {"bind": {"xattr": {"ok": False, "errno": "ENOTSUP"}}}}}}  # fmt: skip
    read = config_from_dict({**stored, "lab": early}).lab
    assert isinstance(read, ContainerLabFacts) and read.mount("bind") == facts.mounts[0]
    assert read.probe is not None and read.probe.mount("bind").shared
    (xattr,) = read.probe.mount("bind").capabilities.results  # type: ignore[union-attr]
    assert (xattr.capability, xattr.verdict, xattr.errno) == ("user_xattr", "no", "ENOTSUP")


def test_podmans_network_configuration_and_caches_stay_in_the_labs_directory(tmp_path: Path) -> None:
    """Issue 47 case 5: podman opened /etc/cni/net.d/cni.lock (its network configuration lives in
    the lab now) and podman import's blob-info cache under /var/lib/containers (a private view in
    which the lab's own directory stands in for it)."""
    lab = LabDir.create(tmp_path)
    assert f'network_config_dir = "{lab.path / "network"}"' in lab.containers_conf.read_text()
    assert (lab.path / "network").is_dir() and lab.path.stat().st_mode & 0o777 == 0o700
    ((source, target),) = lab.podman.system_binds()
    assert source == str(lab.path / "system") and target in ("/var/lib/containers", "/var/lib")


def test_dry_run_prints_the_checks_the_exact_commands_and_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    """Issue 49: `run` and `cloudlab` had --dry-run, `containers` did not. It checks what the lab needs,
    prints every Podman command with the lab's own configuration, each round's command on each side and
    the plan; it makes no directory, image, container or database."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "MOUNTBENCH_DB": str(tmp_path / "db.sqlite")}
    done = subprocess.run([sys.executable, "-m", "mountbench", "containers", "--dry-run", "--mount", "bind,volume",
                           "--repeat", "2", "--only", "rnd4k-q1-read"], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    out = done.stdout
    assert "Checks:" in out and "image: built from this host's fio" in out, out
    root = tmp_path / "cache" / "mountbench" / "containers" / "<id>"
    assert f"CONTAINERS_CONF={root}/containers.conf" in out.replace("'", "")
    assert f"import --quiet --change 'LABEL mountbench.lab=<id>' {root}/image/rootfs.tar" in out.replace(
        f"'{root}/image/rootfs.tar'", f"{root}/image/rootfs.tar"
    )
    assert "volume create --label 'mountbench.lab=<id>' 'mountbench-<id>-volume'" in out
    assert "--volume 'mountbench-<id>-volume:/mnt/volume'" in out and ":/mnt/bind'" in out
    assert "--preserve-fds 1 'localhost/mountbench-lab:<id>' sh -c 'exec cat <&3 >/dev/null'" in out
    assert (
        "Plan: 3 targets (host, bind, volume; host is the baseline) × 1 workloads (rnd4k-q1-read) × 2 rounds = 6" in out
    )
    assert "  host: " in out and "-m mountbench run 'host=" in out
    assert "exec 'mountbench-<id>' " in out and " bind=/mnt/bind volume=/mnt/volume --options-json" in out
    if done.returncode == 0:
        assert "✓ root, podman, runc" in out
    else:  # a machine without what the lab needs: said as a check, and the one-line refusal
        assert done.returncode == 2 and "✗" in out and "the lab would refuse to start" in done.stderr, done.stderr
    assert not (tmp_path / "cache" / "mountbench").exists() and not (tmp_path / "db.sqlite").exists()
