"""nfs: a host directory exported by a private nfs-ganesha (VFS backend) on the host's
loopback, mounted by the guest's kernel NFS client over QEMU user networking.

The guest mounts with `mount -i` (the kernel's text mount options, no mount.nfs
helper, no portmapper): the server's address and ports are given explicitly.
NFSv4.1 needs one port. NFSv3 needs a second one for the MOUNT protocol, and
ganesha starts its v3 service only when it can register with the host's rpcbind
(labs/qemu/ganesha.py); v3 mounts use `nolock` since the lab runs no lock manager
(NLM), so v3 locks stay inside the guest, which the probe shows.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import ClassVar

from mountbench.errors import ToolMissing
from mountbench.host import facts as hostinfo
from mountbench.host import process as procs
from mountbench.labs.qemu.ganesha import (
    GaneshaConfig,
    find_ganesha,
    find_vfs_fsal,
    ganesha_argv,
    rpcbind_running,
)
from mountbench.labs.qemu.mounts.guestmount import (
    HOST_FROM_GUEST,
    GuestMount,
    HostService,
    MountHost,
    MountSpec,
    MountType,
    Option,
    Problem,
)
from mountbench.labs.qemu.qemu import Device
from mountbench.units import parse_size

GANESHA_PACKAGES = "apt-get install nfs-ganesha nfs-ganesha-vfs"

# mb_nfs SLUG FSTYPE SOURCE OPTIONS: mount with the kernel's own option parser (-i: no
# mount.nfs helper, so the host needs no nfs-common); retried while the network comes up.
GUEST_HELPERS = r"""
mb_nfs() {  # SLUG FSTYPE SOURCE OPTIONS
    mkdir -p "/mnt/$1"
    for attempt in 1 2 3; do
        if out=$(mount -i -t "$2" -o "$4" "$3" "/mnt/$1" 2>&1); then
            mb_record "$1"
            return
        fi
        sleep "$attempt"
    done
    mb_failed "$1" "mount -t $2 $3 -o $4: $out"
}
"""


def nfs_options(spec: MountSpec, service: HostService, mount_port: int | None = None) -> str:
    """The guest's NFS mount options: server address and ports given explicitly, then
    the spec's own (rsize, wsize, sync, actimeo)."""
    vers = spec.get("vers") or "4.1"
    opts = [f"vers={vers}", "proto=tcp", f"addr={HOST_FROM_GUEST}", f"port={service.port}"]
    if vers == "3":
        if mount_port is None:
            raise ValueError("an NFSv3 mount needs the MOUNT port")
        opts += [f"mountaddr={HOST_FROM_GUEST}", f"mountport={mount_port}", "mountproto=tcp", "nolock"]
    for name in ("rsize", "wsize"):
        size = spec.get(name)
        if size is not None:
            opts.append(f"{name}={parse_size(size)}")  # the kernel wants bytes
    if spec.get("writes") == "sync":
        opts.append("sync")
    actimeo = spec.get("actimeo")
    if actimeo is not None:
        opts.append(f"actimeo={actimeo}")
    return ",".join(opts)


class Nfs(MountType):
    name = "nfs"
    shared = True
    options: ClassVar[Mapping[str, Option]] = {
        "vers": Option(("4.1", "3"), default="4.1", core=True, doc="NFS protocol version"),
        "rsize": Option(type="size", minimum=4 << 10, maximum=1 << 20, doc="read size per RPC (default: negotiated)"),
        "wsize": Option(type="size", minimum=4 << 10, maximum=1 << 20, doc="write size per RPC (default: negotiated)"),
        "writes": Option(
            ("async", "sync"), default="async", doc="sync: every write reaches the server before it returns"
        ),
        "actimeo": Option(
            type="int", minimum=0, maximum=3600, doc="attribute cache seconds (default: the kernel's 3-60)"
        ),
    }
    needs_network = True
    # nfsv4 and nfsv3 pull in nfs, sunrpc, lockd, fscache and the rest (resolved with modinfo)
    guest_modules = ("virtio_net", "nfsv4", "nfsv3")
    guest_helpers = GUEST_HELPERS

    def prerequisites(self) -> list[Problem]:
        problems = []
        if find_ganesha() is None:
            problems.append(Problem("nfs-ganesha is missing (nfs mounts)", GANESHA_PACKAGES))
        if find_vfs_fsal() is None:
            problems.append(
                Problem("nfs-ganesha's VFS backend is missing (nfs mounts)", "apt-get install nfs-ganesha-vfs")
            )
        if not hostinfo.is_root():
            problems.append(
                Problem(
                    "nfs mounts need root: nfs-ganesha's VFS backend opens files by handle",
                    "run mountbench lab as root",
                )
            )
        return problems

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        binary = find_ganesha()
        if binary is None or find_vfs_fsal() is None:
            raise ToolMissing(
                f"nfs-ganesha with its VFS backend is missing for mount {mount.label!r}; run: {GANESHA_PACKAGES}"
            )
        v3 = mount.spec.get("vers") == "3"
        if v3 and not rpcbind_running():
            raise ToolMissing(
                f"mount {mount.label!r}: nfs-ganesha serves NFSv3 only when it can register with rpcbind, and none "
                "answers on 127.0.0.1:111; run: apt-get install rpcbind && rpcbind (or use nfs:vers=4.1)"
            )
        mount.host_path = host.mount_dir()
        state = host.lab_dir / f"ganesha-{mount.slug}"
        state.mkdir()
        port = procs.free_port()
        mount_port = procs.free_port() if v3 else None
        config = GaneshaConfig(mount.host_path, port, state / "recovery", v3=v3, mount_port=mount_port)
        conf_file = state / "ganesha.conf"
        conf_file.write_text(config.text())
        log = host.logs_dir / f"ganesha-{mount.slug}.log"
        ports = [port] if mount_port is None else [port, mount_port]
        host.start_daemon(
            "ganesha",
            host.network_prefix() + ganesha_argv(binary, conf_file, log, state / "ganesha.pid"),
            log,
            ready=lambda: all(host.listening(p) for p in ports),
            failure=f"nfs-ganesha for {mount.slug} did not listen on 127.0.0.1:{port}",
            timeout=30.0,
        )
        mount.service = HostService(port)
        mount.served_by = f"nfs-ganesha (VFS) 127.0.0.1:{port} (guest via {HOST_FROM_GUEST}), {host.network_reach()}"
        mount.extra["nfs_export"] = config.pseudo if not v3 else str(mount.host_path)
        if mount_port is not None:
            mount.extra["nfs_mount_port"] = str(mount_port)
        return []  # the network device comes with needs_network

    def mount_command(self, mount: GuestMount) -> str:
        if mount.service is None or mount.host_path is None:
            raise ValueError("an nfs mount needs the server's port and a host directory")
        v3 = mount.spec.get("vers") == "3"
        mount_port = mount.extra.get("nfs_mount_port")
        options = nfs_options(mount.spec, mount.service, int(mount_port) if mount_port else None)
        export = str(mount.host_path) if v3 else mount.extra.get("nfs_export", "")
        source = f"{HOST_FROM_GUEST}:{export}"
        return shlex.join(["mb_nfs", mount.slug, "nfs" if v3 else "nfs4", source, options])

    def outside_network(self, spec: MountSpec) -> str | None:
        if spec.get("vers") == "3":
            return "nfs vers=3: nfs-ganesha registers with the host's rpcbind"
        return None

    def host_cache(self, spec: MountSpec) -> str | None:
        return "nfs-ganesha's VFS backend reads and writes the host files buffered"
