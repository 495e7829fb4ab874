import pytest

from mountbench.errors import TargetError, UsageError
from mountbench.targets import parse_mountinfo, parse_target_arg, resolve_targets

MOUNTINFO = """\
22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
35 22 0:30 / /dev/shm rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=1024k
90 22 0:50 / /mnt/with\\040space rw,relatime - fuse.sshfs user@host:/srv rw,user_id=0,group_id=0
"""


def test_parse_mountinfo_merges_options_and_unescapes_paths():
    entries = parse_mountinfo(MOUNTINFO)
    assert [e.mount_point for e in entries] == ["/", "/dev/shm", "/mnt/with space"]
    shm = entries[1]
    assert shm.fstype == "tmpfs" and shm.source == "tmpfs"
    assert shm.options == "rw,nosuid,nodev,size=1024k"
    assert entries[2].fstype == "fuse.sshfs" and entries[2].source == "user@host:/srv"


@pytest.mark.parametrize(
    ("arg", "expected"),
    [("virtiofs=/mnt/share", ("virtiofs", "/mnt/share")), ("/mnt/a=b", (None, "/mnt/a=b")), ("/x", (None, "/x"))],
)
def test_parse_target_arg(arg, expected):
    assert parse_target_arg(arg) == expected


def test_resolve_targets_errors(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(TargetError, match="does not exist"):
        resolve_targets([str(tmp_path / "missing")])
    with pytest.raises(TargetError, match="not a directory"):
        resolve_targets([str(f)])
    with pytest.raises(UsageError, match="given twice"):
        resolve_targets([str(tmp_path), f"x={tmp_path}"])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(UsageError, match="labelled 'same'"):
        resolve_targets([f"same={tmp_path / 'a'}", f"same={tmp_path / 'b'}"])


def test_default_label_is_fstype_and_path(tmp_path):
    (target,) = resolve_targets([str(tmp_path)])
    assert target.label.endswith(f":{tmp_path}")
