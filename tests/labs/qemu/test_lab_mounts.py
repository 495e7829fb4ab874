"""The QEMU lab's mount types, one registry: each mount type's options, labels, guest mount line,
kernel modules, shell helpers and caveats (the parts that need no guest)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from mountbench import model
from mountbench.errors import UsageError
from mountbench.labs.frame import Problem, variant_problems
from mountbench.labs.qemu import MOUNT_TYPES, MountType, parse_mount_spec
from mountbench.labs.qemu.accel import EMULATED_TEXT, AccelChoice
from mountbench.labs.qemu.caveats import EMULATED_GUEST_CPU, emulation_caveat, host_cache_caveat
from mountbench.labs.qemu.initramfs import init_script
from mountbench.labs.qemu.kernel import ROOT_MODULES, wanted_modules
from mountbench.labs.qemu.mounts import HostService, MountHost, Option, guest_modules
from mountbench.labs.qemu.mounts.guestmount import GuestMount
from mountbench.labs.qemu.mountscript import mount_command, mount_script
from mountbench.labs.qemu.qemu import Device

pytestmark = pytest.mark.lab

SRC = Path(__file__).resolve().parents[2] / "src" / "mountbench"


def lab_mount(text: str, slug: str | None = None, tag: str = "mb0", host_path: str | None = None) -> GuestMount:
    spec = parse_mount_spec(text)
    return GuestMount(spec, slug or spec.slug, tag, Path(host_path) if host_path else None)


# ----- the registry ----------------------------------------------------------------------


def test_registry_lists_every_mount_type_once_in_order() -> None:
    assert list(MOUNT_TYPES) == ["9p", "virtiofs", "sshfs", "nfs", "disk", "guest-tmpfs"]
    assert all(mount_type.name == name for name, mount_type in MOUNT_TYPES.items())
    assert all(parse_mount_spec(name).mount_type is mount_type for name, mount_type in MOUNT_TYPES.items())


def test_only_lab_mounts_name_a_mount_type() -> None:
    """Adding a mount type is one module and one registry line: no other code decides by its name."""
    names = "|".join(re.escape(n) for n in MOUNT_TYPES)
    decides = re.compile(
        rf"""type_name\s*(==|!=)\s*["']({names})["']|type_name\s+(not\s+)?in\s*[(\[{{][^)\]}}]*["']({names})["']"""
    )
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.parent.name == "mounts" and path.parent.parent.name == "qemu":
            continue  # the mount types themselves
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if decides.search(line):
                offenders.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert not offenders, offenders


def test_guest_modules_come_from_the_mount_types() -> None:
    assert guest_modules([MOUNT_TYPES["9p"]]) == ("9pnet_virtio", "9p")
    assert guest_modules([MOUNT_TYPES["sshfs"], MOUNT_TYPES["virtiofs"]]) == ("virtio_net", "fuse", "virtiofs")
    every = wanted_modules()
    assert every[: len(ROOT_MODULES)] == ROOT_MODULES  # the root's first
    for mount_type in MOUNT_TYPES.values():
        assert set(mount_type.guest_modules) <= set(every), mount_type.name
    assert len(every) == len(set(every))
    disk = MOUNT_TYPES["disk"].guest_modules
    assert disk.index("crc32c_generic") < disk.index("ext4")  # ext4's checksums need it loaded first


def test_mount_type_prerequisites_are_problems_with_their_fix() -> None:
    for problem in variant_problems(MOUNT_TYPES):
        assert problem.what and problem.fix and "\n" not in problem.what + problem.fix and not problem.optional


class _Loopback(MountType):
    """A mount type like the coming NFS one: its own daemon on the host's loopback, reached
    by the guest over user networking, with an option and a guest-side helper."""

    name = "loopfs"
    options: ClassVar[Mapping[str, Option]] = {
        "vers": Option(("3", "4.2"), default="4.2", core=True),
        "rsize": Option(type="size", minimum=4096),
    }
    needs_network = True
    guest_modules = ("virtio_net", "nfsv4")
    guest_helpers = 'mb_loopfs() {  # SLUG ADDR PORT\n    mb_failed "$1" unreachable\n}\n'
    guest_cpu_bound = "it checksums every block in the guest"

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        raise NotImplementedError  # the boot tests cover real daemons (sshd, virtiofsd)

    def mount_command(self, mount: GuestMount) -> str:
        assert mount.service is not None
        return f"mb_loopfs {mount.slug} 10.0.2.2 {mount.service.port}"


