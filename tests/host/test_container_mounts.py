"""host/container.py on the mount tables of real engines: which container engine a process runs
under, and which target is a bind mount, a named volume, the writable layer or a tmpfs.

The mount tables are in tests/data/mountinfo/. podman.txt was recorded on this project's machine
(podman 4.3.1, runc, rootful, the overlay driver: ``podman run -v DIR:/host -v mbvol:/vol
--tmpfs /scratch IMAGE cat /proc/self/mountinfo``, some lines left out). docker.txt (Docker on
Linux, overlay2), desktop.txt (Docker Desktop's VM: volumes on its own ext4 disk, host
directories over fakeowner/virtiofs, gRPC FUSE, osxfs, Docker Desktop for Linux's virtiofs,
WSL 2's 9p to a Windows drive and a WSL distribution's own ext4) and vms.txt (Podman machine's
9p and virtiofs, Colima's virtiofs ``mount0``, Lima's reverse sshfs) are written as those
engines show their mounts (the filesystem type, the source and a bind mount's root, as quoted
in their issue trackers), with made-up IDs and paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from mountbench.host import container
from mountbench.host.targets import mount_of, parse_mountinfo

MOUNTINFO = Path(__file__).resolve().parents[1] / "data" / "mountinfo"
PODMAN = (MOUNTINFO / "podman.txt").read_text()
PODMAN_CGROUP = "1:cpu:/libpod_parent/libpod-e38c113beff9819fbaa91f32e5561f96d6ad1a92c0d0a2ca1dee7e18ac11fef7\n"

DOCKER = (MOUNTINFO / "docker.txt").read_text()
DESKTOP = (MOUNTINFO / "desktop.txt").read_text()
VMS = (MOUNTINFO / "vms.txt").read_text()


def _kind(mountinfo: str, path: str, in_container: bool = True) -> container.MountKind | None:
    mount = mount_of(path, parse_mountinfo(mountinfo))
    assert mount is not None
    return container.classify(mount, in_container)


@pytest.mark.parametrize(
    ("mountinfo", "path", "kind", "words"),
    [
        (PODMAN, "/host", "bind", "bind mount: /tmp/mbp/hostdir of /dev/vda"),
        (PODMAN, "/host/src", "bind", "/tmp/mbp/hostdir of /dev/vda"),
        (PODMAN, "/vol", "volume", "named volume mbvol"),
        (PODMAN, "/tmp", "layer", "writable layer (overlay"),
        (PODMAN, "/", "layer", "goes with the container"),
        (PODMAN, "/scratch", "tmpfs", "tmpfs made for the container"),
        (PODMAN, "/dev/shm", "tmpfs", "memory"),
        (DOCKER, "/host", "bind", "bind mount: /home/me/project of /dev/nvme0n1p2"),
        (DOCKER, "/vol", "volume", "named volume mbvol"),
        (DOCKER, "/tmp", "layer", "writable layer"),
        (DOCKER, "/scratch/x", "tmpfs", "tmpfs"),
        (DESKTOP, "/vol", "volume", "named volume mbvol"),
        (DESKTOP, "/virtiofs", "bind", "over virtiofs (Docker Desktop's fakeowner"),
        (DESKTOP, "/grpcfuse", "bind", "over gRPC FUSE"),
        (DESKTOP, "/osxfs", "bind", "over osxfs"),
        (DESKTOP, "/linux-desktop", "bind", "over virtiofs: /home/me/project of virtiofs3"),
        (DESKTOP, "/wsl-windows", "bind", "over 9p: /Users/me/project of C:\\"),
        (DESKTOP, "/wsl-distro", "bind", "bind mount: /home/me/project of /dev/sdc"),
        (VMS, "/podman-9p", "bind", "over 9p: /Users/me/project of vol0"),
        (VMS, "/podman-virtiofs", "bind", "over virtiofs"),
        (VMS, "/colima", "bind", "of mount0"),
        (VMS, "/lima-sshfs", "bind", "over sshfs"),
        (VMS, "/vol", "volume", "named volume mbvol"),
    ],
)
def test_each_mount_is_said_for_what_it_is(mountinfo: str, path: str, kind: str, words: str) -> None:
    found = _kind(mountinfo, path)
    assert found is not None
    assert found.kind == kind
    assert words in found.said, found.said


def test_a_share_into_a_vm_names_what_it_crosses_and_a_local_bind_crosses_nothing() -> None:
    assert _kind(DESKTOP, "/grpcfuse").through == "gRPC FUSE (Docker Desktop)"
    assert _kind(DESKTOP, "/wsl-distro").through == ""
    assert _kind(PODMAN, "/host").through == ""


def test_outside_a_container_nothing_is_said_about_a_mount() -> None:
    assert _kind(PODMAN, "/host", in_container=False) is None
    mount = mount_of("/host", parse_mountinfo(PODMAN))
    assert mount is not None
    assert container.label_type(mount, in_container=False) == "ext4"
    assert container.outlives_container(mount, in_container=False)


def test_labels_put_the_kind_of_mount_before_the_filesystem() -> None:
    entries = parse_mountinfo(PODMAN)
    said = {p: container.label_type(mount_of(p, entries), True) for p in ("/host", "/vol", "/tmp", "/scratch")}
    assert said == {"/host": "bind, ext4", "/vol": "volume, ext4", "/tmp": "layer, overlay", "/scratch": "tmpfs"}


def test_what_outlives_the_container() -> None:
    entries = parse_mountinfo(PODMAN)
    outlives = {p: container.outlives_container(mount_of(p, entries), True) for p in ("/host", "/vol", "/tmp",
                                                                                      "/scratch")}  # fmt: skip
    assert outlives == {"/host": True, "/vol": True, "/tmp": False, "/scratch": False}


def _machine(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_podman_is_known_by_its_containerenv_its_variable_and_its_cgroup(tmp_path: Path) -> None:
    root = _machine(tmp_path, {"run/.containerenv": "", "proc/1/cgroup": PODMAN_CGROUP})
    found = container.detect(root, {"container": "podman"}, mountinfo=PODMAN)
    assert found == container.Container("Podman", ("/run/.containerenv", "container=podman", "/proc/1/cgroup"))
    assert found.said() == "Podman (/run/.containerenv, container=podman, /proc/1/cgroup)"


def test_docker_is_known_by_dockerenv(tmp_path: Path) -> None:
    root = _machine(tmp_path, {".dockerenv": "", "proc/1/cgroup": "0::/\n"})
    assert container.detect(root, {}, mountinfo=DOCKER) == container.Container("Docker", ("/.dockerenv",))


def test_kubernetes_by_its_cgroup_and_service_account(tmp_path: Path) -> None:
    root = _machine(tmp_path, {"proc/1/cgroup": "0::/kubepods/besteffort/pod1234/abcd\n",
                               "var/run/secrets/kubernetes.io/serviceaccount/token": "x"})  # fmt: skip
    found = container.detect(root, {}, mountinfo="")
    assert found is not None and found.engine == "Kubernetes"


def test_an_overlay_root_alone_still_says_container(tmp_path: Path) -> None:
    # cgroup v2 with a private namespace shows "0::/" and nerdctl leaves no file: the image store shows it
    root = _machine(tmp_path, {"proc/1/cgroup": "0::/\n"})
    nerdctl = DOCKER.replace("/var/lib/docker/overlay2", "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs")
    assert container.detect(root, {}, mountinfo=nerdctl) == container.Container(
        "containerd", ("an overlay root in /proc/self/mountinfo",)
    )


def test_a_host_is_no_container(tmp_path: Path) -> None:
    host = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    root = _machine(tmp_path, {"proc/1/cgroup": "0::/init.scope\n"})
    assert container.detect(root, {}, mountinfo=host) is None


def test_an_engines_file_left_in_a_machines_own_root_is_no_container(tmp_path: Path) -> None:
    # this project's CI machines are VMs made from a Docker image: /.dockerenv stayed in their ext4 root
    vm = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
    root = _machine(tmp_path, {".dockerenv": "", "proc/1/cgroup": "9:name=systemd:/\n0::/\n"})
    assert container.detect(root, {}, mountinfo=vm) is None
    # the same file with an image's overlay at /, or with the engine's variable, is a container
    assert container.detect(root, {}, mountinfo=DOCKER) == container.Container("Docker", ("/.dockerenv",))
    assert container.detect(root, {"container": "docker"}, mountinfo=vm) == container.Container(
        "Docker", ("/.dockerenv", "container=docker")
    )


def test_a_root_that_is_a_directory_of_another_filesystem_is_a_containers(tmp_path: Path) -> None:
    # Docker's vfs driver (and LXC's directory backend): / is a bind of a directory
    vfs = "600 500 254:1 /var/lib/docker/vfs/dir/0123abcd / rw,relatime - ext4 /dev/sda1 rw\n"
    root = _machine(tmp_path, {".dockerenv": ""})
    assert container.detect(root, {}, mountinfo=vfs) == container.Container("Docker", ("/.dockerenv",))
