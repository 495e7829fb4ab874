"""The remote the cloud lab serves itself: ``rclone serve webdav`` over a directory on
this machine's disk, on loopback. That directory is "the remote's own view" of the
files a mount shows."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from mountbench.errors import ToolMissing
from mountbench.host import process as procs

RCLONE_FIX = "install rclone and fuse3: apt-get install rclone fuse3 (or scripts/install.sh --test)"


def rclone_binary() -> str:
    path = shutil.which("rclone")
    if path is None:
        raise ToolMissing(f"rclone is not installed; {RCLONE_FIX}")
    return path


def rclone_version() -> str:
    done = subprocess.run([rclone_binary(), "version"], capture_output=True, text=True, timeout=30)
    return (done.stdout.splitlines() or ["rclone ?"])[0].strip()


class WebdavRemote:
    """``rclone serve webdav DIR --addr 127.0.0.1:PORT``, started and stopped by the lab."""

    def __init__(self, directory: Path, log: Path) -> None:
        self.directory = directory
        self.log = log
        self.port = procs.free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> subprocess.Popen[bytes]:
        # --dir-cache-time 0s: the server answers from its directory as it is now, as a cloud's API
        # does (rclone's default would hide changes made in the directory for 5 minutes)
        argv = [rclone_binary(), "serve", "webdav", str(self.directory), "--addr", f"127.0.0.1:{self.port}",
                "--dir-cache-time", "0s"]  # fmt: skip
        self.proc = procs.start(argv, log=self.log)
        if not procs.wait_until(lambda: procs.port_open(self.port), 20.0, self.proc):
            tail = procs.log_tail(self.log, 5)
            self.stop()
            raise ToolMissing(f"rclone serve webdav did not start: {tail or 'no output'}")
        return self.proc

    def stop(self) -> None:
        if self.proc is not None:
            procs.stop_tree(self.proc)
            self.proc = None