def test_a_new_mount_type_needs_only_its_module_and_a_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import mountbench.labs.qemu.mounts as registry

    monkeypatch.setitem(registry.MOUNT_TYPES, "loopfs", _Loopback())
    spec = parse_mount_spec("loopfs:rsize=1M")
    assert (spec.label, spec.slug, spec.spec_text) == (
        "loopfs vers=4.2 rsize=1M",
        "loopfs-rsize-1m",
        "loopfs:vers=4.2,rsize=1M",
    )
    with pytest.raises(UsageError, match=re.escape("use vers=3|4.2")):
        parse_mount_spec("loopfs:vers=2")
    mount = GuestMount(spec, spec.slug, "mb0", service=HostService(20490))
    assert mount_command(mount) == "mb_loopfs loopfs-rsize-1m 10.0.2.2 20490"
    assert "nfsv4" in wanted_modules()
    assert emulation_caveat(spec, emulated=True).code == EMULATED_GUEST_CPU  # type: ignore[union-attr]
    assert host_cache_caveat(spec) is None


# ----- each mount type -------------------------------------------------------------------------


def test_9p() -> None:
    mount_type = MOUNT_TYPES["9p"]
    assert list(mount_type.options) == ["cache", "msize", "security_model"]
    assert [n for n, o in mount_type.options.items() if o.core] == ["cache", "msize"]
    assert parse_mount_spec("9p").options == (
        ("cache", "none"),
        ("msize", "512000"),
        ("security_model", "mapped-xattr"),
    )
    m = lab_mount("9p:cache=mmap,security_model=none", tag="mb4")
    assert m.label == "9p cache=mmap msize=512000 security_model=none"
    assert (
        mount_command(m)
        == "mb_mount 9p-cache-mmap-security-model-none 9p mb4 trans=virtio,version=9p2000.L,cache=mmap,msize=512000"
    )
    assert not mount_type.needs_network and mount_type.guest_cpu_bound is None and not mount_type.reference
    assert "without O_DIRECT" in (mount_type.host_cache(m.spec) or "")


def test_virtiofs() -> None:
    mount_type = MOUNT_TYPES["virtiofs"]
    assert list(mount_type.options) == ["cache", "thread_pool_size", "direct_io", "daemon"]
    assert parse_mount_spec("virtiofs").get("thread_pool_size") is None  # no default: the daemon's own
    m = lab_mount("virtiofs:cache=never,daemon=qemu", tag="mb2")
    assert m.label == "virtiofs cache=never daemon=qemu"
    assert mount_command(m) == "mb_mount virtiofs-cache-never-daemon-qemu virtiofs mb2 rw"
    assert "unless direct_io=on" in (mount_type.host_cache(m.spec) or "")
    assert mount_type.host_cache(parse_mount_spec("virtiofs:direct_io=on")) is None
    assert mount_type.guest_cpu_bound is None and not mount_type.needs_network


def test_sshfs() -> None:
    mount_type = MOUNT_TYPES["sshfs"]
    assert dict(mount_type.options) == {}
    assert mount_type.needs_network and "virtio_net" in mount_type.guest_modules
    assert mount_type.guest_cpu_bound and "encrypt" in mount_type.guest_cpu_bound
    m = lab_mount("sshfs", host_path="/lab/mounts/sshfs")
    with pytest.raises(ValueError, match="sshd port"):
        mount_command(m)
    m.service = HostService(40123, "mb")
    assert mount_command(m) == "mb_sshfs sshfs 40123 mb /lab/mounts/sshfs /run/mbctl/ssh/id_ed25519"
    assert "buffered" in (mount_type.host_cache(m.spec) or "")
    assert "mb_sshfs()" in mount_type.guest_helpers and "10.0.2.2" in mount_type.guest_helpers


