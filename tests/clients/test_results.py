"""mountbench's own aggregate of fio's client/server JSON, checked by hand on recorded output
(3 fio servers in network namespaces on one shared tmpfs; one run with a server killed)."""

import math
from fractions import Fraction

import pytest

from mountbench.clients.addresses import ClientSpec
from mountbench.clients.results import (
    FIO_ALL_CLIENTS,
    all_clients_disagreement,
    clients_outcome,
    split_entries,
)
from mountbench.fio.parse import load_fio_json


def recorded(data_dir, name):
    text = (data_dir / "fio" / name).read_text()
    document = load_fio_json(text)
    entries = [e for e in document["client_stats"] if e["jobname"] != "All clients"]
    clients = [ClientSpec(e["hostname"], e["port"]) for e in entries]
    return text, document, clients


def kth_smallest_percentile(bins: dict[str, int], pct: str) -> float:
    """By hand: lay every latency out in order and take the ceil(p·N/100)-th one."""
    values = sorted((int(v), n) for v, n in bins.items())
    total = sum(n for _, n in values)
    k = math.ceil(Fraction(pct) * total / 100)
    seen = 0
    for value, count in values:
        seen += count
        if seen >= k:
            return value / 1e9
    raise AssertionError("ran out of values")


def test_the_hand_method_reproduces_fios_own_percentiles_for_each_client(data_dir):
    _, document, _ = recorded(data_dir, "clients-3.json+")
    for entry in document["client_stats"][:3]:
        lat = entry["read"]["lat_ns"]
        for pct, value in lat["percentile"].items():
            assert kth_smallest_percentile(lat["bins"], pct) == pytest.approx(value / 1e9), pct


def test_aggregate_is_the_sum_and_percentiles_come_from_the_merged_histograms(data_dir):
    text, document, clients = recorded(data_dir, "clients-3.json+")
    outcome = clients_outcome(document, clients, text)
    assert not outcome.failed
    entries = {e["hostname"]: e for e in document["client_stats"] if e["jobname"] != "All clients"}
    parts = {c.client: c for c in outcome.clients}
    assert set(parts) == {c.label for c in clients}
    for client in clients:
        assert parts[client.label].metrics["read.iops"] == pytest.approx(entries[client.host]["read"]["iops"])
    for metric in ("read.iops", "read.bw", "read.bytes"):
        assert outcome.aggregate[metric] == pytest.approx(sum(p.metrics[metric] for p in parts.values()))
    merged: dict[str, int] = {}
    for entry in entries.values():
        for value, count in entry["read"]["lat_ns"]["bins"].items():
            merged[value] = merged.get(value, 0) + count
    wanted = next(iter(entries.values()))["read"]["lat_ns"]["percentile"]
    for pct in wanted:
        name = f"read.lat_p{float(pct):g}"
        assert outcome.aggregate[name] == pytest.approx(kth_smallest_percentile(merged, pct)), name
        own = [p.metrics[name] for p in parts.values()]
        assert min(own) <= outcome.aggregate[name] <= max(own)
    n = [e["read"]["lat_ns"]["N"] for e in entries.values()]
    means = [e["read"]["lat_ns"]["mean"] for e in entries.values()]
    assert outcome.aggregate["read.lat_mean"] == pytest.approx(
        sum(a * b for a, b in zip(n, means, strict=False)) / sum(n) / 1e9
    )


def test_fios_all_clients_entry_is_left_out_of_the_clients(data_dir):
    _, document, clients = recorded(data_dir, "clients-3.json+")
    per_client, fio_all = split_entries(document, clients)
    assert [e["jobname"] for e in fio_all] == ["All clients"]
    assert all(len(entries) == 1 for entries in per_client.values())


def test_a_killed_server_makes_its_client_fail_by_name_and_keeps_the_others(data_dir):
    text, document, present = recorded(data_dir, "clients-3-one-killed.json+")
    assert len(present) == 2
    block = present[0].host.rsplit(".", 2)[0]  # 10.x.<n>.2: the missing one is the third address
    killed = next(
        ClientSpec(f"{block}.{i}.2")
        for i in (1, 2, 3)
        if ClientSpec(f"{block}.{i}.2").host not in {c.host for c in present}
    )
    clients = [*present, killed]
    outcome = clients_outcome(document, clients, text)
    assert outcome.aggregate == {}
    assert [c.client for c in outcome.failed] == [killed.label]
    assert outcome.failed[0].error.startswith(f"client {killed.label} disconnected mid-sample")
    assert all(c.metrics["read.iops"] > 0 for c in outcome.clients if not c.error)


def test_clients_that_lost_their_results_with_another_are_not_blamed():
    clients = [ClientSpec("10.0.0.2"), ClientSpec("10.0.0.3")]
    text = "client: host=10.0.0.3 disconnected\n"
    outcome = clients_outcome({"client_stats": []}, clients, text)
    errors = {c.client: c.error for c in outcome.clients}
    assert errors["10.0.0.3"].startswith("client 10.0.0.3 disconnected")
    assert errors["10.0.0.2"] == "client 10.0.0.2 delivered no results (fio's client ended when 10.0.0.3 failed)"


