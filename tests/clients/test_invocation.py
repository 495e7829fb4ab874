"""The watch over one fio client process: time limit, unreachable clients, Ctrl-C."""

import socket
import sys
import time

from mountbench.clients.addresses import ClientSpec
from mountbench.clients.invocation import run_watched, unreachable


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_client_found_unreachable_after_the_expected_time_ends_the_process(tmp_path):
    lost = ClientSpec("127.0.0.1", closed_port())
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    t0 = time.monotonic()
    done = run_watched(hang, tmp_path, [lost], timeout=60, overdue_s=0.5)
    assert time.monotonic() - t0 < 10
    assert done.killed and not done.timed_out
    assert done.lost == ((lost.label, f"nothing listens on port {lost.port} any more"),)


def test_reachable_clients_wait_for_the_time_limit(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as server:
        alive = ClientSpec("127.0.0.1", server.getsockname()[1])
        done = run_watched([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, [alive],
                           timeout=1.5, overdue_s=0.2)  # fmt: skip
        assert done.timed_out and done.killed and not done.lost
        assert unreachable([alive]) == ()


def test_a_process_that_ends_in_time_is_just_waited_for(tmp_path):
    done = run_watched([sys.executable, "-c", "import sys; sys.stderr.write('said')"], tmp_path, [],
                       timeout=30, overdue_s=10)  # fmt: skip
    assert (done.returncode, done.stderr, done.killed) == (0, "said", False)
