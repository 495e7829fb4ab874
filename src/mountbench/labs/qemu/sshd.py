"""A private sshd on the host's loopback for the guest's sshfs mount.

The guest reaches it through QEMU user networking (host loopback = 10.0.2.2 in
the guest), like Lima's reverse-sshfs. Keys are generated per lab and live in
the lab work dir; sshd refuses to start until /run/sshd exists.
"""

from __future__ import annotations

import contextlib
import getpass
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mountbench.errors import MountbenchError, ToolMissing
from mountbench.host import process as procs

SSHD: Final = Path("/usr/sbin/sshd")
SFTP_SERVER_PLACES: Final = (
    Path("/usr/lib/openssh/sftp-server"),
    Path("/usr/libexec/openssh/sftp-server"),
    Path("/usr/libexec/sftp-server"),
)
PRIVSEP_DIR: Final = Path("/run/sshd")


class SshdError(MountbenchError):
    """The lab's sshd did not come up."""


def ssh_keygen(path: Path, comment: str) -> Path:
    """Generate an ed25519 key pair at `path` (+ `.pub`), no passphrase."""
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        raise ToolMissing("ssh-keygen is missing; run: apt-get install openssh-client")
    subprocess.run(
        [keygen, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def sftp_server() -> str:
    """The external sftp-server when installed (its own process, measurable), else internal."""
    for cand in SFTP_SERVER_PLACES:
        if cand.is_file():
            return str(cand)
    return "internal-sftp"


def sshd_config(port: int, host_key: Path, authorized_keys: Path, user: str) -> str:
    """An sshd_config accepting only `user` with the lab's key on 127.0.0.1:`port`."""
    return "\n".join(
        [
            f"Port {port}",
            "ListenAddress 127.0.0.1",
            f"HostKey {host_key}",
            f"AuthorizedKeysFile {authorized_keys}",
            f"AllowUsers {user}",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "PidFile none",
            "LogLevel ERROR",
            "X11Forwarding no",
            "AllowTcpForwarding no",
            "PrintMotd no",
            "UseDNS no",
            f"Subsystem sftp {sftp_server()}",
            "",
        ]
    )


def ensure_privsep_dir() -> None:
    """Create /run/sshd if missing (sshd checks it at every connection)."""
    if PRIVSEP_DIR.is_dir():
        return
    try:
        PRIVSEP_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    except OSError as exc:
        raise SshdError(
            f"sshd needs {PRIVSEP_DIR} and it cannot be created ({exc}); run: sudo mkdir -p {PRIVSEP_DIR}"
        ) from exc


class PrivsepKeeper:
    """Re-creates /run/sshd while the lab's sshd runs.

    Others may remove it meanwhile: systemd does when the system's sshd stops
    (RuntimeDirectory=sshd), and so do test fixtures that created it themselves.
    Without it, sshd drops every new connection ("Missing privilege separation
    directory"), which would fail the guest's sshfs mount.
    """

    def __init__(self, interval: float = 0.2) -> None:
        self._stop = threading.Event()
        self._interval = interval
        self._thread = threading.Thread(target=self._run, name="mountbench-lab-privsep", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            with contextlib.suppress(MountbenchError):
                ensure_privsep_dir()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)


@dataclass
class SshServer:
    """A running lab sshd and what the guest needs to reach it."""

    proc: subprocess.Popen[bytes]
    port: int
    user: str
    client_key: Path  # private key for the guest
    log: Path
    keeper: PrivsepKeeper | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.keeper is not None:
            self.keeper.stop()
        procs.stop_tree(self.proc)


def start_sshd(
    directory: Path,
    client_key: Path,
    timeout: float = 10.0,
    *,
    prefix: Sequence[str] = (),
    listening: Callable[[int], bool] = procs.port_open,
) -> SshServer:
    """Start sshd with a fresh host key in `directory`, authorising `client_key`.pub; its command
    line after ``prefix`` (the lab's network namespace), ready once ``listening(port)``."""
    if not SSHD.is_file():
        raise ToolMissing(f"{SSHD} is missing; run: apt-get install openssh-server")
    ensure_privsep_dir()
    directory.mkdir(parents=True, exist_ok=True)
    host_key = ssh_keygen(directory / "ssh_host_ed25519_key", "mountbench-lab-host")
    authorized = directory / "authorized_keys"
    authorized.write_text(Path(f"{client_key}.pub").read_text())
    authorized.chmod(0o600)
    user = getpass.getuser()
    port = procs.free_port()
    config = directory / "sshd_config"
    config.write_text(sshd_config(port, host_key, authorized, user))
    check = subprocess.run([str(SSHD), "-t", "-f", str(config)], capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise SshdError(f"sshd rejects the lab config: {check.stderr.strip()}")
    log = directory / "sshd.log"
    proc = procs.start([*prefix, str(SSHD), "-D", "-e", "-f", str(config)], log=log)
    if not procs.wait_until(lambda: listening(port), timeout, proc):
        procs.stop_tree(proc)
        raise SshdError(f"the lab sshd did not listen on 127.0.0.1:{port}: {procs.log_tail(log, 5) or 'no output'}")
    return SshServer(proc, port, user, client_key, log, PrivsepKeeper())
