"""Every client checked before anything runs, all clients at once:

1. reachable: a TCP connection to its fio port;
2. the same fio major.minor as the controller (fio's client/server protocol changes
   between versions), from fio's own probe reply; its host facts, from `mountbench
   serve`'s side channel when that is the server ("unknown" with a plain fio server);
3. once the run's scratch directories exist: each client writes a 4 KiB file in its own
   directory with a tiny real fio job (buffered, then O_DIRECT), and the controller
   checks it sees that file, so controller and clients work on the same directory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mountbench.clients import agent
from mountbench.clients.addresses import ClientSpec
from mountbench.clients.fioprobe import (
    ProtocolMismatch,
    errno_text,
    identify,
    identify_all,
    run_client_job,
    same_major_minor,
)
from mountbench.clients.fioprobe import check_reachable as tcp_check
from mountbench.errors import MountbenchError, TargetError, UsageError
from mountbench.fio.binary import FioInfo, parse_fio_version
from mountbench.fio.parse import FioOutputError, load_fio_json

CHECK_FILE = ".mountbench-check"
MAX_PARALLEL = 8  # clients checked at a time: each check is a fio process on this machine too
UNKNOWN = "unknown"
T = TypeVar("T")


@dataclass(frozen=True)
class WriteCheck:
    """What a client's tiny write job found in its directory of one target."""

    odirect: bool
    odirect_detail: str  # "accepted" or the errno


def check_clients(fio: FioInfo, clients: Sequence[ClientSpec]) -> dict[str, dict[str, Any]]:
    """Reachable, same fio major.minor; the host facts of each client (label -> facts).
    Raises UsageError naming every client that failed (one line)."""
    results = _each(clients, lambda client: _check_one(fio, client))
    problems = [str(outcome) for outcome in results.values() if isinstance(outcome, MountbenchError)]
    if problems:
        raise UsageError("; ".join(problems))
    return {label: outcome for label, outcome in results.items() if isinstance(outcome, dict)}


def check_tunnels(fio: FioInfo, clients: Sequence[ClientSpec]) -> None:
    """ssh:// clients, whose host facts came over SSH: their fio servers answer through their tunnels with
    the controller's fio major.minor. One fio process asks them all (each check is a fio process on this
    machine: 16 of them cost seconds of CPU); when not every one answered as it should, each is asked
    alone, so the one-line error names which (raises UsageError)."""
    versions = identify_all(fio.path, list(clients))
    if versions is not None and all(same_major_minor(fio.version_tuple, parse_fio_version(v)) for v in versions):
        return
    check_clients(fio, clients)


def _check_one(fio: FioInfo, client: ClientSpec) -> dict[str, Any]:
    tcp_check(client)
    try:
        who = identify(fio.path, client)
    except ProtocolMismatch:
        served = (
            None if client.ssh else agent.query_facts(client, [])
        )  # `mountbench serve` there can still say which fio it runs
        if served is not None and served.get("fio_version"):
            _refuse_version(fio, client, str(served["fio_version"]))
        raise
    _refuse_version(fio, client, who.fio_version)
    facts: dict[str, Any] = {
        "label": client.label,
        "address": client.destination if client.ssh else f"{client.host}:{client.port}",
        "hostname": who.hostname,
        "os": who.os,
        "arch": who.arch,
        "fio_version": who.fio_version,
        "server": "fio --server over ssh" if client.ssh else "fio --server",
        "kernel": UNKNOWN,
    }
    if client.ssh:
        return facts  # its host facts come over its SSH connection (clients/sshremote.py)
    served = agent.query_facts(client, [])
    if served is not None:
        facts |= {key: value for key, value in served.items() if key not in ("label", "address", "paths", "os")}
        facts["server"] = "mountbench serve"  # "os" stays fio's word for it, the same on every kind of server
        facts |= agent.clock_facts(client)  # for its start skew and its start barrier
    return facts


def refuse_one_machine_twice(facts: Mapping[str, Mapping[str, Any]]) -> None:
    """Two clients that are one machine (``ssh://h`` and ``ssh://h:22``, an address and its
    name, an ``ssh://`` client and a `serve` on it) would load it twice and share its page
    cache: refused, as found by the machine's own identity (its machine-id and this boot's
    id), never by the spelling. Clients that cannot say (a plain fio server, no machine-id)
    are not compared. The clients are named in the order of their labels (the facts arrive in
    whatever order the machines answered)."""
    seen: dict[tuple[str, str], str] = {}
    for label, fact in sorted(facts.items()):
        machine, boot = str(fact.get("machine_id") or ""), str(fact.get("boot_id") or "")
        if not machine or machine == UNKNOWN or not boot or boot == UNKNOWN:
            continue
        first = seen.setdefault((machine, boot), label)
        if first != label:
            raise UsageError(
                f"clients {first} and {label} are one machine (machine-id {machine[:12]}…, the same boot): "
                "give each machine once"
            )


