"""Every QEMU, virtiofsd and sshd the lab starts is stopped, and its work dir removed,
whether the lab succeeds, fails, times out or is interrupted with Ctrl-C.

The mounts used here (virtiofs + sshfs) make the lab start a virtiofsd and an
sshd before QEMU, and sshd session children once the guest mounts; each test
checks that none of them survives. About 45 s in all under TCG. (A command's timeout, with
every default mount's daemons: test_lab_integration.py, which boots a guest anyway.)
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from support.labhelpers import assert_all_gone, lab_root

from mountbench.labs.qemu import BootError, Guest, GuestMount, parse_mount_spec
from mountbench.labs.qemu.kernel import find_kernel

pytestmark = [pytest.mark.lab, pytest.mark.slow]

SPECS = [parse_mount_spec("virtiofs"), parse_mount_spec("sshfs")]


def make_guest(**kw: object) -> Guest:
    return Guest(SPECS, accel="tcg", root=lab_root(), **kw)  # type: ignore[arg-type]


def test_boot_timeout(lab_ready: None) -> None:
    guest = make_guest(boot_timeout=2)
    with pytest.raises(BootError) as info:
        guest.start()
    text = str(info.value)
    assert "did not become ready within 2 s" in text
    assert "likely cause:" in text
    assert len(guest.started_pids) >= 3  # virtiofsd (+ root virtiofsd), sshd, qemu
    assert_all_gone(guest.started_pids, guest.lab_dir)


def test_qemu_fails_to_start(lab_ready: None, tmp_path: Path) -> None:
    real = find_kernel()
    bogus = tmp_path / f"vmlinuz-{real.version}"  # right modules, unbootable image
    bogus.write_bytes(os.urandom(64 * 1024))
    guest = make_guest(kernel=bogus)
    with pytest.raises(BootError) as info, guest:
        pass
    text = str(info.value)
    assert "QEMU exited before the guest was ready" in text
    assert "likely cause: QEMU failed:" in text
    assert_all_gone(guest.started_pids, guest.lab_dir)


def test_mount_fails_in_guest(lab_ready: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import mountbench.labs.qemu.guest as guest_module

    real = guest_module.mount_command

    def broken(m: GuestMount, *args: object) -> str:
        if m.type_name == "virtiofs":  # a tag no device carries
            return f"mb_mount {m.slug} virtiofs no-such-tag rw"
        return real(m, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(guest_module, "mount_command", broken)
    guest = make_guest()
    with pytest.raises(BootError) as info, guest:
        pass
    text = str(info.value)
    assert "the guest could not mount virtiofs cache=auto: mount -t virtiofs no-such-tag" in text
    assert "sshfs" not in text.splitlines()[0]  # the other mount worked
    assert_all_gone(guest.started_pids, guest.lab_dir)


def test_ctrl_c_during_boot(lab_ready: None) -> None:
    seen: list[str] = []

    def interrupt_at_init(line: str) -> None:
        seen.append(line)
        if "MB-LAB init" in line:  # the kernel runs, the mounts are not up yet
            raise KeyboardInterrupt

    guest = make_guest(on_console=interrupt_at_init)
    with pytest.raises(KeyboardInterrupt), guest:
        pytest.fail("the guest must not become ready")
    assert "MB-LAB init" in seen[-1]
    assert_all_gone(guest.started_pids, guest.lab_dir)


def test_ctrl_c_during_command(lab_ready: None) -> None:
    pids: list[int] = []
    guest = make_guest()
    with pytest.raises(KeyboardInterrupt), guest:
        pids += guest.all_pids()  # includes sshd's session children and sftp-server
        assert len(guest.serving_processes("sshfs")["sshd"]) >= 2

        def on_line(line: str) -> None:
            if line == "running":  # a real SIGINT, as from the terminal, mid-command
                threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()

        guest.run_in_guest("echo running; sleep 60", on_line=on_line, timeout=120)
        pytest.fail("the command must have been interrupted")
    assert_all_gone(pids + guest.started_pids, guest.lab_dir)
