"""Real sshd instances inside network namespaces (support/netns.py), key-based, for
`run --client ssh://…`. Everything lives in one test directory: a user key, one host key
per namespace, a known_hosts file and an ssh config naming each namespace ``nsN``, which
mountbench is pointed at with $MOUNTBENCH_SSH_CONFIG (the user's ~/.ssh is never read or
touched). Each sshd runs in the foreground (-D) in its own process group and is stopped,
with every session it started, when the namespace goes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from support.netns import NetNs, _wait_port
from support.realmounts import Unavailable

SSHD = "/usr/sbin/sshd"


@dataclass
class Sshd:
    ns: NetNs
    name: str  # the Host name in the ssh config: "ns1"
    proc: subprocess.Popen
    config: Path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def sessions(self) -> list[int]:
        """Every process below this sshd (its sessions and what they started)."""
        import psutil

        with suppress(psutil.NoSuchProcess):
            return [p.pid for p in psutil.Process(self.proc.pid).children(recursive=True)]
        return []

    def kill(self) -> None:
        """The sshd and everything started through it (sessions, shells, fio), at once."""
        import psutil

        victims = []
        with suppress(psutil.NoSuchProcess):
            victims = psutil.Process(self.proc.pid).children(recursive=True)
        for victim in victims:
            with suppress(psutil.NoSuchProcess):
                victim.kill()
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for victim in victims:  # fio's server forks into the background of the session
            with suppress(psutil.NoSuchProcess):
                victim.kill()


@dataclass
class SshSetup:
    directory: Path
    config: Path  # the ssh client config: point MOUNTBENCH_SSH_CONFIG here
    servers: list[Sshd]

    @property
    def args(self) -> list[str]:
        return [f"--client=ssh://{s.name}" for s in self.servers]


def require_tools() -> None:
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            raise Unavailable(f"{tool} is not installed (apt-get install openssh-client)")
    if not Path(SSHD).exists():
        raise Unavailable("sshd is not installed (apt-get install openssh-server)")


def keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, timeout=30)
    return path.with_suffix(".pub").read_text().strip()


def setup(directory: Path, namespaces: list[NetNs], extra_env: dict[int, dict[str, str]] | None = None) -> SshSetup:
    """One sshd in each namespace (``extra_env[i]``: what the i-th one's sessions get, via
    sshd's SetEnv), keys and an ssh config for them all."""
    require_tools()
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    directory.mkdir(parents=True, exist_ok=True)
    user_key = directory / "id_ed25519"
    public = keygen(user_key)
    authorized = directory / "authorized_keys"
    authorized.write_text(public + "\n")
    authorized.chmod(0o600)
    known, hosts, servers = [], [], []
    for index, ns in enumerate(namespaces):
        name = f"ns{index + 1}"
        host_key = directory / f"host_{name}"
        known.append(f"{ns.address} {' '.join(keygen(host_key).split()[:2])}")
        env = (extra_env or {}).get(index, {})
        config = directory / f"sshd_{name}.conf"
        config.write_text(
            f"ListenAddress {ns.address}\nPort 22\nHostKey {host_key}\nPidFile {directory}/sshd_{name}.pid\n"
            f"AuthorizedKeysFile {authorized}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nLogLevel ERROR\n"
            + (f"SetEnv {' '.join(f'{k}={v}' for k, v in env.items())}\n" if env else "")
        )
        proc = subprocess.Popen(ns.command(SSHD, "-D", "-e", "-f", str(config)), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
        server = Sshd(ns, name, proc, config)
        servers.append(server)
        try:
            _wait_port(ns.address, 22, proc, timeout=30)
        except Unavailable:
            stop(servers)
            raise
        hosts.append(
            f"Host {name}\n  HostName {ns.address}\n  User root\n  IdentityFile {user_key}\n  IdentitiesOnly yes\n"
            f"  IdentityAgent none\n  UserKnownHostsFile {directory}/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
            "  StrictHostKeyChecking yes\n"
        )
    (directory / "known_hosts").write_text("\n".join(known) + "\n")
    config = directory / "ssh_config"
    config.write_text("".join(hosts))
    return SshSetup(directory, config, servers)


def restart(setup_: SshSetup, index: int) -> Sshd:
    old = setup_.servers[index]
    old.kill()
    proc = subprocess.Popen(old.ns.command(SSHD, "-D", "-e", "-f", str(old.config)), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    _wait_port(old.ns.address, 22, proc, timeout=30)
    setup_.servers[index] = Sshd(old.ns, old.name, proc, old.config)
    return setup_.servers[index]


def stop(servers: list[Sshd]) -> None:
    for server in servers:
        server.kill()


def processes_with_marker(marker: str = "MOUNTBENCH_REMOTE_RUN=") -> list[int]:
    """Processes (anywhere on this machine) whose environment carries the remote-run marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
    return found


def wait_until(check, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()