def _refuse_version(fio: FioInfo, client: ClientSpec, theirs: str) -> None:
    ours = fio.version_tuple
    if not same_major_minor(ours, parse_fio_version(theirs)):
        raise UsageError(
            f"client {client.label} runs {theirs} but this controller runs {fio.version}: fio's client/server "
            f"protocol needs the same major.minor version on both; install fio {'.'.join(map(str, ours[:2]))} there"
        )


def add_path_facts(facts: dict[str, dict[str, Any]], clients: Sequence[ClientSpec], paths: Sequence[str]) -> None:
    """What each target path is on each client (filesystem, mount, free space) where
    `mountbench serve` can say; "unknown" on a plain fio server. Updates ``facts`` in place."""

    def one(client: ClientSpec) -> dict[str, Any]:
        unknown = {path: {"fstype": UNKNOWN} for path in paths}
        if facts.get(client.label, {}).get("server") != "mountbench serve":
            return unknown
        served = agent.query_facts(client, list(paths))
        return {**unknown, **(served or {}).get("paths", {})}

    for label, described in _each(clients, one).items():
        if isinstance(described, dict):
            facts.setdefault(label, {})["paths"] = described


def check_writable(fio_path: str, clients: Sequence[ClientSpec], scratch: Path, workdir: Path) -> dict[str, WriteCheck]:
    """Each client writes CHECK_FILE into ``scratch/<its dir>`` (which the controller made)
    with fio, buffered then with O_DIRECT; the controller must then see the file.
    Raises TargetError (one line) for a client that cannot write there or whose files
    this machine does not see."""
    results = _each(clients, lambda client: _write_one(fio_path, client, scratch, workdir))
    problems = [str(outcome) for outcome in results.values() if isinstance(outcome, MountbenchError)]
    if problems:
        raise TargetError("; ".join(problems))
    return {label: outcome for label, outcome in results.items() if isinstance(outcome, WriteCheck)}


def _write_one(fio_path: str, client: ClientSpec, scratch: Path, workdir: Path) -> WriteCheck:
    directory = scratch / client.dirname
    job = workdir / f"check-{client.dirname}.fio"
    job.write_text(
        "[global]\n"
        f"directory={directory}\n"
        f"filename={CHECK_FILE}\n"
        "unique_filename=0\nsize=4k\nbs=4k\nrw=write\nioengine=psync\n"
        "[buffered]\n"
        "[direct]\ndirect=1\nstonewall\n"
    )
    output = run_client_job(fio_path, [(client, job)], output_format="json", cwd=workdir)
    target = scratch.parent
    try:
        entries = {e.get("jobname"): e for e in load_fio_json(output).get("client_stats", [])}
    except FioOutputError:
        entries = {}
    buffered, direct = entries.get("buffered"), entries.get("direct")
    if buffered is None:
        said = _fio_lines(output)
        if "is not a directory" in said or "No such file" in said:
            raise TargetError(
                f"client {client.label} does not see {directory} ({said}): the controller and every client must "
                f"see the shared directory {target} at the same path"
            )
        raise TargetError(
            f"client {client.label} could not run a write check in {target}" + (f" ({said})" if said else "")
        )
    if int(buffered.get("error", 0) or 0):
        raise TargetError(
            f"client {client.label} cannot write in {target} ({errno_text(int(buffered['error']))}); "
            "check its permissions and mount options there"
        )
    seen = directory / CHECK_FILE
    if not seen.is_file():
        raise TargetError(
            f"client {client.label} wrote {CHECK_FILE} in its {directory}, but this machine does not see it there: "
            f"the controller and every client must see the same shared directory at {target}"
        )
    seen.unlink(missing_ok=True)
    direct_error = int((direct or {}).get("error", 0) or 0) if direct is not None else -1
    if direct_error == 0:
        return WriteCheck(True, "accepted")
    return WriteCheck(False, errno_text(direct_error) if direct_error > 0 else "not checked")


def _each(clients: Sequence[ClientSpec], check: Callable[[ClientSpec], T]) -> dict[str, T | MountbenchError]:
    """Run ``check`` for every client at once; a MountbenchError is kept as that client's result."""

    def guarded(client: ClientSpec) -> T | MountbenchError:
        try:
            return check(client)
        except MountbenchError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, max(1, len(clients)))) as pool:
        outcomes = list(pool.map(guarded, clients))
    return {client.label: outcome for client, outcome in zip(clients, outcomes, strict=True)}


def _fio_lines(output: str) -> str:
    """fio's own messages (not its JSON), shortened."""
    text = output[: output.find("{")] if "{" in output else output
    lines = [line.strip() for line in text.splitlines() if "fio:" in line]
    return "; ".join(dict.fromkeys(lines))[:300]