def test_nfs_options_and_labels() -> None:
    mount_type = MOUNT_TYPES["nfs"]
    assert list(mount_type.options) == ["vers", "rsize", "wsize", "writes", "actimeo"]
    assert [n for n, o in mount_type.options.items() if o.core] == ["vers"]
    plain = parse_mount_spec("nfs")
    assert (plain.label, plain.slug) == ("nfs vers=4.1", "nfs")
    assert plain.get("rsize") is None and plain.get("actimeo") is None  # the client's own defaults
    tuned = parse_mount_spec("nfs:actimeo=0,wsize=1M,rsize=64k,writes=sync,vers=3")
    assert tuned.label == "nfs vers=3 rsize=64K wsize=1M writes=sync actimeo=0"
    assert tuned.slug == "nfs-vers-3-rsize-64k-wsize-1m-writes-sync-actimeo-0"
    assert parse_mount_spec(tuned.spec_text) == tuned
    for text, needle in (
        ("nfs:vers=4", "use vers=4.1|3"),
        ("nfs:rsize=1k", "rsize=1k is too small; use at least 4K"),
        ("nfs:wsize=2M", "wsize=2M is too large; use at most 1M"),
        ("nfs:writes=direct", "use writes=async|sync"),
        ("nfs:actimeo=soon", "actimeo=soon is not a whole number"),
    ):
        with pytest.raises(UsageError, match=re.escape(needle)):
            parse_mount_spec(text)


def test_nfs_mount_command() -> None:
    """v4.1: one port, the export's pseudo path; v3: the MOUNT port too, nolock (no NLM in the
    lab); the spec's options in the kernel's words (sizes in bytes), with mount -i."""
    mount_type = MOUNT_TYPES["nfs"]
    v4 = lab_mount("nfs:actimeo=0", host_path="/lab/mounts/nfs")
    with pytest.raises(ValueError, match="server's port"):
        mount_command(v4)
    v4.service = HostService(40111)
    v4.extra["nfs_export"] = "/mb/export"
    assert mount_command(v4) == (
        "mb_nfs nfs-actimeo-0 nfs4 10.0.2.2:/mb/export vers=4.1,proto=tcp,addr=10.0.2.2,port=40111,actimeo=0"
    )
    v3 = lab_mount("nfs:vers=3,rsize=64k,writes=sync", host_path="/lab/mounts/nfs-vers-3")
    v3.service = HostService(40112)
    v3.extra["nfs_mount_port"] = "40113"
    assert mount_command(v3) == (
        "mb_nfs nfs-vers-3-rsize-64k-writes-sync nfs 10.0.2.2:/lab/mounts/nfs-vers-3 "
        "vers=3,proto=tcp,addr=10.0.2.2,port=40112,mountaddr=10.0.2.2,mountport=40113,mountproto=tcp,nolock,"
        "rsize=65536,sync"
    )
    assert mount_type.needs_network and {"virtio_net", "nfsv4", "nfsv3"} <= set(mount_type.guest_modules)
    assert "mb_nfs()" in mount_type.guest_helpers and "mount -i" in mount_type.guest_helpers
    assert "buffered" in (mount_type.host_cache(v4.spec) or "")
    assert mount_type.guest_cpu_bound is None and not mount_type.reference


def test_nfs_guest_modules_resolve_to_plain_modules() -> None:
    """The guest kernel's NFS client and its dependencies, loadable by busybox insmod."""
    from mountbench.errors import MountbenchError
    from mountbench.labs.qemu.kernel import find_kernel, resolve_modules

    try:
        kernel = find_kernel()
    except MountbenchError as exc:
        pytest.skip(str(exc))
    names = [m.name for m in resolve_modules(kernel, MOUNT_TYPES["nfs"].guest_modules)]
    for needed in ("sunrpc", "lockd", "nfs", "nfsv4", "nfsv3"):
        assert needed in names
    assert names.index("sunrpc") < names.index("nfs") < names.index("nfsv4")


