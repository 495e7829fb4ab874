"""The fio-on-several-clients kind: how --client/--clients wrap fio workloads (pure parts)."""

import pytest

from mountbench.clients.addresses import ClientSpec
from mountbench.errors import UsageError
from mountbench.kinds import describe, make_workload
from mountbench.kinds.fioclients import ClientsJob, client_workloads
from mountbench.model import Workload
from mountbench.presets import load_preset

CLIENTS = (ClientSpec("10.0.0.2"), ClientSpec("10.0.0.3"), ClientSpec("node4", 9000))


def quick(name: str) -> Workload:
    return next(w for w in load_preset("quick").workloads if w.name == name)


def test_all_clients_at_once_keeps_the_name():
    (wrapped,) = client_workloads([quick("rnd4k-q1-read")], CLIENTS, ())
    assert wrapped.name == "rnd4k-q1-read" and wrapped.kind == "fioclients"
    assert wrapped.title == "RND 4K Q1 read, 3 clients"
    assert wrapped.description.sweep is None
    assert wrapped.description.headline == quick("rnd4k-q1-read").description.headline
    assert wrapped.description.summary.startswith("3 clients at once (each in its own directory): rw=randread")
    assert "clients=10.0.0.2,10.0.0.3,node4:9000" in wrapped.description.options


def test_counts_make_a_clients_sweep_of_the_first_n():
    variants = client_workloads([quick("seq1m-q8-read")], CLIENTS, (1, 2, 3))
    assert [w.name for w in variants] == ["seq1m-q8-read-c1", "seq1m-q8-read-c2", "seq1m-q8-read-c3"]
    points = [w.description.sweep for w in variants]
    assert {p.group for p in points} == {"clients seq1m-q8-read"}
    assert [(p.option, p.value, p.number) for p in points] == [("clients", "1", 1.0), ("clients", "2", 2.0),
                                                               ("clients", "3", 3.0)]  # fmt: skip
    assert [len(ClientsJob.from_spec(w.spec).clients) for w in variants] == [1, 2, 3]
    assert ClientsJob.from_spec(variants[1].spec).clients == CLIENTS[:2]


def test_space_is_one_working_set_per_client_in_one_group():
    job = quick("rnd4k-q1-read")
    variants = client_workloads([job], CLIENTS, (1, 3))
    assert [w.description.space_bytes for w in variants] == [job.description.space_bytes,
                                                            3 * job.description.space_bytes]  # fmt: skip
    assert {w.description.space_group for w in variants} == {job.description.space_group}


def test_unique_filename_0_means_one_shared_file_set():
    job = quick("rnd4k-q1-read")
    shared = make_workload(job.name, "fio", job.title, job.source,
                      {**job.spec, "options": [*job.spec["options"], ["unique_filename", "0"]]})  # fmt: skip
    (wrapped,) = client_workloads([shared], CLIENTS, ())
    assert ClientsJob.from_spec(wrapped.spec).shared
    assert wrapped.description.space_bytes == job.description.space_bytes
    assert "sharing one file set" in wrapped.description.summary


def test_tree_workloads_are_refused_with_the_fix():
    extract = next(w for w in load_preset("tree").workloads if w.name == "extract")
    with pytest.raises(UsageError, match="--client runs fio workloads only; extract run on this machine"):
        client_workloads([quick("rnd4k-q1-read"), extract], CLIENTS, ())


def test_the_description_survives_a_stored_round_trip():
    (wrapped,) = client_workloads([quick("rnd4k-q32-write")], CLIENTS, (2,))
    again = Workload.from_dict(wrapped.to_dict())
    assert again.description == wrapped.description == describe(again)
