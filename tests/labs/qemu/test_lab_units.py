"""Lab pieces that need no guest: QEMU command lines, mount plans, console parsing,
virtiofsd flags, the initramfs archive, and reading failures."""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from mountbench.errors import ToolMissing
from mountbench.labs.qemu import AccelChoice, parse_mount_spec, probe_accel
from mountbench.labs.qemu.console import parse_line
from mountbench.labs.qemu.faults import BootError, likely_cause
from mountbench.labs.qemu.initramfs import CpioWriter, _is_static, init_script
from mountbench.labs.qemu.kernel import bzimage_version
from mountbench.labs.qemu.mounts import HostService
from mountbench.labs.qemu.mounts.guestmount import GuestMount
from mountbench.labs.qemu.mountscript import assign_slugs, mount_command, mount_script
from mountbench.labs.qemu.qemu import Disk, QemuConfig, Share9p, UserNet, VhostUserFs, kernel_cmdline, qemu_argv
from mountbench.labs.qemu.virtiofsd import Virtiofsd

pytestmark = pytest.mark.lab


def _pairs(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag]


# ----- QEMU command line -----------------------------------------------------------------


def _config(**kw: object) -> QemuConfig:
    base: dict[str, object] = {
        "kernel": Path("/boot/vmlinuz-x"),
        "initrd": Path("/cache/initramfs.cpio"),
        "control_socket": Path("/lab/sock/control.sock"),
    }
    base.update(kw)
    return QemuConfig(**base)  # type: ignore[arg-type]


def test_qemu_argv_base_tcg() -> None:
    argv = qemu_argv(_config(append=kernel_cmdline("9p")))
    assert argv[0] == "qemu-system-x86_64"
    assert "-nodefaults" in argv and "-no-reboot" in argv
    assert _pairs(argv, "-accel") == ["tcg,thread=multi"]
    assert _pairs(argv, "-cpu") == ["max"]
    assert _pairs(argv, "-smp") == ["2"]
    assert _pairs(argv, "-m") == ["1024M"]
    # vhost-user-fs needs guest RAM to be a shared memfd of the same size
    assert _pairs(argv, "-object") == ["memory-backend-memfd,id=mem,size=1024M,share=on"]
    assert _pairs(argv, "-numa") == ["node,memdev=mem"]
    assert _pairs(argv, "-kernel") == ["/boot/vmlinuz-x"]
    assert _pairs(argv, "-initrd") == ["/cache/initramfs.cpio"]
    assert _pairs(argv, "-append") == ["console=ttyS0 panic=-1 rdinit=/init mb.root=9p"]
    # ttyS0 = console on stdout, ttyS1 = control socket
    assert _pairs(argv, "-serial") == ["chardev:con", "chardev:ctl"]
    assert _pairs(argv, "-chardev") == [
        "stdio,id=con,signal=off",
        "socket,id=ctl,path=/lab/sock/control.sock,server=on,wait=off",
    ]


def test_qemu_argv_kvm_and_size() -> None:
    argv = qemu_argv(_config(accel_args=AccelChoice("kvm", "auto", "probe ok").qemu_args, cpus=4, memory_mib=2048))
    assert _pairs(argv, "-accel") == ["kvm"]
    assert _pairs(argv, "-cpu") == ["host"]
    assert _pairs(argv, "-smp") == ["4"]
    assert _pairs(argv, "-m") == ["2048M"]
    assert "memory-backend-memfd,id=mem,size=2048M,share=on" in argv


def test_qemu_argv_devices() -> None:
    devices = (
        Share9p("mbroot", Path("/"), "passthrough", readonly=True, multidevs_remap=True),
        Share9p("mb0", Path("/lab/mounts/9p"), "mapped-xattr"),
        VhostUserFs("mb1", Path("/lab/sock/virtiofs-mb1.sock")),
        Disk(Path("/lab/images/disk,1.qcow2"), "mbdisk2", "qcow2", "writeback"),
        UserNet(),
    )
    argv = qemu_argv(_config(devices=devices, append=kernel_cmdline("virtiofs", net=True)))
    assert _pairs(argv, "-fsdev") == [
        "local,id=fs0,path=/,security_model=passthrough,readonly=on,multidevs=remap",
        "local,id=fs1,path=/lab/mounts/9p,security_model=mapped-xattr",
    ]
    assert _pairs(argv, "-device") == [
        "virtio-9p-pci,fsdev=fs0,mount_tag=mbroot",
        "virtio-9p-pci,fsdev=fs1,mount_tag=mb0",
        "vhost-user-fs-pci,chardev=vfs2,tag=mb1,queue-size=1024",
        "virtio-blk-pci,drive=disk3,serial=mbdisk2",
        "virtio-net-pci,netdev=net4",
    ]
    assert "socket,id=vfs2,path=/lab/sock/virtiofs-mb1.sock" in _pairs(argv, "-chardev")
    # a comma in a path is doubled, as QEMU's option syntax wants
    assert _pairs(argv, "-drive") == ["file=/lab/images/disk,,1.qcow2,if=none,id=disk3,format=qcow2,cache=writeback"]
    assert _pairs(argv, "-netdev") == ["user,id=net4"]
    assert _pairs(argv, "-append") == ["console=ttyS0 panic=-1 rdinit=/init mb.root=virtiofs mb.net=1"]


