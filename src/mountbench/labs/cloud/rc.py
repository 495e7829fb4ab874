"""One rclone mount's remote control (``rclone mount --rc``), as the cloud lab uses it: are its
uploads done, and forget what it listed of a directory. It listens inside the lab's network
namespace (netns.py) and takes a password only this run holds (given in the environment,
never on a command line that ``ps`` shows)."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mountbench.labs.netns import Network

RC_USER = "mountbench"


@dataclass(frozen=True)
class RemoteControl:
    port: int
    password: str
    network: Network

    def options(self) -> list[str]:
        """The mount's options for it (the password goes in the environment: :meth:`env`)."""
        return ["--rc", "--rc-addr", f"127.0.0.1:{self.port}", "--rc-user", RC_USER]

    def env(self) -> dict[str, str]:
        return {"RCLONE_RC_PASS": self.password}

    def call(self, command: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/{command}",
                                         data=json.dumps(params or {}).encode(), method="POST")  # fmt: skip
        request.add_header("Content-Type", "application/json")
        token = base64.b64encode(f"{RC_USER}:{self.password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")

        def send() -> dict[str, Any]:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return json.loads(answer.read().decode(errors="replace") or "{}")

        try:
            return self.network.call(send)
        except urllib.error.HTTPError as exc:
            raise OSError(f"rclone rc {command}: {exc.read().decode(errors='replace')[:200]}") from None
        except (urllib.error.URLError, ValueError) as exc:
            raise OSError(f"rclone rc {command}: {exc}") from None

    def pending_uploads(self) -> int:
        """Files written through the mount that are not on the remote yet (queued or uploading)."""
        cache = self.call("vfs/stats").get("diskCache") or {}
        return int(cache.get("uploadsQueued") or 0) + int(cache.get("uploadsInProgress") or 0)

    def wait_uploaded(
        self,
        timeout: float,
        *,
        allowed: int = 0,
        stall: float | None = None,
        settled: Callable[[], bool] | None = None,
        quiet: float = 1.0,
    ) -> tuple[float, int]:
        """Wait until at most ``allowed`` files are left to upload; (seconds waited, files still
        pending). ``stall``: also stop once the count has not moved for that long (an upload rclone
        will never finish, e.g. a file whose directory was renamed before it went up).
        ``settled``: also stop once it holds (nothing anyone can still ask for is left to upload) and
        the count has not moved for ``quiet`` seconds (an upload the remote holds whole is still
        counted until rclone has its answer): what is then left never goes up."""
        start = changed = time.monotonic()
        last = -1
        while True:
            pending = self.pending_uploads()
            now = time.monotonic()
            if pending != last:
                last, changed = pending, now
            if pending <= allowed or now - start > timeout or (stall is not None and now - changed > stall):
                return now - start, pending
            if settled is not None and now - changed >= quiet and settled() and self.pending_uploads() == pending:
                return time.monotonic() - start, pending
            time.sleep(0.2)

    def forget(self, directory: str = "") -> None:
        """Drop the mount's listing of ``directory`` (relative to the mount): its next look is at the remote."""
        self.call("vfs/forget", {"dir": directory} if directory else {})
