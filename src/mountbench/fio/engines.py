"""fio's I/O engines sorted by what they touch: mountbench measures files in a directory, so
an engine that talks to the network, an object store or a device, or does no I/O at all,
cannot give a figure for a target, and a job using one is refused before the first sample
with the reason that fits. An engine this fio was built without is refused by name: it is
never replaced by another."""

from __future__ import annotations

# engines whose "filename" is a host, a socket or a cluster's object: nothing is written in the target
NETWORK = frozenset(
    {"net", "netsplice", "rdma", "nbd", "libiscsi", "nfs", "librpma_apm_client", "librpma_apm_server",
     "librpma_gpspm_client", "librpma_gpspm_server", "gfapi", "gfapi_async", "libhdfs", "dfs", "ime_psync",
     "ime_psyncv", "ime_aio", "sheepdog"}
)  # fmt: skip
OBJECT_STORE = frozenset({"http", "rados", "rbd", "s3"})
# engines that drive a block or character device (or memory), not files in a directory
DEVICE = frozenset(
    {"sg", "mtd", "dev-dax", "pmemblk", "libzbc", "io_uring_cmd", "xnvme", "spdk", "libblkio", "libcufile",
     "libhipfile", "windowsaio", "solarisaio"}
)  # fmt: skip
# engines that move no data: their figures are fio's own speed
NO_IO = frozenset({"null", "cpuio", "cpp_null"})
# engines that work on files but not on their data: file and directory operations
FILE_OPERATIONS = frozenset({"filecreate", "filestat", "filedelete", "ftruncate", "dircreate", "dirstat", "dirdelete"})


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
    return None


def missing_engine(engine: str, available: frozenset[str], version: str) -> str | None:
    """'engine X is not in this fio 3.33' when fio was built without it; None otherwise (or
    when the list of engines is unknown)."""
    if not available or engine in available:
        return None
    release = version.removeprefix("fio-")
    return f"engine {engine} is not in this fio {release}; choose one of its engines (fio --enghelp)"


NO_IO_REASON = "does no I/O: its figures would be fio's own speed, not the target's; give the job a file engine"