def test_ganesha_config() -> None:
    from mountbench.labs.qemu.ganesha import GaneshaConfig, ganesha_argv

    v4 = GaneshaConfig(Path("/lab/mounts/nfs"), 40111, Path("/lab/ganesha-nfs/recovery"))
    text = v4.text()
    assert "Protocols = 4;" in text and "NFS_Port = 40111;" in text and "MNT_Port" not in text
    assert "Bind_addr = 127.0.0.1;" in text and "Path = /lab/mounts/nfs;" in text
    assert "RecoveryRoot = /lab/ganesha-nfs/recovery;" in text  # nothing written to /var/lib/nfs
    assert "Active_krb5 = false;" in text and "Only_Numeric_Owners = true;" in text
    assert text.count("{") == text.count("}")
    v3 = GaneshaConfig(Path("/x"), 1, Path("/r"), v3=True, mount_port=2)
    assert "Protocols = 3, 4;" in v3.text() and "MNT_Port = 2;" in v3.text()
    with pytest.raises(ValueError, match="MOUNT port"):
        GaneshaConfig(Path("/x"), 1, Path("/r"), v3=True).text()
    argv = ganesha_argv("/usr/bin/ganesha.nfsd", Path("/c"), Path("/l"), Path("/p"))
    assert argv[:2] == ["/usr/bin/ganesha.nfsd", "-F"]  # foreground: the lab owns its process


def test_nfs_prerequisites_name_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    import mountbench.labs.qemu.mounts.nfs as nfs_module

    monkeypatch.setattr(nfs_module, "find_ganesha", lambda: None)
    monkeypatch.setattr(nfs_module, "find_vfs_fsal", lambda: None)
    problems = {p.what: p.fix for p in MOUNT_TYPES["nfs"].prerequisites()}
    assert problems["nfs-ganesha is missing (nfs mounts)"] == "apt-get install nfs-ganesha nfs-ganesha-vfs"
    assert problems["nfs-ganesha's VFS backend is missing (nfs mounts)"] == "apt-get install nfs-ganesha-vfs"
    assert Problem("nfs-ganesha is missing (nfs mounts)", "apt-get install nfs-ganesha nfs-ganesha-vfs") in (
        variant_problems(MOUNT_TYPES)
    )
    assert not [p for p in variant_problems(MOUNT_TYPES, ["9p"]) if "nfs" in p.what]  # a 9p-only lab needs none


def test_disk() -> None:
    mount_type = MOUNT_TYPES["disk"]
    assert [n for n, o in mount_type.options.items() if o.core] == ["format", "cache", "size"]
    assert mount_type.option_problem({"preallocation": "full"}) is not None
    assert mount_type.option_problem({"preallocation": "full", "format": "qcow2"}) is None
    assert "preallocation" not in mount_type.defaults({})
    assert mount_type.defaults({"format": "qcow2"})["preallocation"] == "off"
    m = lab_mount("disk:cache=writeback", tag="mbdisk3")
    assert mount_command(m) == "mb_disk disk-cache-writeback mbdisk3"
    assert mount_type.host_cache(m.spec) == "the image is opened with cache=writeback"
    for cache in ("none", "directsync"):
        assert mount_type.host_cache(parse_mount_spec(f"disk:cache={cache}")) is None
    assert "mb_disk()" in mount_type.guest_helpers and "ext4" in mount_type.guest_modules


def test_guest_tmpfs() -> None:
    mount_type = MOUNT_TYPES["guest-tmpfs"]
    assert mount_type.reference  # the lab's default baseline
    assert mount_command(lab_mount("guest-tmpfs", tag="tmpfs")) == "mb_mount guest-tmpfs tmpfs tmpfs mode=1777"
    sized = lab_mount("guest-tmpfs:size=64M", tag="tmpfs")
    assert mount_command(sized) == "mb_mount guest-tmpfs-size-64m tmpfs tmpfs mode=1777,size=64M"
    assert mount_type.host_cache(sized.spec) is None and mount_type.guest_cpu_bound is None


