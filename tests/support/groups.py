"""Which xdist group each test runs in on CI's two workers (tests/conftest.py marks them)."""

from __future__ import annotations

# Two workers (scripts/test.sh: `-n 2 --dist loadgroup`), and still one test at a time on what
# the tests share. Group "host": every test that runs fio or mountbench sessions, mounts, servers,
# network namespaces or Ctrl-C; they run one after another on one worker, as on a single worker,
# because a session drops the page cache and reads block-device counters, and the nginx and
# client tests look for processes of their kind. Group "lab": the emulated guests, one after
# another on the other worker. The lab touches none of what the host tests look at: it drops no
# host cache (its sessions run in the guest), mounts nothing on the host, and its nginx and fio
# run inside the guest; its disk image is opened O_DIRECT. Files in ALONGSIDE (in-process
# statistics, rendering, records; a report or chromium at most) take no group: either worker
# runs them. The tests that assert on speed run afterwards, alone (marker `timing`).
# xdist gives the largest group to the first worker, the next to the second. The groups come from
# the node ids (tests/conftest.py's scheduler): with pytest 9, xdist's own xdist_group marks no
# longer reach its scheduler (it renames item._nodeid, which pytest 9's nodeid does not read).
LAB = "labs/qemu/"
LAB_BENCHES = ("lab_boot", "studies_lab")  # test_bench_smoke.py params that boot a guest
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
    "kinds/test_fio_sizes.py",
    "kinds/test_fio_sweeps.py",
    "kinds/test_fioclients.py",
    "kinds/test_kind_guard.py",
    "kinds/test_trees.py",
    "probe/test_probe_records.py",
)


def xdist_group_of(where: str, lab: bool) -> str | None:
    """The xdist group of a test file (a path relative to tests/) or of a `lab`-marked test."""
    if lab or where.startswith(LAB):
        return "lab"
    if where.startswith(ALONGSIDE):
        return None
    return "host"


def xdist_group_of_nodeid(nodeid: str) -> str | None:
    """The group of a node id as the scheduler sees it: tests/<where>::<name>[params]."""
    path, _, name = nodeid.partition("::")
    where = path.removeprefix("tests/")
    lab = where == "test_bench_smoke.py" and any(name.endswith(f"[{bench}]") for bench in LAB_BENCHES)
    return xdist_group_of(where, lab)
