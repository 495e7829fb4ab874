"""Where the deep-path limit is, on two FUSE mounts whose source directories lie deep (issue 49: the docs
said bindfs counts its source directory's path in the limit; it does not, sshfs does). The probe's
limit is checked against creating a file one byte past it, by hand."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from support import realmounts as rm

from mountbench.probe import probe_target
from mountbench.probe.catalogue import by_id

pytestmark = [pytest.mark.root, rm.requires_root]
SOURCE_DEPTH = 1000  # bytes of extra path above the source directory


def _deep(root: Path) -> Path:
    """A directory ``SOURCE_DEPTH`` bytes below ``root`` (ten 99-byte names)."""
    d = root
    for _ in range(SOURCE_DEPTH // 100):
        d = d / ("s" * 99)
    d.mkdir(parents=True)
    return d


@pytest.fixture(params=("bindfs", "sshfs"))
def deep_source(request: pytest.FixtureRequest) -> Iterator[tuple[str, Path, Path]]:
    """(kind, the mount point, the source directory behind it, SOURCE_DEPTH bytes deeper than usual)."""
    with ExitStack() as stack:
        try:
            root = stack.enter_context(rm.host_dir(f"{request.param}-deep"))
            source = _deep(root)
            if request.param == "bindfs":
                mount = stack.enter_context(rm.bindfs(source))
            else:
                mount = stack.enter_context(rm.sshfs(source, request.getfixturevalue("ssh_server")))
        except rm.Unavailable as exc:
            pytest.skip(str(exc))
        yield request.param, mount.mountpoint, source


def test_the_limit_is_found_and_only_sshfs_counts_its_source_directory(deep_source) -> None:
    kind, mountpoint, source = deep_source
    target = mountpoint / "target"
    target.mkdir()
    result = probe_target(target, timeout=5.0, capabilities=[by_id("deep_paths")]).result("deep_paths")
    assert result.verdict == "differs", result
    within = int(result.detail.split("paths end at ")[1].split(" bytes within")[0].replace(",", ""))
    if kind == "bindfs":  # the limit is within the mount, wherever the source directory is
        assert within == 4096, result.detail
    else:  # the server's path: the source directory's and the path within the mount together
        assert abs(within + len(str(source)) - 4096) <= 2, (within, len(str(source)), result.detail)
    # by hand, in a directory of the same depth below the mount: a file at the limit is made, one byte past is not
    chain = [os.open(target, os.O_RDONLY | os.O_DIRECTORY)]
    inside = len("/target")
    try:
        while inside + 101 <= within - 1:
            os.mkdir("d" * 100, dir_fd=chain[-1])
            chain.append(os.open("d" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=chain[-1]))
            inside += 101
        at_limit = "f" * (within - inside - 1)
        os.close(os.open(at_limit, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=chain[-1]))
        os.unlink(at_limit, dir_fd=chain[-1])
        with pytest.raises(OSError):
            os.open(at_limit + "f", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=chain[-1])
    finally:
        while len(chain) > 1:
            os.close(chain.pop())
            os.rmdir("d" * 100, dir_fd=chain[-1])
        os.close(chain[0])
