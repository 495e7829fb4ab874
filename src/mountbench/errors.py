"""One exception family, mapped to exit codes in exactly one place (cli.main).

Library code raises these; it never prints or exits.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # an internal error (a bug): traceback with --debug
    USAGE = 2  # bad input or a missing prerequisite, with a one-line fix
    INTERRUPTED = 130  # Ctrl-C: what finished is kept


class MountbenchError(Exception):
    """Bad input or an unusable environment: one line naming the problem and the fix."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(MountbenchError):
    """The command line or a file it names is wrong."""


class TargetError(MountbenchError):
    """A target directory cannot be used (missing, not a directory, read-only, full)."""


class ToolMissing(MountbenchError):
    """An external engine (fio, tar, git, qemu, ...) is missing or too old."""


class StoreError(MountbenchError):
    """The results database cannot be opened, is newer than this version, or lacks a run."""


class RunFailed(MountbenchError):
    """A run ended with every one of its samples failed: nothing was measured."""

    exit_code = ExitCode.FAILURE


class ChecksFailed(MountbenchError):
    """`doctor` found problems; each was printed with its fix."""

    exit_code = ExitCode.FAILURE


class Interrupted(MountbenchError):
    """Ctrl-C or SIGTERM: finished samples are kept and the run can be resumed."""

    exit_code = ExitCode.INTERRUPTED

    def __init__(self, run_id: str, command: str = "mountbench run") -> None:
        super().__init__(f"interrupted; finished samples are kept. Resume with: {command} --resume {run_id}")
        self.run_id = run_id
