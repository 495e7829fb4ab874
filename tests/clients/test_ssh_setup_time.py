"""Sixteen ssh:// clients set up (logged in, fio's server started, tunnelled, checked) within 20 s
(issue 49: 58-62 s, the steps one phase after another for every client). Sixteen network namespaces
with an sshd each, as bench/ssh_clients.py --clients 16 makes them; the run is one tiny sample. Its
setup is from the command's start to its first sample's start (the files laid out included). A
`timing` test: it runs alone, on a quiet machine."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support import netns, realmounts, sshd

from mountbench.clients.sshremote import AT_ONCE
from mountbench.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.root]
CLIENTS = 16
SETUP_LIMIT_S = 20.0


def test_sixteen_ssh_clients_are_set_up_within_twenty_seconds(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces and sshd need root")
    assert AT_ONCE == 8  # a bound: 16 logins at once on 2 CPUs only queue
    with (
        tempfile.TemporaryDirectory(prefix="mb-s16-") as short,  # fio's socket path there: under 108 bytes
        realmounts.tmpfs("256m") as share,
        netns.clients(CLIENTS) as spaces,
    ):
        cache = Path(short)
        env_of = {i: {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/local/bin:/usr/bin:/bin"} for i in range(CLIENTS)}
        setup = sshd.setup(tmp_path / "keys", spaces, env_of)
        try:
            env = dict(os.environ, MOUNTBENCH_DB=str(tmp_path / "db.sqlite"), MOUNTBENCH_SSH_CONFIG=str(setup.config))
            given = [f"--client=ssh://ns{i + 1}" for i in range(CLIENTS)]
            started = time.time()
            done = subprocess.run(
                [sys.executable, "-m", "mountbench", "run", *given, f"share={share}", "--only", "rnd4k-q1-read",
                 "--size", "4M", "--runtime", "0.3", "--repeat", "1"],
                env=env, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            sshd.wait_until(lambda: not sshd.processes_with_marker(), timeout=20)
        finally:
            sshd.stop(setup.servers)
    with Store(tmp_path / "db.sqlite") as store:
        run = store.load_run("last")
    (sample,) = run.samples
    assert sample.ok and len(sample.clients) == CLIENTS, sample.error
    took = sample.started_at - started
    print(f"16 ssh:// clients set up in {took:.1f} s (load {os.getloadavg()[0]:.2f})")
    assert took < SETUP_LIMIT_S, f"setup took {took:.1f} s for {CLIENTS} clients"
