"""The remote the cloud lab serves itself: ``rclone serve webdav`` over a directory on
this machine's disk, on the loopback of the lab's network namespace (netns.py), with a
password only the run holds (given in the environment, never on a command line). That
directory is "the remote's own view" of the files a mount shows."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from mountbench.errors import ToolMissing
from mountbench.host import process as procs
from mountbench.labs.frame import start_daemon
from mountbench.labs.netns import HostLoopback, Network

RCLONE_FIX = "install rclone and fuse3: apt-get install rclone fuse3 (or scripts/install.sh --test)"


def rclone_binary() -> str:
    path = shutil.which("rclone")
    if path is None:
        raise ToolMissing(f"rclone is not installed; {RCLONE_FIX}")
    return path


def obscure(password: str) -> str:
    """``password`` as rclone's config takes it (``rclone obscure``, read from stdin: never in argv)."""
    done = subprocess.run([rclone_binary(), "obscure", "-"], input=password, capture_output=True, text=True,
                          timeout=30)  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip():
        raise ToolMissing(f"rclone obscure failed: {done.stderr.strip() or f'exit {done.returncode}'}")
    return done.stdout.strip()


def rclone_version() -> str:
    done = subprocess.run([rclone_binary(), "version"], capture_output=True, text=True, timeout=30)
    return (done.stdout.splitlines() or ["rclone ?"])[0].strip()


class WebdavRemote:
    """``rclone serve webdav DIR --addr 127.0.0.1:PORT``, started and stopped by the lab."""

    USER = "mountbench"

    def __init__(
        self, directory: Path, log: Path, network: Network | None = None, password: str = "", port: int | None = None
    ) -> None:
        self.directory = directory
        self.log = log
        self.network: Network = network or HostLoopback()
        self.password = password
        self.port = port or procs.free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> subprocess.Popen[bytes]:
        # --dir-cache-time 0s: the server answers from its directory as it is now, as a cloud's API
        # does (rclone's default would hide changes made in the directory for 5 minutes)
        argv = [rclone_binary(), "serve", "webdav", str(self.directory), "--addr", f"127.0.0.1:{self.port}",
                "--dir-cache-time", "0s"]  # fmt: skip
        env = {**os.environ, "RCLONE_USER": self.USER, "RCLONE_PASS": self.password} if self.password else None
        self.proc = start_daemon(self.network.argv(argv), self.log, env=env, timeout=20.0, error=ToolMissing,
                                 ready=lambda: self.network.listening(self.port),
                                 failure="rclone serve webdav did not start")  # fmt: skip
        return self.proc

    def stop(self) -> None:
        if self.proc is not None:
            procs.stop_tree(self.proc)
            self.proc = None
