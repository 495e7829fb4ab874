"""What `mountbench serve` does for ``probe --view PATH@A=PATH@B`` (clients/remoteprobe.py
drives it): the changes through A and the observations through B, as requests to the
agent, each confined to the probe scratch directories this agent created (``probe.create``)
or found carrying the probe's token (``probe.attach``)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mountbench.clients.agent import Handler
from mountbench.host import scratch as scratch_mod
from mountbench.probe import target as probe_target
from mountbench.probe.coherence import NEW, OLD, _classify, _poll, _read, _write

INITIAL = b"0123456789abcdef" * 256  # 4 KiB, as the local probe writes


class ProbeAgent:
    """What `mountbench serve` does for a coherence probe, confined to scratch directories
    it created (``create``) or found with the right token (``attach``)."""

    def __init__(self) -> None:
        self.dirs: dict[str, str] = {}  # token -> scratch directory on this machine
        self.created: set[str] = set()  # tokens whose directory this agent made (and removes)
        self.locks: dict[tuple[str, str], int] = {}
        self.watches: dict[str, Any] = {}
        self.guard = threading.Lock()

    def handlers(self) -> dict[str, Handler]:
        return {
            "probe.ping": lambda request: {},
            "probe.create": self.create,
            "probe.attach": self.attach,
            "probe.remove": self.remove,
            "probe.step": self.step,
            "probe.wait": self.wait,
            "probe.read_now": self.read_now,
            "probe.lock": self.lock,
            "probe.unlock": self.unlock,
            "probe.trylock": self.trylock,
            "probe.watch": self.watch,
            "probe.collect": self.collect,
        }

    def _file(self, request: dict[str, Any], key: str = "file") -> Path:
        token, name = str(request["token"]), str(request[key])
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        with self.guard:
            directory = self.dirs.get(token)
        if directory is None:
            raise KeyError("no probe scratch directory with this token here")
        return Path(directory) / name

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        name, token = str(request["name"]), str(request["token"])
        if not name.startswith(scratch_mod.PROBE_PREFIX) or "/" in name:
            raise ValueError(f"not a probe scratch name: {name!r}")
        marker = scratch_mod.Marker("probe", token, scratch_mod.Owner.current(), time.time())
        made = probe_target.create_scratch(str(request["path"]), name, marker)
        with self.guard:
            self.dirs[token] = made["scratch"]
            self.created.add(token)
        return {"scratch": made["scratch"]}

    def attach(self, request: dict[str, Any]) -> dict[str, Any]:
        """Wait for the scratch directory another client made to show here with its token."""
        name, token = str(request["name"]), str(request["token"])
        if not name.startswith(scratch_mod.PROBE_PREFIX) or "/" in name:
            raise ValueError(f"not a probe scratch name: {name!r}")
        where = os.path.join(os.path.realpath(str(request["path"])), name)
        delay = _poll(lambda: probe_target.marker_id(where) == token, float(request["timeout"]))
        if delay is not None:
            with self.guard:
                self.dirs[token] = where
        return {"delay_ms": delay}

    def remove(self, request: dict[str, Any]) -> dict[str, Any]:
        token = str(request["token"])
        with self.guard:
            directory = self.dirs.pop(token, None)
            ours = token in self.created
            self.created.discard(token)
            for key in [k for k in self.locks if k[0] == token]:
                os.close(self.locks.pop(key))
            watch = self.watches.pop(token, None)
        if watch is not None:
            watch.close()
        if directory is None or not ours:
            return {"cleanup": "detached"}
        return {"cleanup": probe_target.remove_probe_scratch(directory, token)}

    def step(self, request: dict[str, Any]) -> dict[str, Any]:
        """One change made through this view."""
        path, action = self._file(request), str(request["action"])
        if action == "initial":
            _write(path, INITIAL)
        elif action == "create":
            _write(path, b"new")
        elif action == "append":
            _write(path, b"appended", os.O_APPEND)
        elif action == "truncate":
            os.truncate(path, 100)
        elif action == "rename":
            os.rename(path, path.with_name(path.name + ".renamed"))
        elif action == "delete":
            os.unlink(path)
        elif action == "old":
            _write(path, OLD)
        elif action == "replace by rename":
            tmp = path.with_name(path.name + ".tmp")
            _write(tmp, NEW)
            os.rename(tmp, path)
        elif action == "rewrite in place":
            _write(path, NEW)
        elif action == "inotify":  # create, append, rename, delete: what the watcher expects
            renamed = path.with_name(path.name + ".renamed")
            _write(path, b"one")
            _write(path, b"two", os.O_APPEND)
            os.rename(path, renamed)
            os.unlink(renamed)
        else:
            raise ValueError(f"unknown action {action!r}")
        return {}

    def wait(self, request: dict[str, Any]) -> dict[str, Any]:
        """Poll (stat() only, or read for content checks) until a condition holds here."""
        path, condition = self._file(request), str(request["condition"])
        timeout = float(request["timeout"])
        checks: dict[str, Callable[[], bool]] = {
            "look": lambda: (os.path.lexists(path), True)[1],
            "exists": lambda: os.path.lexists(path),
            "gone": lambda: not os.path.lexists(path),
            "size": lambda: os.stat(path).st_size == int(request["size"]),
            "renamed": lambda: os.path.lexists(str(path) + ".renamed") and not os.path.lexists(path),
            "old": lambda: _read(path) == OLD and os.stat(path).st_size == len(OLD),
            "new": lambda: _read(path) == NEW and os.stat(path).st_size == len(NEW),
        }
        if condition not in checks:
            raise ValueError(f"unknown condition {condition!r}")
        return {"delay_ms": _poll(checks[condition], timeout)}

    def read_now(self, request: dict[str, Any]) -> dict[str, Any]:
        path = self._file(request)
        try:
            size: int | None = os.stat(path).st_size
            data: bytes | None = _read(path)
        except FileNotFoundError:
            size, data = None, None
        observed = "no file" if data is None else f"stat size {size}, read {len(data)} bytes"
        return {"outcome": _classify(size, data), "observed": observed}

    def lock(self, request: dict[str, Any]) -> dict[str, Any]:
        import fcntl

        path, kind = self._file(request), str(request["kind"])
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX) if kind == "flock" else fcntl.lockf(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            raise
        with self.guard:
            self.locks[(str(request["token"]), path.name)] = fd
        return {}

    def unlock(self, request: dict[str, Any]) -> dict[str, Any]:
        path = self._file(request)
        with self.guard:
            fd = self.locks.pop((str(request["token"]), path.name), None)
        if fd is not None:
            os.close(fd)  # closing drops both kinds of lock
        return {}

    def trylock(self, request: dict[str, Any]) -> dict[str, Any]:
        """A second locker (another process, as the local probe uses) through this view."""
        from mountbench.probe.capabilities import try_lock
        from mountbench.probe.sandbox import Child

        path, kind = self._file(request), str(request["kind"])
        outcome = Child(try_lock, str(path), kind, False, new_group=False).wait(float(request["timeout"]))
        if outcome.status != "ok":
            return {"got": None, "note": f"locker: {outcome.status} {outcome.message}".strip()}
        return {"got": bool(outcome.value["got"]), "note": None}

    def watch(self, request: dict[str, Any]) -> dict[str, Any]:
        from mountbench.probe import inotify

        token = str(request["token"])
        directory = self._file(request).parent
        watcher = inotify.Watch(directory)
        watcher.__enter__()
        with self.guard:
            old = self.watches.pop(token, None)
            self.watches[token] = watcher
        if old is not None:
            old.close()
        return {}

    def collect(self, request: dict[str, Any]) -> dict[str, Any]:
        token = str(request["token"])
        name = self._file(request).name
        with self.guard:
            watcher = self.watches.pop(token, None)
        if watcher is None:
            raise KeyError("no watch with this token")
        wanted = {("create", name), ("modify", name), ("close_write", name), ("moved_from", name),
                  ("moved_to", name + ".renamed"), ("delete", name + ".renamed")}  # fmt: skip
        try:
            events, _ = watcher.collect_until(wanted, float(request["timeout"]))
        finally:
            watcher.close()
        return {"received": sorted({e.kind for e in events if e.name in (name, name + ".renamed")})}