def test_accel_choice() -> None:
    tcg = probe_accel("tcg")
    assert tcg.accel == "tcg" and tcg.emulated and tcg.caveat
    assert tcg.qemu_args == ("-accel", "tcg,thread=multi", "-cpu", "max")
    assert AccelChoice("kvm", "kvm", "asked").caveat is None
    with pytest.raises(Exception, match="not valid"):
        probe_accel("xen")


# ----- mount plan and guest script -------------------------------------------------------


def test_slugs_are_unique() -> None:
    specs = [parse_mount_spec(t) for t in ("9p", "9p:cache=none", "9p:cache=loose", "9p")]
    assert [slug for _, slug in assign_slugs(specs)] == ["9p", "9p-2", "9p-cache-loose", "9p-3"]


def test_mount_commands() -> None:
    nine = GuestMount(parse_mount_spec("9p:cache=loose,msize=65536"), "9p-x", "mb0", Path("/lab/m/9p x"))
    assert mount_command(nine) == ("mb_mount 9p-x 9p mb0 trans=virtio,version=9p2000.L,cache=loose,msize=65536")
    vfs = GuestMount(parse_mount_spec("virtiofs"), "virtiofs", "mb1", Path("/lab/m/v"))
    assert mount_command(vfs) == "mb_mount virtiofs virtiofs mb1 rw"
    disk = GuestMount(parse_mount_spec("disk"), "disk", "mbdisk2", Path("/lab/images/disk.img"))
    assert mount_command(disk) == "mb_disk disk mbdisk2"
    ssh = GuestMount(parse_mount_spec("sshfs"), "sshfs", "mb3", Path("/lab/m/ss h"))
    with pytest.raises(ValueError):
        mount_command(ssh)  # no sshd yet
    ssh.service = HostService(2222, "root")
    assert mount_command(ssh) == ("mb_sshfs sshfs 2222 root '/lab/m/ss h' /run/mbctl/ssh/id_ed25519")
    tmp = GuestMount(parse_mount_spec("guest-tmpfs:size=256M"), "guest-tmpfs", "tmpfs")
    assert mount_command(tmp) == "mb_mount guest-tmpfs tmpfs tmpfs mode=1777,size=256M"
    assert tmp.guest_path == "/mnt/guest-tmpfs"
    script = mount_script([mount_command(vfs), mount_command(disk)])
    assert script.splitlines()[1:] == ["mb_mount virtiofs virtiofs mb1 rw", "mb_disk disk mbdisk2"]


def test_lab_mount_reads_proc_mounts() -> None:
    m = GuestMount(parse_mount_spec("9p:cache=loose"), "9p-cache-loose", "mb1")
    m.proc_mounts = "mb1 /mnt/9p-cache-loose 9p rw,dirsync,relatime,loose,access=client,msize=512000,trans=virtio 0 0"
    assert m.fstype == "9p"
    assert "loose" in m.mount_options.split(",")
    assert m.label == "9p cache=loose msize=512000"


@pytest.mark.parametrize("shell", ["sh", "busybox"])
def test_init_script_parses(shell: str, tmp_path: Path) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    script = tmp_path / "init.sh"
    script.write_bytes(init_script())
    args = [shell, "-n", str(script)] if shell == "sh" else [shell, "sh", "-n", str(script)]
    subprocess.run(args, check=True)


# ----- console ---------------------------------------------------------------------------


def test_console_markers() -> None:
    plain = parse_line(1.0, "[    1.2] virtio_blk virtio6: [vda] 8388608 512-byte logical blocks")
    assert plain.event is None and plain.text.startswith("[")
    ready = parse_line(2.0, "MB-LAB ready 5.85")
    assert (ready.event, ready.args, ready.text) == ("ready", "5.85", "")
    glued = parse_line(3.0, "no newline at the endMB-LAB done c1-ab 0")
    assert (glued.event, glued.args, glued.text) == ("done", "c1-ab 0", "no newline at the end")
    other = parse_line(4.0, "MB-EVENT start fio")
    assert other.event is None


