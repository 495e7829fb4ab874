"""`run --against RUN|FILE`: the baseline run's workloads again, each result decided against the
baseline's (analysis/across.py), with an exit status, a Markdown summary and a JUnit file for CI.

What runs: the baseline's own workloads and everything that shapes them (its presets, job files,
--only, --sweep, --size, --runtime, --warmup, --drop-caches, --fsync-writes, clients and the
workload kinds' options such as --file-state), on the given targets or, with none, on the
baseline's own target paths. How many rounds may be changed (--repeat, --until, --budget,
--max-repeat), and --seed, --keep, --watch and --baseline; an option that would change what is
measured is refused, as are baselines measured otherwise (analysis/comparable.py: another machine,
fio, workloads or file state), before anything is written. Targets are paired with the baseline's
by path and filesystem, or as --against-target pairs them.

Exit status: 0, also when something regressed, unless --fail-on THRESHOLD is given: then 1 when any
comparison regressed beyond THRESHOLD (which is the threshold of every verdict; 10 % without it);
2 for bad input, as every command.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from mountbench.analysis import comparable
from mountbench.analysis.across import DEFAULT_THRESHOLD, Against, Pair
from mountbench.analysis.comparable import Difference, Facts, Storage
from mountbench.cli.options import given_flags, pop_run_options
from mountbench.engine.request import RunRequest
from mountbench.errors import ExitCode, MountbenchError, UsageError
from mountbench.fio.binary import FioInfo
from mountbench.host import facts as hostinfo
from mountbench.host import outputs
from mountbench.host.targets import find_mount, label_problem
from mountbench.model import RunData, RunOptions
from mountbench.records.export import read_document
from mountbench.store import Store

F = TypeVar("F", bound=Callable[..., Any])

# the command line may still choose how many rounds, and these (params of cli/options.py's flags)
ROUNDS = ("repeat", "until_text", "budget_text", "max_repeat")
KEPT_FREE = ("seed", "keep", "watch", "baseline")
PARAMS = ("against", "against_targets", "fail_on", "summary_md", "junit_out")
MAX_EARLIER = 30  # the stored runs, at most, that say how far a storage's level moves between runs


def against_options(function: F) -> F:
    """--against, --against-target, --fail-on, --summary-md and --junit (`run`'s, for CI)."""
    decorators = [
        click.option("--against", metavar="RUN|FILE", help="run the workloads of an earlier run (a stored run id, "
                     "'last', or a file from 'mountbench export') again and decide each against it: regressed, "
                     "improved, within the threshold or undecided"),
        click.option("--against-target", "against_targets", multiple=True, metavar="LABEL=BASELINE_LABEL",
                     help="with --against: compare target LABEL with the baseline's BASELINE_LABEL even though they "
                     "measured other storage (targets are otherwise paired by path and filesystem)"),
        click.option("--fail-on", metavar="THRESHOLD", help="with --against: the threshold of every verdict (e.g. "
                     "10%; default 10%), and exit status 1 when anything regressed beyond it"),
        click.option("--summary-md", type=click.Path(path_type=Path), metavar="FILE",
                     help="with --against: write a Markdown summary for a CI job's page (lines within 80 columns)"),
        click.option("--junit", "junit_out", type=click.Path(path_type=Path), metavar="FILE",
                     help="with --against: write JUnit XML (one testcase per target and workload)"),
    ]  # fmt: skip
    for decorate in reversed(decorators):
        function = decorate(function)
    return function


def parse_threshold(text: str) -> float:
    """'10%' or '0.1' -> 0.1; between 0.1 % and 100 %."""
    stripped = text.strip()
    try:
        value = float(stripped[:-1]) / 100 if stripped.endswith("%") else float(stripped)
    except ValueError:
        raise UsageError(f"--fail-on {text}: give a threshold such as 10% or 0.1") from None
    if not math.isfinite(value) or not 0.001 <= value <= 1:
        raise UsageError(f"--fail-on {text}: give a threshold between 0.1% and 100%, e.g. 10%")
    return value


class Regressed(MountbenchError):
    """--fail-on: a comparison regressed beyond the threshold (exit status 1, after every output is written)."""

    exit_code = ExitCode.FAILURE


@dataclass
class Gate:
    """An --against run from its options to its verdicts."""

    baseline: RunData
    source: str  # how the baseline is named in every output
    threshold: float
    fail_on: bool
    explicit: dict[str, str]  # --against-target: the run's label -> the baseline's
    options: RunOptions
    target_args: tuple[str, ...]
    summary: outputs.Output | None = None
    junit: outputs.Output | None = None
    db: Path = Path()
    pairs: tuple[Pair, ...] = ()
    warnings: tuple[Difference, ...] = ()

    def check(self, request: RunRequest, fio: FioInfo) -> list[str]:
        """Refuse a baseline measured otherwise, and pair the targets; the notes to print (warnings,
        renamed targets, pairs across storage). Nothing has been written yet."""
        now = Facts(hostinfo.collect(fio.version), request.config, request.workloads)
        found = comparable.differences(Facts.of(self.baseline), now, [w.name for w in self.baseline.workloads])
        refused = comparable.refusals(found)
        if refused:
            raise UsageError(
                f"cannot compare with baseline {self.source}: it was measured otherwise "
                f"({'; '.join(d.text for d in refused)}); its results would differ for that reason alone: "
                "record a new baseline here (mountbench run with the same options) and compare with it"
            )
        self.warnings = comparable.warnings(found)
        labels = {target.label for target in request.targets}
        unknown = [label for label in self.explicit if label not in labels]
        if unknown:
            raise UsageError(f"--against-target {unknown[0]}=…: no target of this run is labelled {unknown[0]!r} (they "
                             f"are {', '.join(sorted(labels))}); label it, e.g. {unknown[0]}=/some/dir")  # fmt: skip
        self.pairs = tuple(self._pair(target.label, target.path) for target in request.targets)
        paired = ", ".join(p.target if not p.renamed else f"{p.target} with its {p.baseline}" for p in self.pairs)
        notes = [f"--against {self.source}: {paired} against the baseline's samples, threshold "
                 f"±{self.threshold * 100:g}%"]  # fmt: skip
        if self.warnings:
            notes.append(f"--against: compared, though these differ: {'; '.join(d.text for d in self.warnings)}")
        for pair in self.pairs:
            if pair.across:
                notes.append(f"--against: {pair.target} is compared with the baseline's {pair.baseline} across "
                             f"storage ({pair.across}), as --against-target asks")  # fmt: skip
            elif pair.renamed:
                notes.append(f"--against: {pair.target} measured what the baseline's {pair.baseline} measured "
                             "(the same path and filesystem)")  # fmt: skip
        return notes

    def _pair(self, label: str, path: str) -> Pair:
        mount = find_mount(Path(path))
        here = Storage(path, mount.fstype, mount.source)
        theirs = {r.target.label: Storage.of(r) for r in self.baseline.targets}
        listed = ", ".join(f"{name} at {storage.text}" for name, storage in theirs.items())
        if label in self.explicit:
            wanted = self.explicit[label]
            if wanted not in theirs:
                raise UsageError(f"--against-target {label}={wanted}: the baseline has no target {wanted!r} (it has "
                                 f"{listed})")  # fmt: skip
            change = comparable.storage_change(theirs[wanted], here)
            return Pair(label, wanted, change)
        same = [name for name, storage in theirs.items() if not comparable.storage_change(storage, here)]
        if same:
            return Pair(label, label if label in same else same[0])
        moved = [(name, s) for name, s in theirs.items() if s.path == path]
        if moved:
            name, storage = moved[0]
            raise UsageError(
                f"target {label}: another filesystem under {path} than the baseline's {name} measured "
                f"({storage.filesystem} then, {here.filesystem} now): its results would not be a regression of that "
                f"storage; to compare them anyway, pair them: --against-target {label}={name}"
            )
        wanted = next(iter(theirs)) if len(theirs) == 1 else "BASELINE_LABEL"
        raise UsageError(
            f"target {label} ({here.text}) is none of the storage the baseline measured ({listed}); give one of its "
            f"paths, or pair them: --against-target {label}={wanted}"
        )

    def _earlier(self, run: RunData) -> dict[str, list[tuple[RunData, str]]]:
        """The stored runs before ``run`` that measured each paired baseline target's storage as the baseline
        did (same machine, fio and file state: per workload, analysis/across.shown_level checks the options),
        the baseline among them: the last MAX_EARLIER of them."""
        runs = {self.baseline.id: self.baseline}
        if self.db.is_file():
            with Store(self.db, writer=False) as store:
                rows = [row for row in store.list_runs() if row["status"] in ("complete", "interrupted")
                        and row["created_at"] < run.created_at and row["id"] not in (run.id, self.baseline.id)
                        and row["hostname"] == self.baseline.host.get("hostname")]  # fmt: skip
                for row in rows[-MAX_EARLIER:]:
                    found = store.load_run(row["id"])
                    refused = comparable.refusals(comparable.differences(Facts.of(self.baseline), Facts.of(found)))
                    if not [d for d in refused if not d.what.startswith("workload ")]:
                        runs[found.id] = found
        ordered = sorted(runs.values(), key=lambda r: r.created_at)
        wanted = {r.target.label: Storage.of(r) for r in self.baseline.targets}
        found: dict[str, list[tuple[RunData, str]]] = {}
        for pair in self.pairs:
            storage = wanted[pair.baseline]
            found[pair.baseline] = [(r, t.target.label) for r in ordered for t in r.targets if Storage.of(t) == storage]
        return found

    def finish(self, run: RunData, console: Console) -> Against:
        """Decide, print, write the summary and JUnit files; exit status 1 on a regression with --fail-on.
        The statistics and the report's modules load here, as print_run loads them (cli/console.py)."""
        from mountbench.analysis.across import decide_against
        from mountbench.report.gate import Context, junit, markdown, percent, terminal

        against = decide_against(run, self.baseline, self.pairs, self.threshold, self._earlier(run))
        context = Context(run, self.baseline, self.source, self.warnings, self.fail_on)
        for part in terminal(against, context):
            console.print(part)
        if self.summary is not None:
            self.summary.write_text(markdown(against, context))
        if self.junit is not None:
            self.junit.write_text(junit(against, context))
        if self.fail_on and against.regressed:
            found = against.regressed
            named = ", ".join(f"{o.target} {o.title}" for o in found[:3]) + (" …" if len(found) > 3 else "")
            raise Regressed(f"{len(found)} comparison{'s' if len(found) > 1 else ''} regressed beyond "
                            f"{percent(self.threshold)} (--fail-on): {named}")  # fmt: skip
        return against


def pop_gate(
    params: dict[str, Any],
    target: tuple[str, ...],
    db: Path,
    protect: list[outputs.Protected],
    *,
    resume: str | None = None,
    options_json: str | None = None,
) -> Gate | None:
    """The --against run the parameters ask for (their run options taken out too), or None; every
    refusal before anything is written."""
    against, explicit_args, fail_on, summary_md, junit_out = (params.pop(name) for name in PARAMS)
    if against is None:
        given = [flag for flag, value in (("--against-target", explicit_args), ("--fail-on", fail_on),
                                          ("--summary-md", summary_md), ("--junit", junit_out)) if value]  # fmt: skip
        if given:
            raise UsageError(f"{given[0]} goes with --against RUN|FILE (the baseline to compare with); add it, or "
                             f"drop {given[0]}")  # fmt: skip
        return None
    if resume or options_json:
        raise UsageError("--against starts a new run to compare with a baseline; --resume finishes an old one: "
                         "give one of them")  # fmt: skip
    refused = [flag for param, flag in given_flags(params).items() if param not in ROUNDS + KEPT_FREE]
    if refused:
        raise UsageError(
            f"--against runs the baseline's own workloads, with its options; {refused[0]} would measure something "
            f"else: drop it (how many rounds may change: --repeat, --until, --budget, --max-repeat)"
        )
    asked = set(given_flags(params))
    command_line = pop_run_options(params)
    threshold = parse_threshold(fail_on) if fail_on else DEFAULT_THRESHOLD
    explicit = dict(_explicit(text) for text in explicit_args)
    baseline, source = load_baseline(against, db)
    protect = [*protect, *outputs.inputs(baseline.config.job_files, "one of the baseline's job files")]
    if Path(against).is_file():
        protect += outputs.inputs([against], "the baseline's file")
    summary = outputs.check(summary_md, "--summary-md", protect) if summary_md else None
    junit_file = outputs.check(junit_out, "--junit", protect) if junit_out else None
    if baseline.config.lab is not None:
        raise UsageError(f"baseline {source} was made by the {baseline.config.lab.name} lab, whose targets lived "
                         "inside it; compare lab runs with 'mountbench report', not run --against")  # fmt: skip
    options = _options(baseline, command_line, asked)
    args = target or tuple(_own_target(r.target.label, r.target.path) for r in baseline.targets)
    gate = Gate(baseline, source, threshold, bool(fail_on), explicit, options, args, summary, junit_file, db)
    return gate


def _explicit(text: str) -> tuple[str, str]:
    label, sep, wanted = text.partition("=")
    if not sep or not label or not wanted:
        raise UsageError(f"--against-target {text}: write LABEL=BASELINE_LABEL, e.g. --against-target ram=disk")
    return label, wanted


def _own_target(label: str, path: str) -> str:
    """The baseline's target as a target argument: label=path, or the path alone when its label cannot
    be written so (an automatic label holding a '/': the same path gets it again)."""
    return path if label_problem(label) or "=" in label else f"{label}={path}"


def load_baseline(reference: str, db: Path) -> tuple[RunData, str]:
    """A stored run ('last', an id or its prefix) or the one run of an exported file; how to name it."""
    path = Path(reference).expanduser()
    if path.is_file() or reference.endswith(".json"):
        runs = read_document(path)
        if len(runs) != 1:
            ids = ", ".join(run.id for run in runs[:4]) or "none"
            raise UsageError(f"--against {reference} holds {len(runs)} runs ({ids}); export the one baseline: "
                             "mountbench export RUN --out FILE")  # fmt: skip
        return runs[0], f"{reference} (run {runs[0].id})"
    with Store(db, writer=False) as store:
        run = store.load_run(reference)
    if run.status == "running":
        raise UsageError(f"baseline run {run.id} is still running; wait for it, or compare with another run")
    if run.status == "failed":
        raise UsageError(f"baseline run {run.id} failed (every sample of it did): nothing to compare with; choose "
                         "another run ('mountbench list' shows them)")  # fmt: skip
    return run, f"run {run.id}"


def _options(baseline: RunData, command_line: RunOptions, asked: set[str]) -> RunOptions:
    """The baseline's run options (every one that shapes what is measured), with how many rounds and the
    free options as the command line gives them."""
    config = baseline.config
    chosen = {option.name: getattr(config, option.name) for option in fields(RunOptions)}
    chosen.update(seed=None, baseline=None, keep=False, watch=())
    if config.default_budget and config.budget is not None:  # the presets' own budget, grown with these targets
        chosen["budget"] = config.budget * 2 / max(2, len(baseline.targets))
    if asked & set(ROUNDS):
        for name in ("repeat", "until", "budget", "max_repeat"):
            chosen[name] = getattr(command_line, name)
        chosen["default_budget"] = False
    for name in KEPT_FREE:
        if name in asked:
            chosen[name] = getattr(command_line, name)
    return dataclasses.replace(RunOptions(), **chosen)
