"""A private nfs-ganesha on the host's loopback for the guest's NFS mount.

nfs-ganesha (Debian packages nfs-ganesha, nfs-ganesha-vfs) is a userspace NFS
server: no host kernel NFS server is needed, and the host's kernel needs no NFS
client either (the guest's kernel is the client). It runs in the foreground
with its own config, log, pid file and NFSv4 recovery directory inside the lab
work dir, bound to 127.0.0.1; the guest reaches it at 10.0.2.2 through QEMU user
networking. Its VFS backend reads and writes the exported directory with
ordinary (buffered) system calls, so the host's page cache holds what it serves.

NFSv4.x needs one TCP port. NFSv3 also needs the MOUNT protocol (a second port,
given to the guest explicitly, so the guest never asks a portmapper), but
ganesha refuses to start its v3 service unless it can register it with the
host's rpcbind ("Cannot register NFS V3 on TCP"): vers=3 works only on a host
where rpcbind runs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mountbench.host import process as procs

GANESHA: Final = "ganesha.nfsd"
VFS_FSAL_PLACES: Final = (
    Path("/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so"),
    Path("/usr/lib/aarch64-linux-gnu/ganesha/libfsalvfs.so"),
    Path("/usr/lib64/ganesha/libfsalvfs.so"),
    Path("/usr/lib/ganesha/libfsalvfs.so"),
)
RPCBIND_PORT: Final = 111
PSEUDO_ROOT: Final = "/mb"  # the NFSv4 pseudo path the export appears under


def find_ganesha() -> str | None:
    """The ganesha.nfsd binary (PATH, then /usr/bin), or None."""
    found = shutil.which(GANESHA)
    if found:
        return found
    return str(Path("/usr/bin") / GANESHA) if (Path("/usr/bin") / GANESHA).is_file() else None


def find_vfs_fsal() -> Path | None:
    """ganesha's VFS backend (package nfs-ganesha-vfs), or None."""
    return next((p for p in VFS_FSAL_PLACES if p.is_file()), None)


def rpcbind_running() -> bool:
    """True when a portmapper answers on the host's loopback (ganesha's v3 needs one)."""
    return procs.port_open(RPCBIND_PORT)


@dataclass(frozen=True)
class GaneshaConfig:
    """What one lab ganesha serves, and where it keeps its state."""

    export_path: Path  # the host directory under test
    nfs_port: int
    recovery_dir: Path  # NFSv4 client recovery records (kept out of /var/lib/nfs)
    v3: bool = False  # also serve NFSv3 (then the MOUNT protocol on mount_port)
    mount_port: int | None = None
    pseudo: str = f"{PSEUDO_ROOT}/export"

    def text(self) -> str:
        """The ganesha.conf: one export, loopback only, no NLM, no RQUOTA, no Kerberos."""
        protocols = "3, 4" if self.v3 else "4"
        core = [
            f"    Protocols = {protocols};",
            f"    NFS_Port = {self.nfs_port};",
        ]
        if self.v3:
            if self.mount_port is None:
                raise ValueError("NFSv3 needs a MOUNT port")
            core.append(f"    MNT_Port = {self.mount_port};")
        core += [
            "    Bind_addr = 127.0.0.1;",
            "    Enable_NLM = false;",
            "    Enable_RQUOTA = false;",
            "    Enable_UDP = false;",
        ]
        return "\n".join(
            [
                "# written by mountbench lab: one export for one guest mount",
                "NFS_CORE_PARAM {",
                *core,
                "}",
                "NFS_KRB5 {",
                "    Active_krb5 = false;",
                "}",
                "NFSV4 {",
                "    Graceless = true;",
                "    Only_Numeric_Owners = true;  # uids as numbers: the guest runs no idmapd",
                f"    RecoveryRoot = {self.recovery_dir};",
                "}",
                "EXPORT {",
                "    Export_Id = 1;",
                f"    Path = {self.export_path};",
                f"    Pseudo = {self.pseudo};",
                "    Access_Type = RW;",
                "    Squash = No_Root_Squash;",
                "    SecType = sys;",
                f"    Protocols = {protocols};",
                "    Transports = TCP;",
                "    FSAL {",
                "        Name = VFS;",
                "    }",
                "}",
                "",
            ]
        )


def ganesha_argv(binary: str, config: Path, log: Path, pid_file: Path) -> list[str]:
    """Foreground ganesha with its own config, log and pid file."""
    return [binary, "-F", "-f", str(config), "-L", str(log), "-p", str(pid_file), "-N", "NIV_EVENT"]
