"""One SSH connection per client machine, made with the user's own ssh: their agent, their
``~/.ssh/config`` and known hosts (or the file named by $MOUNTBENCH_SSH_CONFIG), never a
password prompt (BatchMode). The first ssh process is the ControlMaster; every later
command and the tunnel to the client's fio server go through it.

Every ssh process is started from the calling (main) thread with PR_SET_PDEATHSIG, so if
mountbench dies without stopping them (SIGKILL) the kernel ends them, and the remote side
sees its session close (clients/sshremote.py then stops what it started there).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from mountbench.clients.addresses import ClientSpec
from mountbench.errors import UsageError
from mountbench.host.process import last_lines, stop_tree
from mountbench.host.process import spawn as process_spawn

CONTROL_PREFIX = "mb-ssh-"
CONFIG_ENV = "MOUNTBENCH_SSH_CONFIG"  # an ssh config file used instead of ~/.ssh/config (tests)
CONNECT_TIMEOUT_S = 15.0
COMMAND_TIMEOUT_S = 30.0
# a dead peer is noticed within ALIVE_INTERVAL_S * ALIVE_COUNT (veth down, host powered off)
ALIVE_INTERVAL_S = 2
ALIVE_COUNT = 3


def ssh_binary() -> str:
    found = shutil.which("ssh")
    if found is None:
        raise UsageError(
            "--client ssh://… needs the ssh command; install the OpenSSH client (apt-get install openssh-client)"
        )
    return found


def base_options() -> list[str]:
    """What every ssh call of mountbench gets: no prompts, the test's config if one is named."""
    options = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={int(CONNECT_TIMEOUT_S)}"]
    config = os.environ.get(CONFIG_ENV)
    if config:
        options = ["-F", config, *options]
    return options


