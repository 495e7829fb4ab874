"""Which xdist group each test runs in on CI's two workers (tests/conftest.py marks them)."""

from __future__ import annotations

# Two workers (scripts/test.sh: `-n 2 --dist loadgroup`), and still one test at a time on what
# the tests share. Group "host": every test that runs fio or mountbench sessions, mounts, servers,
# network namespaces or Ctrl-C on this machine; they run one after another on one worker, as on
# a single worker, because a session drops the page cache and reads block-device counters, and
# the nginx tests look for processes of their kind. Group "lab": the emulated guests, one after
# another. The lab touches none of what the host tests look at: it drops no host cache (its
# sessions run in the guest), mounts nothing on the host, and its nginx and fio run inside the
# guest; its disk image is opened O_DIRECT. Group "clients": the client machines (network
# namespaces with serve, fio's server or sshd in them), one after another, alongside the host's
# tests. What the two share: the page cache, which either may drop at any time (the one test
# that needs it left alone runs in the last part: support/timing.py's ALONE), and the CPU, as
# with the lab. Nothing else: the clients' namespaces, links and addresses are named by their
# pytest process (support/netns.py; the cloud lab names its own namespace with a prefix of its
# own), their targets are tmpfs mounts of their own, and the processes they look for carry their
# run's marker, their ssh config or their servers' process groups, while the host's tests look
# for none of theirs (nginx, fio by its job's directory, the cloud lab's by its work directory).
# tests/install (the wheel installed with pip, a throwaway user, the image built and run with
# Podman) runs fio and mountbench sessions: group "host", by default. Files in ALONGSIDE
# (in-process statistics, rendering, records; a report or chromium at most) take no group:
# either worker runs them. The tests that assert on speed (marker `timing`) and
# those in ALONE run afterwards, alone. xdist gives the group of the most tests to the first
# worker, the next to the second and the third to the worker that is free first; the tests of no
# group fill in after them. The groups come from the node ids (tests/conftest.py's scheduler):
# with pytest 9, xdist's own xdist_group marks no longer reach its scheduler (it renames
# item._nodeid, which pytest 9's nodeid does not read).
LAB = "labs/qemu/"
LAB_BENCHES = ("lab_boot", "studies_lab")  # test_bench_smoke.py params that boot a guest
# The image (tests/install/test_image.py and the image_fidelity bench's smoke run, which share its
# session-scoped build, so both on one worker) runs in group "lab" too: its build and its container run
# in a Podman state directory of their own (support/image.py) and look for nothing the host's tests
# start; its fio evicts only its own files. On the host worker it was the longest file (198 s of 1393 s,
# against 1096 s on the other worker).
IMAGE = ("install/test_image.py",)
IMAGE_BENCHES = ("image_fidelity",)
CLIENTS = "clients/"
CLIENT_BENCHES = ("clients_scaling", "ssh_clients")  # test_bench_smoke.py params with client namespaces
ALONGSIDE = (
    "analysis/",
    "fio/",
    "presets/",
    "records/",
    "report/",
    "runners/",
    "test_docs.py",
    "test_import_rules.py",
    "test_timing_list.py",
    "test_units.py",
    "cli/test_lazy_commands.py",
    "cli/test_history_cli.py",
    "cli/test_options.py",
    "cli/test_progress.py",
    "clients/test_invocation.py",
    "clients/test_results.py",
    "labs/cloud/test_cloudpick_report.py",
    "labs/containers/test_containerpick_report.py",
    "labs/containers/test_containers_units.py",
    "engine/test_budget.py",
    "engine/test_history.py",
    "engine/test_plan.py",
    "engine/test_session.py",
    "host/test_outputs.py",
    "host/test_container_mounts.py",
    "kinds/test_fio_sizes.py",
    "kinds/test_fio_sweeps.py",
    "kinds/test_fioclients.py",
    "kinds/test_kind_guard.py",
    "kinds/test_trees.py",
    "probe/test_probe_records.py",
    "cli/test_bad_input.py",  # REFUSALS files
    "cli/test_bad_input_escapes.py",
    "cli/test_fault_pass.py",
    "host/test_contain.py",
    "host/test_strace_parse.py",
)
# Files in ALONGSIDE that run mountbench commands which are refused before a run starts (or are
# dry runs, doctors, listings): fio is asked only to parse a job or to say its version, nothing is
# mounted, no page cache is dropped. Each ends every test by checking that no run began (its
# pytestmark uses tests/cli/conftest.py's no_run_started: a run stores itself before its first sample;
# an imported one keeps the time it began).
REFUSALS = ("cli/test_bad_input.py", "cli/test_bad_input_escapes.py", "cli/test_fault_pass.py")


def xdist_group_of(where: str, lab: bool, clients: bool = False) -> str | None:
    """The xdist group of a test file (a path relative to tests/), of a `lab`-marked test or of a
    bench smoke run on client namespaces (``clients``)."""
    if lab or where.startswith(LAB) or where in IMAGE:
        return "lab"
    if where.startswith(ALONGSIDE):
        return None
    if clients or where.startswith(CLIENTS):
        return "clients"
    return "host"


def xdist_group_of_nodeid(nodeid: str) -> str | None:
    """The group of a node id as the scheduler sees it: tests/<where>::<name>[params]."""
    path, _, name = nodeid.partition("::")
    where = path.removeprefix("tests/")
    bench = where == "test_bench_smoke.py"
    lab = bench and any(name.endswith(f"[{bench_name}]") for bench_name in (*LAB_BENCHES, *IMAGE_BENCHES))
    clients = bench and any(name.endswith(f"[{bench_name}]") for bench_name in CLIENT_BENCHES)
    return xdist_group_of(where, lab, clients)
