"""Does make, git, rsync -a or an editor's save-by-rename work there? Read from a probe's verdicts.

Each tool lists the capabilities it relies on and what goes wrong for it without each. A
tool "works" where all of them are ✓, is at risk of data loss ("‼") where one of them lost
data, and "≠" otherwise, naming each capability that is not ✓ with its errno and what it
breaks. Capabilities not tried (needs root, skipped) are left out, and said to be. Pure
functions of a :class:`~mountbench.probefacts.TargetProbe`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mountbench.probefacts import DATA_LOSS, HUNG, NEEDS_ROOT, NO, SKIPPED, YES, ProbeResult, TargetProbe

Status = Literal["works", "differs", "data loss"]
MARK: dict[str, str] = {"works": "✓", "differs": "≠", "data loss": "‼"}


@dataclass(frozen=True)
class Need:
    capability: str
    why: str  # what the tool does with it, i.e. what breaks without it


@dataclass(frozen=True)
class Tool:
    name: str
    needs: tuple[Need, ...]


TOOLS: tuple[Tool, ...] = (
    Tool(
        "make",
        (
            Need("mtime_granularity", "a change within the mtime step can look older than its target"),
            Need("content_times", "a changed input must get a newer mtime, or its target looks up to date"),
            Need("time_range", "inputs stamped at epoch 0 (reproducible builds) or past 2038 keep their times"),
            Need("utime_one", "touch -m of stamp files"),
        ),
    ),
    Tool(
        "git",
        (
            Need("rename_over", "index.lock and refs are renamed into place"),
            Need("fsync", "objects and refs are synced"),
            Need("chmod", "the executable bit (core.fileMode)"),
            Need("symlink", "links in the work tree (core.symlinks)"),
            Need("ctime", "the index compares ctime (core.trustctime)"),
            Need("content_times", "the index finds changed files by their mtime and ctime"),
            Need("append_one", "reflogs are appended with O_APPEND"),
            Need("create_mode", "new files follow the umask (core.sharedRepository)"),
            Need("lower_dir_rename", "git mv and checkouts rename directories"),
            Need("errno", "EEXIST on lock files, ENOTEMPTY when pruning directories"),
            Need("dir_rename_contents", "git mv of a directory, checkouts"),
            Need("unlink_open", "gc removes packs other git processes have open"),
        ),
    ),
    Tool(
        "rsync -a",
        (
            Need("rename_over", "each file is written to a temporary name, then renamed over"),
            Need("chmod", "-p: modes"),
            Need("chown_uid", "-o: owners (as root)"),
            Need("chown_gid", "-g: groups"),
            Need("symlink", "-l: links"),
            Need("symlink_times", "the times of links"),
            Need("utime_one", "-t: mtime set on its own"),
            Need("mtime_granularity", "-t: unchanged files look changed, or changed ones unchanged"),
            Need("content_times", "its quick check compares size and mtime: a changed file is skipped"),
            Need("time_range", "-t: times before 1980 or past 2038 come back as set"),
            Need("mknod", "-D: device files (as root)"),
        ),
    ),
    Tool(
        "editor save-by-rename",
        (
            Need("rename_over", "the new version is renamed over the old"),
            Need("fsync", "the new version is synced before the rename"),
            Need("chmod", "the file keeps its mode"),
            Need("chown_uid", "the file keeps its owner"),
        ),
    ),
)


@dataclass(frozen=True)
class Problem:
    capability: str
    title: str
    verdict: str
    errno: str | None
    data_loss: bool
    why: str

    def text(self) -> str:
        mark = "‼" if self.data_loss else {NO: "✗", HUNG: "hung"}.get(self.verdict, "≠")
        errno = f" {self.errno}" if self.errno and not self.data_loss else ""
        return f"{self.title} {mark}{errno}: {self.why}"


@dataclass(frozen=True)
class ToolVerdict:
    tool: str
    status: Status
    problems: tuple[Problem, ...]
    untried: tuple[str, ...]  # capabilities it needs that were not tried (needs root, skipped)

    def text(self) -> str:
        """ "git ✓", "git ≠ (symlinks ✗ EPERM: links in the work tree …)"."""
        said = f"{self.tool} {MARK[self.status]}"
        if self.problems:
            said += " (" + "; ".join(p.text() for p in self.problems) + ")"
        if self.untried:
            said += f" [not tried: {', '.join(self.untried)}]"
        return said

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "status": self.status,
            "problems": [
                {
                    "capability": p.capability,
                    "verdict": p.verdict,
                    "errno": p.errno,
                    "data_loss": p.data_loss,
                    "why": p.why,
                }
                for p in self.problems
            ],
            "untried": list(self.untried),
        }


def _result(probe: TargetProbe, capability: str) -> ProbeResult | None:
    for r in probe.results:
        if r.capability == capability:
            return r
    return None


def tool_verdict(probe: TargetProbe, tool: Tool) -> ToolVerdict:
    problems, untried = [], []
    for need in tool.needs:
        r = _result(probe, need.capability)
        if r is None:
            continue
        if r.verdict in (NEEDS_ROOT, SKIPPED):
            untried.append(r.title)
        elif r.verdict != YES:
            problems.append(Problem(r.capability, r.title, r.verdict, r.errno, r.severity == DATA_LOSS, need.why))
    status: Status = "data loss" if any(p.data_loss for p in problems) else "differs" if problems else "works"
    return ToolVerdict(tool.name, status, tuple(problems), tuple(untried))


def tool_verdicts(probe: TargetProbe) -> list[ToolVerdict]:
    return [tool_verdict(probe, tool) for tool in TOOLS]


def summary_line(probe: TargetProbe) -> str:
    """One line: the mount gone, or how many capabilities are as on a local filesystem, then
    each tool's verdict in short ("make ✓ · git ≠ · rsync -a ✓ · editor save-by-rename ‼")."""
    tried = [r for r in probe.results if r.verdict not in (NEEDS_ROOT, SKIPPED)]
    local = sum(1 for r in tried if r.verdict == YES)
    tools = " · ".join(f"{v.tool} {MARK[v.status]}" for v in tool_verdicts(probe))
    line = f"{local} of {len(tried)} capabilities tried as on a local filesystem; {tools}"
    if probe.gone:
        line = f"{probe.gone}; {line}"
    return line


def tool_notes(probe: TargetProbe) -> list[str]:
    """One line per tool that is not plainly ✓: what breaks for it there."""
    return [v.text() for v in tool_verdicts(probe) if v.status != "works" or v.untried]
