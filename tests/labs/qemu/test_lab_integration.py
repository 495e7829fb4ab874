"""Boot the lab guest under TCG with every default mount and check the guest itself: mounts
and their options, a write on each that comes home through /results, console lines streamed,
the host processes behind each mount, a root the guest cannot write, a command's exit status
and its timeout, nothing left afterwards.

About half a minute on a 2-core machine: ~15-20 s of boot (kernel, host root, six mounts
including an ext4 mkfs and an ssh handshake), then a few seconds of commands. (fio and tree
workloads on every default mount, through `mountbench lab`: test_lab_cli.py.)
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support import listeners
from support.labhelpers import assert_all_gone, lab_root

from mountbench.labs.qemu import DEFAULT_MOUNTS, Guest, GuestError, GuestTimeout

pytestmark = [pytest.mark.lab, pytest.mark.slow]

EXPECTED_FSTYPE = {
    "9p": "9p",
    "9p-cache-loose": "9p",
    "virtiofs": "virtiofs",
    "sshfs": "fuse.sshfs",
    "disk": "ext4",
    "guest-tmpfs": "tmpfs",
}


def write_command(slug: str, path: str) -> str:
    """1 MiB written on the mount, synced, read back into /results (the host's results dir)."""
    return (
        f"echo MB-EVENT start {slug}; "
        f"head -c 1048576 /dev/urandom > {path}/mb-file && sync && sleep 0.6 && "
        f"cat {path}/mb-file > /results/{slug} && rm {path}/mb-file || exit 1; "
        f"echo MB-EVENT end {slug}"
    )


def test_default_mounts_in_the_guest(lab_ready: None, tmp_path: Path) -> None:
    results = tmp_path / "results"
    console: list[str] = []
    guest = Guest(DEFAULT_MOUNTS, accel="tcg", root=lab_root(), results_dir=results, on_console=console.append)
    with guest:
        assert guest.ready
        assert guest.lab_dir is not None
        # --- every mount is up, with its options as the guest sees them
        assert [m.slug for m in guest.mounts] == list(EXPECTED_FSTYPE)
        for m in guest.mounts:
            assert m.fstype == EXPECTED_FSTYPE[m.slug], m.proc_mounts
            assert m.proc_mounts.split()[1] == f"/mnt/{m.slug}"
        nine = guest.mount("9p").mount_options.split(",")
        assert "trans=virtio" in nine and "msize=512000" in nine and "loose" not in nine
        assert "loose" in guest.mount("9p-cache-loose").mount_options.split(",")
        assert guest.mount("disk").proc_mounts.startswith("/dev/vd")
        assert "@10.0.2.2:" in guest.mount("sshfs").proc_mounts
        assert "virtiofsd" in guest.mount("virtiofs").served_by
        # one separate empty host directory per shared mount, inside the lab dir
        for slug in ("9p", "9p-cache-loose", "virtiofs", "sshfs"):
            host = guest.host_dir(slug)
            assert host is not None and host.is_dir() and host.is_relative_to(guest.lab_dir)
        assert guest.host_dir("guest-tmpfs") is None

        # --- no other user of the host reaches what the lab listens on: QEMU's command channel (and
        # virtiofsd's sockets, until QEMU has connected) in the lab's 0700 directory, the sshfs
        # mount's sshd in the lab's own network namespace (nothing listens on its port out here)
        found = listeners.listening(guest.all_pids())
        assert any(item.command == "sshd" and item.kind.startswith("tcp") for item in found), found
        assert any(item.kind == "unix" and item.where.endswith("/control.sock") for item in found), found
        tried = listeners.attempt_as("nobody", found)
        assert all(outcome in ("ConnectionRefusedError", "PermissionError") for outcome in tried.values()), tried

        # --- a write on every mount; output streams back while the command runs
        seen: list[tuple[float, str]] = []
        script = "\n".join(write_command(m.slug, m.guest_path) for m in guest.mounts)
        rc = guest.run_in_guest(script, on_line=lambda line: seen.append((time.monotonic(), line)), timeout=240)
        assert rc == 0, "\n".join(line for _, line in seen[-30:])
        events = [line for _, line in seen if line.startswith("MB-EVENT")]
        assert events == [f"MB-EVENT {w} {m.slug}" for m in guest.mounts for w in ("start", "end")]
        # lines arrive as they come, not at the end: the first mount's start and end lines have
        # a write, a sync and a 0.6 s sleep between them, so they cannot arrive together
        arrived = {line: t for t, line in seen if line.startswith("MB-EVENT")}
        first = guest.mounts[0].slug
        assert arrived[f"MB-EVENT end {first}"] - arrived[f"MB-EVENT start {first}"] >= 0.5, "lines batched"
        assert guest.commands[-1].returncode == 0 and guest.commands[-1].seconds

        # --- the host processes behind each mount are visible for sampling (S1)
        qemu = guest.qemu_pid
        assert qemu is not None
        for m in guest.mounts:
            roles = guest.serving_processes(m.slug)
            assert roles["qemu"] == [qemu]
        assert guest.serving_processes("virtiofs")["virtiofsd"]
        assert len(guest.serving_processes("sshfs")["sshd"]) >= 2  # listener + session children

        # --- the guest cannot write the host's root, even escaping the chroot
        canary = guest.lab_dir / "root-canary"
        canary.write_text("host")
        lower = "/proc/1/root/lower"
        attack = (
            f"mount -o remount,rw {lower}; "
            f"touch {lower}{guest.lab_dir}/root-probe && echo WROTE; "
            f"rm -f {lower}{canary} && [ ! -e {lower}{canary} ] && echo REMOVED; "
            "true"
        )
        out: list[str] = []
        assert guest.run_in_guest(attack, on_line=out.append, timeout=60) == 0
        assert "WROTE" not in out and "REMOVED" not in out, out
        assert canary.read_text() == "host"
        assert not (guest.lab_dir / "root-probe").exists()

        description = guest.describe()

        # --- a command's exit status comes back; one that outlives its timeout ends the guest
        # (the teardown after it is the one every lab ends with, here with every mount's daemons)
        pids = guest.all_pids()
        lab_dir = guest.lab_dir
        assert guest.run_in_guest("exit 7") == 7
        with pytest.raises(GuestTimeout, match="did not finish within 2"):
            guest.run_in_guest("sleep 60", timeout=2)
        assert not guest.ready
        with pytest.raises(GuestError, match="not ready"):
            guest.run_in_guest("true")

    # --- everything stopped and removed; results came back through /results
    assert_all_gone(pids, lab_dir)
    assert guest.times.ready_s is not None and guest.times.first_command_s is not None
    assert description.root in ("9p", "virtiofs")
    assert description.emulated is True
    assert {p.name: p.stat().st_size for p in results.iterdir()} == {m.slug: 2**20 for m in guest.mounts}
    print(
        f"\nlab boot {guest.times.ready_s:.1f} s (root over {description.root}; "
        f"virtiofs by {guest.mount('virtiofs').extra.get('virtiofsd')} virtiofsd)"
    )
