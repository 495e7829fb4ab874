"""Mount spec parsing: syntax, validation, labels, slugs, defaults."""

from __future__ import annotations

import pytest

from mountbench.errors import UsageError
from mountbench.labs.qemu import DEFAULT_MOUNTS, MountSpec, parse_mount_spec
from mountbench.labs.qemu.mounts.guestmount import format_size
from mountbench.units import parse_size

pytestmark = pytest.mark.lab


@pytest.mark.parametrize(
    ("text", "label", "slug"),
    [
        ("9p", "9p cache=none msize=512000", "9p"),
        ("9p:cache=loose", "9p cache=loose msize=512000", "9p-cache-loose"),
        (
            "9p:cache=loose,msize=512000,security_model=mapped-xattr",
            "9p cache=loose msize=512000",
            "9p-cache-loose",
        ),
        ("9p:security_model=none", "9p cache=none msize=512000 security_model=none", "9p-security-model-none"),
        ("virtiofs", "virtiofs cache=auto", "virtiofs"),
        (
            "virtiofs:cache=always,thread_pool_size=4",
            "virtiofs cache=always thread_pool_size=4",
            "virtiofs-cache-always-thread-pool-size-4",
        ),
        ("disk", "disk format=raw cache=none size=4G", "disk"),
        (
            "disk:format=qcow2,cache=none,preallocation=metadata",
            "disk format=qcow2 cache=none preallocation=metadata size=4G",
            "disk-format-qcow2-preallocation-metadata",
        ),
        ("disk:format=qcow2", "disk format=qcow2 cache=none size=4G", "disk-format-qcow2"),
        ("disk:cache=writeback,size=1GiB", "disk format=raw cache=writeback size=1G", "disk-cache-writeback-size-1g"),
        ("sshfs", "sshfs", "sshfs"),
        ("guest-tmpfs", "guest-tmpfs", "guest-tmpfs"),
        ("guest-tmpfs:size=512M", "guest-tmpfs size=512M", "guest-tmpfs-size-512m"),
        (" 9P : Cache=loose ", "9p cache=loose msize=512000", "9p-cache-loose"),
    ],
)
def test_parse_label_slug(text: str, label: str, slug: str) -> None:
    spec = parse_mount_spec(text)
    assert spec.label == label
    assert spec.slug == slug
    assert str(spec) == label
    assert parse_mount_spec(spec.spec_text) == spec  # round trip


def test_equal_configurations_compare_equal() -> None:
    assert parse_mount_spec("9p") == parse_mount_spec("9p:cache=none,msize=512000")
    assert parse_mount_spec("disk:size=4096M") == parse_mount_spec("disk")
    assert parse_mount_spec("9p:msize=512000,cache=loose") == parse_mount_spec("9p:cache=loose,msize=512000")
    assert hash(parse_mount_spec("virtiofs")) == hash(parse_mount_spec("virtiofs:cache=auto"))
    assert parse_mount_spec("9p") != parse_mount_spec("9p:cache=loose")


def test_effective_options() -> None:
    spec = parse_mount_spec("disk:format=qcow2")
    assert spec.get("preallocation") == "off"
    assert spec.get("size") == "4G"
    assert spec.size_bytes == 4 << 30
    assert parse_mount_spec("disk").get("preallocation") is None
    assert parse_mount_spec("9p").get("security_model") == "mapped-xattr"
    assert parse_mount_spec("guest-tmpfs").size_bytes is None
    assert isinstance(parse_mount_spec("sshfs"), MountSpec)


def test_default_mounts() -> None:
    assert [m.label for m in DEFAULT_MOUNTS] == [
        "9p cache=none msize=512000",
        "9p cache=loose msize=512000",
        "virtiofs cache=auto",
        "sshfs",
        "disk format=raw cache=none size=4G",
        "guest-tmpfs",
    ]
    assert len({m.slug for m in DEFAULT_MOUNTS}) == len(DEFAULT_MOUNTS)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("smb", "unknown mount type 'smb'; use one of 9p, virtiofs, sshfs, nfs, disk, guest-tmpfs"),
        ("", "unknown mount type"),
        ("9p:cache=fast", "9p cache=fast is not valid; use cache=none|loose|mmap|fscache"),
        ("virtiofs:cache=none", "use cache=never|auto|always"),
        ("disk:format=vmdk", "use format=raw|qcow2"),
        ("disk:cache=off", "use cache=none|writeback|writethrough|directsync|unsafe"),
        ("disk:preallocation=full", "preallocation= applies to qcow2 images only; add format=qcow2"),
        ("disk:format=qcow2,preallocation=falloc", "use preallocation=off|metadata|full"),
        ("disk:size=huge", "size=huge is not a size; use e.g. size=4G"),
        ("disk:size=1M", "size=1M is too small; use at least 64M"),
        ("9p:msize=100", "msize=100 is too small; use at least 4096"),
        ("9p:msize=12k", "msize=12k is not a whole number"),
        ("virtiofs:thread_pool_size=x", "thread_pool_size=x is not a whole number"),
        ("9p:speed=11", "unknown 9p option 'speed'; use one of cache, msize, security_model"),
        ("sshfs:cache=yes", "sshfs takes no options; write sshfs alone"),
        ("9p:cache", "option 'cache' has no value; write cache=VALUE"),
        ("9p:cache=", "option 'cache' has no value"),
        ("9p:", "nothing after ':'"),
        ("9p:cache=loose,cache=none", "option 'cache' given twice"),
    ],
)
def test_invalid_specs(text: str, needle: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_mount_spec(text)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message
    assert message.startswith(f"mount spec {text!r}: ")


def test_sizes() -> None:
    assert parse_size("4G") == 4 << 30
    assert parse_size("512m") == 512 << 20
    assert parse_size("1GiB") == 1 << 30
    assert parse_size("1000") == 1000
    assert format_size(4 << 30) == "4G"
    assert format_size(1536 << 20) == "1536M"
    assert format_size(1000) == "1000"
    assert parse_size("1.5G") == 3 << 29
    with pytest.raises(UsageError):
        parse_size("lots")