# ----- virtiofsd -------------------------------------------------------------------------


def test_virtiofsd_argv_rust() -> None:
    d = Virtiofsd(Path("/usr/bin/virtiofsd"), "rust", "1.14.0")
    argv = d.argv(Path("/s.sock"), Path("/"), cache="always", readonly=True, sandbox="none", announce_submounts=False)
    assert argv == [
        "/usr/bin/virtiofsd",
        "--socket-path=/s.sock",
        "--shared-dir=/",
        "--cache=always",
        "--readonly",
        "--sandbox=none",
        "--no-announce-submounts",
    ]
    argv = d.argv(Path("/s"), Path("/d"), cache="never", thread_pool_size=4, direct_io=True)
    assert "--cache=never" in argv and "--thread-pool-size=4" in argv and "--allow-direct-io" in argv


def test_virtiofsd_argv_qemu() -> None:
    d = Virtiofsd(Path("/usr/lib/qemu/virtiofsd"), "qemu", "7.2.22")
    argv = d.argv(Path("/s.sock"), Path("/d"), cache="never", thread_pool_size=2, direct_io=True)
    assert argv == [
        "/usr/lib/qemu/virtiofsd",
        "--socket-path=/s.sock",
        "-o",
        "source=/d",
        "-o",
        "cache=none",  # the C daemon's word for never
        "--thread-pool-size=2",
        "-o",
        "allow_direct_io",
    ]
    with pytest.raises(ToolMissing, match="no read-only mode"):
        d.argv(Path("/s"), Path("/"), readonly=True)
    assert "rust virtiofsd 1.14.0" in Virtiofsd(Path("/x"), "rust", "1.14.0").description


# ----- initramfs, kernel -----------------------------------------------------------------


