"""Headless Chromium driven through the DevTools protocol over a pipe (no extra packages):
open a page at a given viewport width, read what the browser saw (console errors,
exceptions, every network request), evaluate JavaScript, take full-page screenshots,
switch to print media and print to PDF.

    with Browser() as browser:
        page = browser.open(path, width=400)
        page.evaluate("document.title"); page.screenshot(); page.problems()

The browser runs with --no-sandbox --disable-gpu, no background networking, a fresh
profile, and a host resolver that maps every name to nothing, so a page that tries to
fetch anything gets an error and the request is recorded.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One Chromium process; ``open`` gives a fresh tab per page."""

    def __init__(self, timeout: float = 60.0) -> None:
        binary = find_chromium()
        if binary is None:
            raise BrowserError("no chromium (apt-get install chromium)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="mb-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser reads commands on fd 3 and writes replies on fd 4
        high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)

        def wire() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.process = subprocess.Popen(
            [binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4, high_r, high_w),
            preexec_fn=wire,
        )
        for fd in (to_browser_r, from_browser_w, high_r, high_w):
            os.close(fd)
        self._next_id = 0
        self._replies: dict[int, dict] = {}
        self._events: queue.Queue[dict] = queue.Queue()
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # --- protocol ------------------------------------------------------------------------

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._lock:
                        self._replies[message["id"]] = message
                        self._lock.notify_all()
                else:
                    self._events.put(message)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._lock:
            while ident not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"no reply to {method} within {self.timeout} s")
                self._lock.wait(left)
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def events(self) -> list[dict]:
        found = []
        while True:
            try:
                found.append(self._events.get_nowait())
            except queue.Empty:
                return found

    def wait_event(self, method: str, session: str, seen: list[dict]) -> None:
        """Wait for ``method`` in ``session``, keeping every event that arrives meanwhile in ``seen``."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                event = self._events.get(timeout=0.2)
            except queue.Empty:
                continue
            seen.append(event)
            if event.get("method") == method and event.get("sessionId") == session:
                return
        raise BrowserError(f"no {method} within {self.timeout} s")

    # --- pages ---------------------------------------------------------------------------

    def open(self, path: Path | str, *, width: int, height: int = 900) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        seen: list[dict] = []
        url = str(path) if ":" in str(path).split("/")[0] else Path(path).resolve().as_uri()
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session, seen)
        return Page(self, session, width, height, seen)

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str, width: int, height: int, seen: list[dict]) -> None:
        self.browser = browser
        self.session = session
        self.width = width
        self.height = height
        self.seen = seen

    def evaluate(self, expression: str) -> Any:
        result = self.browser.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=self.session
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}…: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _all_events(self) -> list[dict]:
        self.seen += self.browser.events()
        return [e for e in self.seen if e.get("sessionId") == self.session]

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads the browser reported."""
        found = []
        for event in self._all_events():
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(f"console.error: {[a.get('value') for a in params.get('args', [])]}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"log: {params['entry'].get('text')}")
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked for beyond the page itself and data: URLs."""
        urls = [
            e["params"]["request"]["url"] for e in self._all_events() if e.get("method") == "Network.requestWillBeSent"
        ]
        return [u for u in urls if not u.startswith("data:")][1:]  # the first is the page

    def media(self, media: str) -> None:
        self.browser.call("Emulation.setEmulatedMedia", {"media": media}, session=self.session)

    def screenshot(self, path: Path) -> Path:
        """The whole page, not just the viewport."""
        size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        shot = self.browser.call(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": max(size[0], self.width), "height": size[1], "scale": 1},
            },
            session=self.session,
        )
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def pdf(self) -> bytes:
        printed = self.browser.call("Page.printToPDF", {"printBackground": True}, session=self.session)
        return base64.b64decode(printed["data"])
