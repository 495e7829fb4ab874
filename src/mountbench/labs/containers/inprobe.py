"""What each mount supports, asked from inside the container (run there as
``python -m mountbench.labs.containers.inprobe``): standard library only, JSON on stdout.

``caps PATH=SEED ...``: on each mount, renaming a directory it shows from a lower layer (the
image, the overlay's lower directory: overlayfs answers EXDEV), renaming a directory made
here, chown to another user, a user xattr, and opening with O_DIRECT.

``watch DIR NAME TEXT TIMEOUT``: after printing ``ready``, wait for DIR/NAME to hold TEXT
(written by the host through the bind mount) and say how long it took to show, and whether
an inotify watch on DIR saw it come.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import select
import sys
import time
from typing import Any

PROBE_DIR = ".mountbench-probe"
OTHER_UID = 1000


def outcome(action: Any) -> dict[str, Any]:
    try:
        detail = action()
    except OSError as exc:
        return {"ok": False, "errno": errno.errorcode.get(exc.errno or 0, str(exc.errno)), "detail": exc.strerror}
    return {"ok": True, "detail": detail or ""}


def capabilities(path: str, seed: str | None) -> dict[str, Any]:
    work = os.path.join(path, PROBE_DIR)
    os.makedirs(work, exist_ok=True)
    found: dict[str, Any] = {}
    if seed:

        def rename_seed() -> str:
            moved = seed + "-renamed"
            os.rename(seed, moved)
            os.rename(moved, seed)
            return "renamed and back"

        found["rename_lower_dir"] = outcome(rename_seed)

    def rename_new() -> str:
        made = os.path.join(work, "made-here")
        os.makedirs(os.path.join(made, "sub"), exist_ok=True)
        os.rename(made, made + "-renamed")
        os.rename(made + "-renamed", made)
        return "renamed and back"

    found["rename_new_dir"] = outcome(rename_new)
    file = os.path.join(work, "file")
    with open(file, "w") as f:
        f.write("probe\n")

    def chown() -> str:
        os.chown(file, OTHER_UID, OTHER_UID)
        st = os.stat(file)
        return f"owner now {st.st_uid}:{st.st_gid}"

    found["chown"] = outcome(chown)

    def xattr() -> str:
        os.setxattr(file, "user.mountbench", b"1")
        return f"read back {os.getxattr(file, 'user.mountbench')!r}"

    found["xattr"] = outcome(xattr)

    def direct() -> str:
        fd = os.open(file, os.O_RDONLY | os.O_DIRECT)
        os.close(fd)
        return "opened"

    found["o_direct"] = outcome(direct)
    os.unlink(file)
    for root, dirs, files in os.walk(work, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(work)
    return found


IN_CREATE, IN_CLOSE_WRITE, IN_MOVED_TO = 0x100, 0x8, 0x80


def watch(directory: str, name: str, text: str, timeout: float) -> dict[str, Any]:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    wd = libc.inotify_add_watch(fd, directory.encode(), IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO) if fd >= 0 else -1
    target = os.path.join(directory, name)
    print("ready", flush=True)
    deadline = time.monotonic() + timeout
    seen_at: float | None = None
    event = False
    while time.monotonic() < deadline and (seen_at is None or not event):
        if fd >= 0 and wd >= 0 and select.select([fd], [], [], 0.002)[0]:
            data = os.read(fd, 4096)
            event = event or name.encode() in data
        if seen_at is None:
            try:
                with open(target) as f:
                    if f.read() == text:
                        seen_at = time.time()
            except OSError:
                pass
        if seen_at is not None and wd < 0:
            break
        time.sleep(0.001)
    return {"seen_at": seen_at, "inotify": event if wd >= 0 else None}


def main(argv: list[str]) -> int:
    if argv[:1] == ["caps"]:
        result = {}
        for arg in argv[1:]:
            path, _, seed = arg.partition("=")
            result[path] = capabilities(path, seed or None)
        print(json.dumps(result))
        return 0
    if argv[:1] == ["watch"] and len(argv) == 5:
        print(json.dumps(watch(argv[1], argv[2], argv[3], float(argv[4]))))
        return 0
    print("usage: inprobe caps PATH[=SEED]... | watch DIR NAME TEXT TIMEOUT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
