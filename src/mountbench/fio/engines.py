"""fio's I/O engines sorted by what they touch: mountbench measures files in a directory, so
an engine that talks to the network, an object store or a device, opens a path of its own, or
does no I/O at all, cannot give a figure for a target, and a job using one is refused before the
first sample with the reason that fits. An engine that does file I/O is never refused for what
it touches (libcufile and libhipfile included: files through a GPU's buffers). An engine this
fio was built without is refused by name: it is never replaced by another."""

from __future__ import annotations

# Every engine fio has (3.33's and those added since, fio's engines/*.c), each in one class by what it
# touches (fio's HOWTO): a reason given for refusing one must be true of it.
# engines that read and write files in the job's directory: what mountbench measures. libcufile and
# libhipfile move a GPU's buffers to files (through the page cache with cuda_io=posix / rocm_io=posix,
# or GPUDirect Storage); windowsaio and solarisaio are the file engines of Windows and Solaris.
FILE_IO = frozenset(
    {"sync", "psync", "vsync", "pvsync", "pvsync2", "io_uring", "libaio", "posixaio", "solarisaio", "windowsaio",
     "mmap", "splice", "falloc", "e4defrag", "libpmem", "libcufile", "libhipfile"}
)  # fmt: skip
# engines whose "filename" is a host, a socket or a cluster's object: nothing is written in the target
NETWORK = frozenset(
    {"net", "netsplice", "rdma", "nbd", "libiscsi", "nfs", "librpma_apm_client", "librpma_apm_server",
     "librpma_gpspm_client", "librpma_gpspm_server", "gfapi", "gfapi_async", "libhdfs", "dfs", "ime_psync",
     "ime_psyncv", "ime_aio", "sheepdog"}
)  # fmt: skip
OBJECT_STORE = frozenset({"http", "rados", "rbd", "s3"})
# engines that drive a block or character device (or device memory), never files in a directory
DEVICE = frozenset({"sg", "mtd", "dev-dax", "libzbc", "io_uring_cmd", "xnvme", "spdk"})
# engines that open a path of their own, not fio's files: libblkio the device or file its libblkio_path
# names; pmemblk a libpmemblk pool (filename=PATH,BSIZE,SIZE) that fio creates itself
OWN_PATH = frozenset({"libblkio", "pmemblk"})
# engines that move no data to storage: their figures are fio's own speed (page_fault: anonymous memory)
NO_IO = frozenset({"null", "cpuio", "cpp_null", "page_fault"})
# engines that work on files but not on their data: file and directory operations
FILE_OPERATIONS = frozenset({"filecreate", "filestat", "filedelete", "ftruncate", "dircreate", "dirstat", "dirdelete"})
# engines that run other code: refused by name (fio/jobfile.py)
RUNS_PROGRAMS = frozenset({"exec", "external"})
KNOWN = FILE_IO | NETWORK | OBJECT_STORE | DEVICE | OWN_PATH | NO_IO | FILE_OPERATIONS | RUNS_PROGRAMS


def engine_name(value: str | None) -> str:
    """``libaio`` from ``ioengine=libaio``; psync when the job names none (fio's default here)."""
    return (value or "psync").split(":")[0].strip().lower()


def placement_problem(engine: str) -> str | None:
    """Why a job with this engine cannot measure a target directory; None when it can.
    Said before any path check, so an S3 key is not called a path outside the scratch directory."""
    if engine in OBJECT_STORE:
        return (
            f"ioengine={engine} talks to an object store over the network, not to files in the target directory; "
            "mountbench measures directories (for a cloud mount, mount it and give the mount point)"
        )
    if engine in NETWORK:
        return (
            f"ioengine={engine} moves data over the network or to a remote cluster, not to files in the target "
            "directory; run it with fio itself"
        )
    if engine in DEVICE:
        return (
            f"ioengine={engine} drives a device, not files in a directory; mountbench writes only inside "
            "a scratch directory of each target"
        )
    if engine == "libblkio":
        return (
            "ioengine=libblkio opens the device or file its libblkio_path names, not fio's files in the target "
            "directory; mountbench writes only inside a scratch directory of each target (use io_uring or libaio)"
        )
    if engine == "pmemblk":
        return (
            "ioengine=pmemblk keeps its blocks in a libpmemblk pool (filename=PATH,BSIZE,SIZE) that fio creates "
            "itself, not in files mountbench lays out and checks (use libpmem or psync on the mount)"
        )
    return None


def missing_engine(engine: str, available: frozenset[str], version: str) -> str | None:
    """'engine X is not in this fio 3.33' when fio was built without it; None otherwise (or
    when the list of engines is unknown)."""
    if not available or engine in available:
        return None
    release = version.removeprefix("fio-")
    return f"engine {engine} is not in this fio {release}; choose one of its engines (fio --enghelp)"


NO_IO_REASON = "does no I/O: its figures would be fio's own speed, not the target's; give the job a file engine"
