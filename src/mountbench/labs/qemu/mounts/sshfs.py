"""sshfs: a host directory served by a private sshd (sftp-server) on the host's
loopback, mounted by the guest's sshfs over QEMU user networking (like Lima's
reverse-sshfs). Every byte is encrypted and decrypted by the guest's CPU."""

from __future__ import annotations

import os
import shlex
import shutil

from mountbench.labs.qemu.mounts.guestmount import (
    GUEST_CTL,
    HOST_FROM_GUEST,
    GuestMount,
    HostService,
    MountHost,
    MountSpec,
    MountType,
    Problem,
)
from mountbench.labs.qemu.qemu import Device
from mountbench.labs.qemu.sshd import PRIVSEP_DIR, SSHD, ssh_keygen, start_sshd

GUEST_KEY = f"{GUEST_CTL}/ssh/id_ed25519"  # the guest's private key, from the control share

# mb_sshfs SLUG PORT USER HOSTDIR KEYFILE: mount HOSTDIR from the lab's sshd. The
# key is copied to mode 600 (ssh refuses a key others can read); the handshake is
# retried, since the guest's network may still be coming up.
GUEST_HELPERS = rf"""
mb_sshfs() {{  # SLUG PORT USER HOSTDIR KEYFILE
    mkdir -p "/mnt/$1"
    install -m 600 "$5" "/run/mb/$1.key"
    for attempt in 1 2 3; do
        if out=$(sshfs -F /dev/null -p "$2" \
            -o "IdentityFile=/run/mb/$1.key,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null" \
            -o BatchMode=yes,LogLevel=ERROR,ServerAliveInterval=15,ConnectTimeout=30 \
            "$3@{HOST_FROM_GUEST}:$4" "/mnt/$1" < /dev/null 2>&1); then
            mb_record "$1"
            return
        fi
        sleep "$attempt"
    done
    mb_failed "$1" "sshfs $3@{HOST_FROM_GUEST}:$4 port $2: $out"
}}
"""


class Sshfs(MountType):
    name = "sshfs"
    shared = True
    needs_network = True
    guest_modules = ("virtio_net", "fuse")
    guest_helpers = GUEST_HELPERS
    guest_cpu_bound = "the guest's ssh encrypts and decrypts every byte"

    def prerequisites(self) -> list[Problem]:
        problems = []
        if shutil.which("sshfs") is None:
            problems.append(Problem("sshfs is missing (sshfs mounts)", "apt-get install sshfs"))
        if not SSHD.is_file():
            problems.append(Problem(f"{SSHD} is missing (sshfs mounts)", "apt-get install openssh-server"))
        if shutil.which("ssh-keygen") is None:
            problems.append(Problem("ssh-keygen is missing (sshfs mounts)", "apt-get install openssh-client"))
        if not PRIVSEP_DIR.is_dir() and os.geteuid() != 0:
            problems.append(
                Problem(
                    f"{PRIVSEP_DIR} is missing and sshd refuses to start without it", f"sudo mkdir -p {PRIVSEP_DIR}"
                )
            )
        return problems

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        mount.host_path = host.mount_dir()
        key = host.control_dir / "ssh" / "id_ed25519"  # one key for every sshfs mount of the lab
        if not key.exists():
            key.parent.mkdir()
            ssh_keygen(key, "mountbench-lab-guest")
        server = start_sshd(host.lab_dir / f"sshd-{mount.slug}", key, prefix=host.network_prefix(),
                            listening=host.listening)  # fmt: skip
        host.adopt_daemon("sshd", server.proc, server.log, stop=server.stop)
        mount.service = HostService(server.port, server.user)
        mount.served_by = (f"sshd 127.0.0.1:{server.port} (guest via {HOST_FROM_GUEST}; the lab's key only), "
                           f"{host.network_reach()}")  # fmt: skip
        return []  # the network device comes with needs_network

    def mount_command(self, mount: GuestMount) -> str:
        if mount.service is None or mount.host_path is None:
            raise ValueError("an sshfs mount needs the sshd port and a host directory")
        port, user = mount.service.port, mount.service.user or "root"
        return shlex.join(["mb_sshfs", mount.slug, str(port), user, str(mount.host_path), GUEST_KEY])

    def host_cache(self, spec: MountSpec) -> str | None:
        return "sftp-server does buffered I/O on the host"
