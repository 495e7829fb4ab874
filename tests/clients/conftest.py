"""Three client machines on one host: network namespaces with their own addresses (made and
removed here), a shared tmpfs they all see, and in them two `mountbench serve` and one
plain `fio --server`. One set for the whole module; a test that kills a server restarts it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import netns, realmounts


@dataclass
class Clients:
    shared: Path
    namespaces: list[netns.NetNs]
    servers: list[netns.Server]
    env: dict[str, str]

    @property
    def args(self) -> list[str]:
        return [f"--client={server.client}" for server in self.servers]

    def restart(self, index: int) -> netns.Server:
        """Start the index-th client's server again (serve for the first two, plain fio for the third)."""
        old = self.servers[index]
        old.kill()
        ns = self.namespaces[index]
        ns.servers = [s for s in ns.servers if s is not old]
        self.servers[index] = ns.serve(env=self.env) if index < 2 else ns.fio_server()
        return self.servers[index]

    def ensure_running(self) -> None:
        for index, server in enumerate(self.servers):
            if not server.alive():
                self.restart(index)

    def group_pids(self) -> set[int]:
        """Every process in the servers' process groups (fio forks one per connection and job)."""
        pids = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                pgid = os.getpgid(int(entry.name))
            except ProcessLookupError:
                continue
            if pgid in {s.proc.pid for s in self.servers}:
                pids.add(int(entry.name))
        return pids


@pytest.fixture(scope="module")
def clients(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clients]:
    db = tmp_path_factory.mktemp("clients") / "results.sqlite"
    env = dict(os.environ, MOUNTBENCH_DB=str(db))
    with ExitStack() as stack:
        try:
            shared = stack.enter_context(realmounts.tmpfs("256m"))
            namespaces = stack.enter_context(netns.clients(3))
            servers = [namespaces[0].serve(env=env), namespaces[1].serve(env=env), namespaces[2].fio_server()]
        except realmounts.Unavailable as exc:
            pytest.skip(f"client namespaces cannot be made here: {exc}")
        yield Clients(shared, namespaces, servers, env)
    assert netns.leftovers() == []


@pytest.fixture
def running(clients: Clients) -> Clients:
    clients.ensure_running()
    return clients