class SshConnection:
    """The ControlMaster ssh process to one client, and commands run through it."""

    def __init__(self, client: ClientSpec, control_dir: Path) -> None:
        self.client = client
        self.ssh = ssh_binary()
        self.control = control_dir / f"{client.dirname[:60]}.sock"
        self.master: subprocess.Popen | None = None
        self.forwards: list[str] = []

    # --- the master ------------------------------------------------------------------------

    def start(self) -> None:
        """Start the master (returns at once; ``wait_ready`` waits for it)."""
        argv = [self.ssh, *base_options(), "-M", "-N", "-S", str(self.control),
                "-o", "ControlPersist=no", "-o", "ExitOnForwardFailure=yes",
                "-o", f"ServerAliveInterval={ALIVE_INTERVAL_S}", "-o", f"ServerAliveCountMax={ALIVE_COUNT}",
                *self._port_option(), self.client.destination]  # fmt: skip
        self.master = spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def wait_ready(self, timeout: float = CONNECT_TIMEOUT_S + 5) -> None:
        """Until the master accepts commands; a one-line UsageError naming the client if it
        could not log in (ssh's own last words say why: host key, permission, refused…)."""
        assert self.master is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.master.poll() is not None:
                said = last_lines(self.master.stderr.read().decode(errors="replace") if self.master.stderr else "")
                raise UsageError(
                    f"client {self.client.label}: ssh could not log in ({said}); mountbench uses your ssh setup "
                    "(agent, ~/.ssh/config, known hosts) and never asks for a password: check "
                    f"'{self.hint()}' works without a prompt"
                )
            if self.control.exists() and self.alive():
                return
            time.sleep(0.05)
        raise UsageError(f"client {self.client.label}: ssh did not connect within {timeout:g} s; check the address")

    def hint(self) -> str:
        """The command that logs in as mountbench does (its config file, its port): what a user
        runs to see why it fails."""
        config = os.environ.get(CONFIG_ENV)
        words = ["ssh", *(["-F", config] if config else []), "-o", "BatchMode=yes", *self._port_option(),
                 self.client.destination, "true"]  # fmt: skip
        return shlex.join(words)

    def alive(self) -> bool:
        """Is the master still connected (``ssh -O check``)?"""
        if self.master is None or self.master.poll() is not None:
            return False
        done = subprocess.run([self.ssh, *self._mux(), "-O", "check", self.client.destination],
                              capture_output=True, timeout=10, stdin=subprocess.DEVNULL)  # fmt: skip
        return done.returncode == 0

    def why_lost(self) -> str:
        """'' while connected, else what ssh said when the connection ended."""
        if self.master is None:
            return "no SSH connection"
        if self.master.poll() is None:
            return ""
        said = self.master.stderr.read().decode(errors="replace") if self.master.stderr else ""
        return f"its SSH connection ended ({last_lines(said)})"

    # --- commands through it ---------------------------------------------------------------

    def run(self, script: str, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """``sh -c SCRIPT sh ARGS…`` on the client through the master."""
        argv = [self.ssh, *self._mux(), self.client.destination, remote_command(script, *args)]
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise UsageError(f"client {self.client.label}: a command over ssh took more than {timeout:g} s") from None

    def start_session(self, script: str, *args: str, env: dict[str, str]) -> subprocess.Popen:
        """A long-lived ``sh -c SCRIPT`` whose stdin stays open: closing it (or this process
        dying) ends the remote session, which is how the remote side knows to stop."""
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env {exports} {remote_command(script, *args)}"
        argv = [self.ssh, *self._mux(), self.client.destination, command]
        return spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def forward_socket(self, local: str, remote: str) -> None:
        """``-L LOCAL:REMOTE`` through the master, both unix sockets: ssh makes ``local`` here
        (mode 0600 by OpenSSH's StreamLocalBindMask; its directory should be private too), and
        each connection to it is carried to ``remote`` on the client by sshd (which must allow
        it: AllowStreamLocalForwarding, on by default)."""
        spec = f"{local}:{remote}"
        done = subprocess.run([self.ssh, *self._mux(), "-O", "forward", "-L", spec, self.client.destination],
                              capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL)  # fmt: skip
        if done.returncode != 0:
            raise UsageError(f"client {self.client.label}: ssh could not forward {spec} ({last_lines(done.stderr)})")
        self.forwards.append(spec)

    def close(self) -> None:
        """End the master (and with it every session and tunnel through it)."""
        if self.master is None:
            return
        if self.master.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                subprocess.run([self.ssh, *self._mux(), "-O", "exit", self.client.destination],
                               capture_output=True, timeout=5, stdin=subprocess.DEVNULL)  # fmt: skip
        stop(self.master)
        with contextlib.suppress(OSError):
            self.control.unlink()

    def _mux(self) -> list[str]:
        return [*base_options(), "-S", str(self.control), "-o", "ControlMaster=no", *self._port_option()]

    def _port_option(self) -> list[str]:
        return ["-p", str(self.client.port)] if self.client.port is not None else []


def control_directory() -> Path:
    """A short private directory for the control sockets (a socket path has ~100 bytes),
    named after this process; those of processes that died without removing theirs
    (killed mountbench runs) are removed first."""
    parent = Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())
    sweep_control_directories(parent)
    return Path(tempfile.mkdtemp(prefix=f"{CONTROL_PREFIX}{os.getpid()}-", dir=parent))


def sweep_control_directories(parent: Path) -> list[Path]:
    """Remove ``mb-ssh-<pid>-*`` directories whose process is gone; what was removed."""
    removed = []
    for entry in parent.glob(f"{CONTROL_PREFIX}*-*"):
        pid = entry.name.removeprefix(CONTROL_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists() or not entry.is_dir() or entry.is_symlink():
            continue
        if entry.stat().st_uid != os.getuid():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def remote_command(script: str, *args: str) -> str:
    """One string the remote login shell runs: ``sh -c SCRIPT sh ARGS…``, each word quoted."""
    return " ".join(shlex.quote(word) for word in ("sh", "-c", script, "sh", *args))


def spawn(argv: list[str], **kwargs) -> subprocess.Popen:
    """An ssh process in its own session (Ctrl-C at the terminal is mountbench's to handle)
    that the kernel ends should mountbench die without ending it."""
    return process_spawn(argv, death_signal=signal.SIGTERM, **kwargs)


def stop(proc: subprocess.Popen) -> None:
    """Stop an ssh process (SIGTERM, then SIGKILL) and close its pipes."""
    stop_tree(proc, signal.SIGTERM)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            if stream is not None:
                stream.close()