def test_all_clients_disagreement_is_a_caveat_only_beyond_rounding():
    ours = {"read.iops": 1000.0, "read.bw": 4.0e6}
    assert all_clients_disagreement(ours, {"read.iops": 1010.0, "read.bw": 4.02e6}) == ()
    (caveat,) = all_clients_disagreement(ours, {"read.iops": 900.0, "read.bw": 4.0e6})
    assert caveat.code == FIO_ALL_CLIENTS
    assert "read IOPS" in caveat.text and "bandwidth" not in caveat.text
    assert "mountbench reports the sum" in caveat.text


def test_recorded_all_clients_figure_is_compared(data_dir):
    """fio divides every client's I/O by the longest runtime: its figure is below the sum
    whenever the clients ran for different times (here by the recorded amount)."""
    text, document, clients = recorded(data_dir, "clients-3.json+")
    outcome = clients_outcome(document, clients, text)
    fio_all = next(e for e in document["client_stats"] if e["jobname"] == "All clients")["read"]["iops"]
    gap = abs(fio_all - outcome.aggregate["read.iops"]) / outcome.aggregate["read.iops"]
    assert bool(outcome.caveats) == (gap > 0.02)


# --- start skew and overlap (pure) ----------------------------------------------------------------


def test_activity_span_reads_the_clients_own_epoch_stamps_across_job_logs():
    from mountbench.clients.results import activity_span

    job1 = "1795568352025, 4006, 0, 0, 0\n1795568352035, 4100, 0, 0, 0\n1795568354015, 4974, 0, 0, 0\n"
    job2 = "1795568352045, 4006, 1, 0, 0\n1795568354030, 4974, 1, 0, 0\n"
    assert activity_span([job1, job2]) == (1795568352015, 1795568354030)
    assert activity_span(["", "garbage\n"]) is None


def test_overlap_and_skew_of_three_clients():
    from mountbench.clients.results import overlap, start_offsets

    spans = {"a": (1000.0, 3000.0), "b": (1100.0, 3100.0), "c": (1200.0, 3200.0)}
    assert overlap(spans) == pytest.approx(1800 / 2200)
    offsets = start_offsets(spans)
    assert offsets == {"a": (0.0, 2.0), "b": (0.1, 2.0), "c": pytest.approx((0.2, 2.0))}
    assert overlap({"a": (0.0, 1.0), "b": (2.0, 3.0)}) == 0.0  # one after the other: never together
    assert overlap({"a": (0.0, 1.0)}) is None


def test_a_sample_whose_clients_overlapped_less_than_90_percent_gets_a_caveat():
    from mountbench.clients.results import ACTIVE, LOW_OVERLAP, START_OFFSET, overlap_caveat, overlap_of
    from mountbench.model import ClientResult

    def part(name, start, active):
        return ClientResult(name, {"read.iops": 1.0, START_OFFSET: start, ACTIVE: active})

    tight = [part("a", 0.0, 2.0), part("b", 0.05, 2.0)]
    skew, together = overlap_of(tight)
    assert skew == pytest.approx(0.05) and together == pytest.approx(1.95 / 2.05)
    assert overlap_caveat(skew, together) == ()
    loose = [part("a", 0.0, 1.0), part("b", 0.3, 1.0), ClientResult("c", {}, "lost")]
    skew, together = overlap_of(loose)
    (caveat,) = overlap_caveat(skew, together)
    assert caveat.code == LOW_OVERLAP and "only 54% of the sample (start skew 300 ms)" in caveat.text


def test_fio_messages_name_a_client_by_its_whole_address():
    from mountbench.clients.results import clients_outcome

    a, b = (
        ClientSpec("x", None, ssh=True).dialed("/tmp/d/ssh__x_22.fio"),
        ClientSpec("y", None, ssh=True).dialed("/tmp/d/ssh__x_22.fio.2"),
    )
    text = "client: host=ssh__x_22.fio.2 disconnected\n"
    outcome = clients_outcome({"client_stats": []}, [a, b], text)
    by = {c.client: c.error for c in outcome.clients}
    assert "disconnected" in by["ssh://y"] and "disconnected" not in by["ssh://x"]


def test_remote_facts_script_output_is_read_into_host_facts():
    from mountbench.clients.sshscripts import parse_facts

    facts = parse_facts(
        "hostname=node1\nkernel=6.1.0-18-amd64\narch=x86_64\nos=Linux\ncpu_model=AMD EPYC 7B13\ncpu_count=8\n"
        "ram_kib=16384000\nfio_version=fio-3.33\npath=/mnt/x|nfs4 srv:/export /mnt/x\npath=/nope|missing\n"
    )
    assert facts["kernel"] == "6.1.0-18-amd64" and facts["cpu_count"] == 8 and facts["ram_bytes"] == 16384000 * 1024
    assert facts["fio_version"] == "fio-3.33"
    assert facts["paths"]["/mnt/x"] == {"fstype": "nfs4", "mount_source": "srv:/export", "mount_point": "/mnt/x"}
    assert facts["paths"]["/nope"]["fstype"] == "unknown"
    assert parse_facts("fio_version=\n")["fio_version"] == ""  # no fio there
