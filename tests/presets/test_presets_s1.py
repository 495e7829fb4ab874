"""Preset s1 (study S1) and how --size scales it: the ten files keep their 80–100 MiB shape."""

from __future__ import annotations

from mountbench.engine.workloads import assemble
from mountbench.kinds.fio import scale_filesize
from mountbench.presets import load_preset

MIB = 1024 * 1024


def _option(workload, key):
    values = [v for k, v in workload.spec["options"] if k == key]
    return values[-1] if values else None


def test_s1_has_the_study_cases_and_both_application_kinds():
    preset = load_preset("s1")
    kinds = {w.name: w.kind for w in preset.workloads}
    assert kinds == {
        "one-file-seq-read": "fio", "one-file-rand-read": "fio", "ten-files-seq-read": "fio",
        "ten-files-rand-read": "fio", "http-sendfile": "http", "http-no-sendfile": "http",
        "startup-cold": "startup", "startup-warm": "startup",
    }  # fmt: skip
    by_name = {w.name: w for w in preset.workloads}
    assert _option(by_name["ten-files-seq-read"], "nrfiles") == "10"
    assert _option(by_name["one-file-rand-read"], "numjobs") == "1"
    assert by_name["http-sendfile"].spec["sendfile"] and not by_name["http-no-sendfile"].spec["sendfile"]
    assert {by_name["startup-cold"].spec["mode"], by_name["startup-warm"].spec["mode"]} == {"cold", "warm"}


def test_size_scales_the_files_and_the_http_set_and_leaves_startup_alone():
    workloads = {w.name: w for w in assemble(["s1"], [], size=64 * MIB)}
    assert _option(workloads["one-file-seq-read"], "size") == str(64 * MIB)
    ten = workloads["ten-files-rand-read"]
    low, high = map(int, _option(ten, "filesize").split("-"))
    assert 10 * high <= 64 * MIB and 0.75 < low / high < 0.85  # 80–100 MiB, scaled together
    assert ten.description.space_bytes <= 64 * MIB
    files = workloads["http-sendfile"].spec["files"]  # 32 MiB beside 1 GiB: 2 MiB beside 64 MiB
    assert files[-1] == MIB and files[-2] == MIB // 2 and sum(files) <= 2 * MIB
    assert workloads["http-sendfile"].description.space_bytes == sum(files)
    assert {w.spec["files"][-1] for w in assemble(["s1"], []) if w.kind == "http"} == {16 * MIB}  # as S1, unscaled
    assert workloads["startup-cold"].spec == load_preset("s1").workloads[6].spec


def test_scale_filesize():
    assert scale_filesize("80m-100m", 0.1, floor=4096) == f"{8 * MIB}-{10 * MIB}"
    assert scale_filesize("4m", 0.001, floor=MIB) == str(MIB)  # never under a block
    assert scale_filesize("$mb_memory", 0.5, floor=4096) is None


def test_a_size_too_small_for_ten_one_block_files_grows_to_hold_them():
    """--size 8M: ten files of at least one 1 MiB block need 10 MiB; with size=8M fio would
    write 8 files and leave the last two as holes (caught as 'working file incomplete')."""
    seq = {w.name: w for w in assemble(["s1"], [], size=8 * MIB)}["ten-files-seq-read"]
    _low, high = map(int, _option(seq, "filesize").split("-"))
    assert high == MIB and int(_option(seq, "size")) == 10 * MIB