@pytest.mark.parametrize("shell", ["sh", "busybox"])
def test_mount_script_with_every_mount_types_helpers_parses(shell: str, tmp_path: Path) -> None:
    """mounts.sh is sourced by init.sh's stage 2 (the host's sh; busybox ash before the chroot)."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    helpers = [mount_type.guest_helpers for mount_type in MOUNT_TYPES.values()]
    commands = [f"mb_disk disk mbdisk{i}" for i in range(2)]
    script = mount_script(commands, helpers + helpers)
    assert script.count("mb_disk() {") == 1  # each mount type's helpers once, however many mounts use it
    assert script.splitlines()[-2:] == commands
    path = tmp_path / "mounts.sh"
    path.write_bytes(init_script() + b"\n" + script.encode())
    args = [shell, "-n", str(path)] if shell == "sh" else [shell, "sh", "-n", str(path)]
    subprocess.run(args, check=True)


# ----- caveats ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MOUNT_TYPES))
def test_no_emulation_caveat_under_kvm(name: str) -> None:
    assert emulation_caveat(parse_mount_spec(name), emulated=False) is None


@pytest.mark.parametrize("name", [n for n, k in MOUNT_TYPES.items() if k.guest_cpu_bound])
def test_guest_cpu_bound_mount_types_are_not_ranked_under_tcg(name: str) -> None:
    caveat = emulation_caveat(parse_mount_spec(name), emulated=True)
    assert caveat is not None and caveat.code == EMULATED_GUEST_CPU
    assert caveat.text.startswith("guest emulated")
    assert "order against other mounts is not meaningful" in caveat.text
    assert MOUNT_TYPES[name].guest_cpu_bound in caveat.text  # says why
    assert "still informs" not in caveat.text


GUEST_CACHED = ["9p:cache=loose", "9p:cache=mmap", "virtiofs", "virtiofs:cache=always"]


@pytest.mark.parametrize("name", GUEST_CACHED)
def test_cache_values_through_the_guests_page_cache_are_not_ranked_under_tcg(name: str) -> None:
    """bench/studies_lab.py: under TCG the guest page cache's copies are emulated, so 9p cache=loose
    wrote slower than no cache (study S3: 6.6x faster) and virtiofs read slower than 9p."""
    caveat = emulation_caveat(parse_mount_spec(name), emulated=True)
    assert caveat is not None and caveat.code == EMULATED_GUEST_CPU
    assert "page cache in the data path" in caveat.text and "study S3" in caveat.text


@pytest.mark.parametrize(
    "name", [n for n, k in MOUNT_TYPES.items() if not k.guest_cpu_bound and n != "virtiofs"] + ["virtiofs:cache=never"]
)
def test_other_mount_types_keep_a_modest_emulation_caveat(name: str) -> None:
    caveat = emulation_caveat(parse_mount_spec(name), emulated=True)
    assert caveat == model.Caveat(model.EMULATED, EMULATED_TEXT)
    assert "still informs" not in caveat.text and "guest CPU" in caveat.text and "guest.cpu_s" in caveat.text


def test_sshfs_is_the_guest_cpu_bound_mount_type() -> None:
    assert [n for n, k in MOUNT_TYPES.items() if k.guest_cpu_bound] == ["sshfs"]


def test_accel_choice_caveat_is_the_general_one() -> None:
    assert AccelChoice("tcg", "tcg", "asked").caveat == EMULATED_TEXT
    assert AccelChoice("kvm", "kvm", "asked").caveat is None


@pytest.mark.parametrize(
    ("text", "cached"),
    [
        ("9p", True),
        ("9p:cache=loose", True),
        ("virtiofs", True),
        ("virtiofs:direct_io=on", False),
        ("sshfs", True),
        ("disk", False),
        ("disk:cache=directsync", False),
        ("disk:cache=unsafe", True),
        ("guest-tmpfs", False),
    ],
)
def test_host_cache_caveat(text: str, cached: bool) -> None:
    caveat = host_cache_caveat(parse_mount_spec(text))
    assert (caveat is not None) == cached
    if caveat is not None:
        assert caveat.code == model.HOST_CACHE and caveat.text.startswith("the host's page cache may serve these: ")
