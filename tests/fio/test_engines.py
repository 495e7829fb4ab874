"""fio's engines sorted by what they touch (fio/engines.py), checked against what each engine does
(fio's HOWTO and engines/*.c): a reason given for refusing one must be true of it."""

from __future__ import annotations

import pytest

from mountbench.fio import engines


@pytest.mark.parametrize("engine", ["libcufile", "libhipfile", "windowsaio", "solarisaio", "libpmem", "e4defrag"])
def test_engines_that_do_file_io_are_never_said_to_drive_a_device(engine: str):
    """Issue 49, item 20: libcufile and libhipfile read and write files in the job's directory (through the
    page cache with cuda_io=posix / rocm_io=posix, or GPUDirect Storage), and windowsaio and solarisaio are
    the file engines of Windows and Solaris; all four were refused as "drives a device"."""
    assert engines.placement_problem(engine) is None
    assert engine in engines.FILE_IO


@pytest.mark.parametrize("engine", ["sg", "mtd", "dev-dax", "libzbc", "io_uring_cmd", "xnvme", "spdk"])
def test_device_engines_are_said_to_drive_a_device(engine: str):
    assert "drives a device" in (engines.placement_problem(engine) or "")


def test_engines_with_a_path_of_their_own_or_no_data_say_so():
    assert "libblkio_path" in (engines.placement_problem("libblkio") or "")  # not fio's files: its own option's path
    assert "pool" in (engines.placement_problem("pmemblk") or "")  # a libpmemblk pool, not plain files
    assert "page_fault" in engines.NO_IO  # anonymous memory: no file, no storage


def test_every_engine_fio_has_is_sorted_once():
    """Each of fio's engines (3.33's and those added since) is in exactly one class."""
    classes = [engines.FILE_IO, engines.FILE_OPERATIONS, engines.NETWORK, engines.OBJECT_STORE, engines.DEVICE,
               engines.OWN_PATH, engines.NO_IO, engines.RUNS_PROGRAMS]  # fmt: skip
    for engine in engines.KNOWN:
        assert sum(engine in each for each in classes) == 1, engine
    assert frozenset().union(*classes) == engines.KNOWN


def test_a_gpu_file_engines_own_options_pass_so_the_reason_given_is_the_engine_itself():
    """libcufile's cuda_io= and gpu_dev_ids= (libhipfile's rocm_io=) choose how it moves files: they pass the
    allowlist, so a job using it is refused, where fio lacks it, as "engine libcufile is not in this fio"."""
    from mountbench.fio.jobfile import parse_sections

    text = "[a]\nioengine=libcufile\ncuda_io=posix\ngpu_dev_ids=0\n[b]\nioengine=libhipfile\nrocm_io=posix\n"
    assert [s.name for s in parse_sections(text)] == ["a", "b"]
