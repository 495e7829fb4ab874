"""support/syscalls.py reads strace logs as the containment test needs: the successful writing calls,
with absolute paths (a recorded log; the real trace is test_contain_fuzz.py's)."""

from __future__ import annotations

from support import syscalls

LOG = """\
26674 openat(AT_FDCWD</tmp/st>, "f1", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/st/f1>
26674 openat(AT_FDCWD</tmp/st>, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 4</etc/passwd>
26674 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x7f) = 26675
26675 chdir("sub") = 0
26675 mkdir("d", 0777)                  = 0
26675 mkdir("/abs/e", 0777)             = -1 EACCES (Permission denied)
26676 renameat2(AT_FDCWD</tmp/st>, "f1", AT_FDCWD</tmp/st>, "d/f2", RENAME_NOREPLACE) = 0
26677 unlinkat(5</tmp/st/d>, "f2", 0 <unfinished ...>
26674 openat(AT_FDCWD</tmp/st>, "x, \\"y\\"", O_RDWR) = 6</tmp/st/x>
26677 <... unlinkat resumed>) = 0
26678 symlinkat("/etc/shadow", AT_FDCWD</tmp/st>, "link") = 0
"""


def test_the_writing_calls_with_absolute_paths() -> None:
    found = [str(w) for w in syscalls.writes(LOG.splitlines(), "/tmp/st")]
    assert found == [
        "26674 openat /tmp/st/f1",
        "26675 mkdir /tmp/st/sub/d",  # the child's working directory: its parent's, then chdir
        "26676 renameat2 /tmp/st/f1 /tmp/st/d/f2",
        '26674 openat /tmp/st/x, "y"',
        "26677 unlinkat /tmp/st/d/f2",  # unfinished, then resumed
        "26678 symlinkat /tmp/st/link",  # the link made, not its target
    ]


def test_outside_keeps_the_writes_beyond_every_allowed_place() -> None:
    found = syscalls.writes(LOG.splitlines(), "/tmp/st")
    beyond = [str(w) for w in syscalls.outside(found, ["/tmp/st/d", "/tmp/st/sub"])]
    assert beyond == ["26674 openat /tmp/st/f1", "26676 renameat2 /tmp/st/f1 /tmp/st/d/f2",
                      '26674 openat /tmp/st/x, "y"', "26678 symlinkat /tmp/st/link"]  # fmt: skip