def _read_cpio(data: bytes) -> dict[str, tuple[int, bytes]]:
    entries: dict[str, tuple[int, bytes]] = {}
    pos = 0
    while True:
        assert data[pos : pos + 6] == b"070701"
        fields = [int(data[pos + 6 + 8 * i : pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name_start = pos + 110
        name = data[name_start : name_start + namesize - 1].decode()
        body = name_start + namesize + (-(110 + namesize) % 4)
        if name == "TRAILER!!!":
            return entries
        entries[name] = (mode, data[body : body + size])
        pos = body + size + (-size % 4)


def test_cpio_writer_roundtrip() -> None:
    buf = io.BytesIO()
    cpio = CpioWriter(buf)
    cpio.directory("bin")
    cpio.file("bin/busybox", b"\x7fELF123", 0o755)
    cpio.symlink("bin/sh", "busybox")
    cpio.chardev("dev/console", 5, 1)
    cpio.file("init", b"#!/bin/sh\n", 0o755)
    cpio.finish()
    data = buf.getvalue()
    assert len(data) % 4 == 0
    entries = _read_cpio(data)
    assert stat.S_ISDIR(entries["bin"][0])
    assert entries["bin/busybox"] == (stat.S_IFREG | 0o755, b"\x7fELF123")
    assert stat.S_ISLNK(entries["bin/sh"][0]) and entries["bin/sh"][1] == b"busybox"
    assert stat.S_ISCHR(entries["dev/console"][0])
    if shutil.which("cpio"):
        listing = subprocess.run(["cpio", "-t"], input=data, capture_output=True, check=True)
        assert b"bin/busybox" in listing.stdout


def test_static_detection() -> None:
    busybox = Path("/bin/busybox")
    if busybox.exists():
        assert _is_static(busybox)
    python = Path(shutil.which("python3") or "/usr/bin/python3")
    assert not _is_static(python.resolve())


def test_bzimage_version() -> None:
    readable = [p for p in sorted(Path("/boot").glob("vmlinuz-*")) if os.access(p, os.R_OK)]
    if not readable:
        pytest.skip("no readable kernel image in /boot")
    image = readable[-1]
    assert bzimage_version(image) == image.name.removeprefix("vmlinuz-")
    assert bzimage_version(Path(__file__)) is None


# ----- failures --------------------------------------------------------------------------


def test_likely_cause() -> None:
    assert "use --accel tcg" in likely_cause([], accel="kvm", root="9p")
    assert "did not start" in likely_cause([], accel="tcg", root="9p")
    assert "could not mount the host root over 9p" in likely_cause(["x"], accel="tcg", root="9p", events=["init"])
    assert "virtiofsd" in likely_cause(
        ["MB-LAB fatal cannot mount the host root over virtiofs"], accel="tcg", root="virtiofs", events=["fatal"]
    )
    assert "no working /init" in likely_cause(["Failed to execute /init (error -40)"], accel="tcg", root="9p")
    assert "modules do not match" in likely_cause(["MB-LAB warn insmod ext4 failed"], accel="tcg", root="9p")
    assert "QEMU failed: boom" in likely_cause(["x"], accel="tcg", root="9p", qemu_log="a\nboom\n")
    err = BootError("no boot", ["line 1", "line 2"])
    assert "no boot" in str(err) and "| line 2" in str(err)
    assert err.console_tail == ["line 1", "line 2"]


def test_probe_accel_auto_falls_back_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mountbench.labs.qemu.accel as accel
    from mountbench.labs.qemu.kernel import Kernel

    kernel = Kernel(tmp_path / "vmlinuz-9.9", "9.9", tmp_path)
    calls: list[float] = []
    reached = [False]

    def fake_probe(k: Kernel, initrd: Path, timeout: float, qemu: str) -> tuple[bool, float, str]:
        calls.append(timeout)
        return reached[0], 0.5 if reached[0] else timeout, "Booting the kernel."

    monkeypatch.setattr(accel, "kvm_usable", lambda: (True, ""))
    monkeypatch.setattr(accel, "probe_kvm_boot", fake_probe)
    monkeypatch.setattr(accel, "build_initramfs", lambda k: tmp_path / "initrd")
    monkeypatch.setattr(accel, "lab_cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(accel.shutil, "which", lambda name: "/usr/bin/" + name)

    choice = accel.probe_accel("auto", kernel, timeout=3)
    assert choice.accel == "tcg" and choice.emulated
    assert "did not reach init within 3 s" in choice.reason and "PVM" in choice.reason
    assert "Booting the kernel." in choice.reason
    again = accel.probe_accel("auto", kernel, timeout=3)
    assert again == choice and len(calls) == 1  # cached: no second probe boot

    reached[0] = True
    fresh = accel.probe_accel("auto", kernel, timeout=3, use_cache=False)
    assert fresh.accel == "kvm" and fresh.qemu_args == ("-accel", "kvm", "-cpu", "host")
    assert accel.probe_accel("kvm", kernel).accel == "kvm"

    monkeypatch.setattr(accel, "kvm_usable", lambda: (False, "/dev/kvm does not exist"))
    assert accel.probe_accel("auto", kernel, use_cache=False).reason == "TCG: /dev/kvm does not exist"
    with pytest.raises(ToolMissing, match="--accel kvm: /dev/kvm does not exist"):
        accel.probe_accel("kvm", kernel)


def test_sweep_stale_lab_dirs(tmp_path: Path) -> None:
    import psutil

    from mountbench.labs.qemu.guest import OWNER_FILE, sweep_stale_guest_dirs

    dead = subprocess.Popen(["true"])
    dead.wait()
    me = psutil.Process()
    owners = {
        "mountbench-lab-dead": f"{dead.pid} 1.0 remove",
        "mountbench-lab-kept": f"{dead.pid} 1.0 keep",
        "mountbench-lab-alive": f"{me.pid} {me.create_time()} remove",
        "mountbench-lab-reused": f"{me.pid} 12345.0 remove",  # same pid, another process
        "mountbench-lab-starting": None,  # no owner file yet
        "unrelated-dir": f"{dead.pid} 1.0 remove",
    }
    for name, owner in owners.items():
        (tmp_path / name).mkdir()
        if owner is not None:
            (tmp_path / name / OWNER_FILE).write_text(owner + "\n")
    removed = sweep_stale_guest_dirs(tmp_path)
    assert sorted(p.name for p in removed) == ["mountbench-lab-dead", "mountbench-lab-reused"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "mountbench-lab-alive",
        "mountbench-lab-kept",
        "mountbench-lab-starting",
        "unrelated-dir",
    ]


def test_the_labs_own_network_namespace_holds_its_servers_and_goes_with_it(tmp_path: Path) -> None:
    """A server started with the namespace's prefix listens there (seen from /proc) and nothing
    outside reaches it; closing the holder ends the namespace with it."""
    import socket
    import sys

    from mountbench.labs import netns

    if netns.why_not():
        pytest.skip(netns.why_not())
    net = netns.private_network(tmp_path / "netns.log")
    server = None
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        script = f"import socket,time; s=socket.create_server(('127.0.0.1', {port})); time.sleep(60)"
        server = subprocess.Popen(net.argv([sys.executable, "-c", script]))
        deadline = time.monotonic() + 20
        while not net.listening(port):
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.05)
        assert os.readlink(f"/proc/{server.pid}/ns/net") == os.readlink(net.path)  # nsenter exec'd it
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2)
    finally:
        if server is not None:
            server.kill()
            server.wait()
        net.close()
    assert net.holder.poll() is not None
