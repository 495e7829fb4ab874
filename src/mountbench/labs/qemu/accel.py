"""Choosing KVM or TCG: /dev/kvm existing is not enough, so KVM is tried for real.

Some hosts expose a /dev/kvm that cannot run a stock kernel (the PVM hypervisor:
the guest hangs in the decompressor). `auto` therefore boots the lab's own
kernel and initramfs under KVM with a timeout, and falls back to TCG. The answer
is cached per host boot, kernel and QEMU binary.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final, Literal

from mountbench.errors import ToolMissing, UsageError
from mountbench.host import process as procs
from mountbench.labs.qemu.initramfs import build_initramfs, lab_cache_dir
from mountbench.labs.qemu.kernel import Kernel, find_kernel
from mountbench.labs.qemu.qemu import QEMU

TCG_ARGS: Final = ("-accel", "tcg,thread=multi", "-cpu", "max")
KVM_ARGS: Final = ("-accel", "kvm", "-cpu", "host")
PROBE_TIMEOUT: Final = 15.0
PROBE_MARKER: Final = "MB-LAB probe-ok"

# What every number from an emulated guest carries (labs/qemu/caveats.py has the stronger
# one for mounts whose cost is guest CPU).
EMULATED_TEXT: Final = (
    "guest emulated (TCG, no usable KVM): absolute figures are not comparable with real hardware, and "
    "emulation slows the guest's CPU work far more than the host's, so mounts may rank differently on "
    "real hardware where they differ in guest CPU time (guest.cpu_s)"
)


@dataclass(frozen=True)
class AccelChoice:
    """The accelerator the lab uses, and why (shown to the user as-is)."""

    accel: Literal["kvm", "tcg"]
    requested: str
    reason: str
    probe_seconds: float | None = None

    @property
    def emulated(self) -> bool:
        """True under TCG: absolute figures are not comparable with real hardware."""
        return self.accel == "tcg"

    @property
    def qemu_args(self) -> tuple[str, ...]:
        return KVM_ARGS if self.accel == "kvm" else TCG_ARGS

    @property
    def caveat(self) -> str | None:
        return EMULATED_TEXT if self.emulated else None


def kvm_usable() -> tuple[bool, str]:
    """Whether /dev/kvm exists and can be opened read-write, with the reason if not."""
    dev = Path("/dev/kvm")
    if not dev.exists():
        return False, "/dev/kvm does not exist (no KVM on this host)"
    if not os.access(dev, os.R_OK | os.W_OK):
        return False, "/dev/kvm is not accessible (add the user to group kvm)"
    return True, ""


def probe_kvm_boot(
    kernel: Kernel, initrd: Path, timeout: float = PROBE_TIMEOUT, qemu: str = QEMU
) -> tuple[bool, float, str]:
    """Boot `kernel` under KVM until the initramfs prints the probe marker.

    Returns (reached init, seconds taken, what went wrong: QEMU's last error line
    or the last console line, '' when there was no output at all).
    """
    argv = [
        qemu, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        *KVM_ARGS, "-smp", "1", "-m", "256M",
        "-kernel", str(kernel.image), "-initrd", str(initrd),
        "-append", "console=ttyS0 panic=-1 rdinit=/init mb.probe=1",
        "-serial", "stdio",
    ]  # fmt: skip
    done = threading.Event()
    found = threading.Event()
    last = [""]
    with tempfile.TemporaryDirectory(prefix="mb-kvm-probe-") as tmp:
        log = Path(tmp) / "qemu.log"
        t0 = time.monotonic()
        proc = procs.start(argv, stdout=subprocess.PIPE, log=log)

        def read() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.decode(errors="replace").rstrip("\r\n")
                if line.strip():
                    last[0] = line
                if PROBE_MARKER in line:
                    found.set()
                    break
            done.set()  # marker seen, or QEMU exited

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            done.wait(timeout)
        finally:
            procs.stop_tree(proc, grace_s=2.0)
            reader.join(timeout=2.0)
        seconds = time.monotonic() - t0
        error = procs.log_tail(log, 1).strip()
    if found.is_set():
        return True, seconds, ""
    return False, seconds, f"QEMU failed: {error}" if error else last[0]


def _cache_key(kernel: Kernel, qemu: str) -> str:
    try:
        boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot_id = "?"
    qemu_path = shutil.which(qemu) or qemu
    try:
        qemu_stamp = str(Path(qemu_path).stat().st_mtime_ns)
    except OSError:
        qemu_stamp = "?"
    text = f"{boot_id}|{kernel.image}|{kernel.version}|{qemu_path}|{qemu_stamp}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def probe_accel(
    requested: str = "auto",
    kernel: Kernel | str | Path | None = None,
    *,
    timeout: float = PROBE_TIMEOUT,
    use_cache: bool = True,
    qemu: str = QEMU,
) -> AccelChoice:
    """Choose the accelerator: `kvm`, `tcg`, or `auto` (a short real KVM boot, else TCG)."""
    if requested not in ("auto", "kvm", "tcg"):
        raise UsageError(f"--accel {requested!r} is not valid; use auto, kvm or tcg")
    if requested == "tcg":
        return AccelChoice("tcg", requested, "TCG requested")
    ok, why = kvm_usable()
    if requested == "kvm":
        if not ok:
            raise ToolMissing(f"--accel kvm: {why}; use --accel tcg or auto")
        return AccelChoice("kvm", requested, "KVM requested (not probed)")
    if not ok:
        return AccelChoice("tcg", requested, f"TCG: {why}")
    if shutil.which(qemu) is None:
        raise ToolMissing(f"{qemu} is missing; run: apt-get install qemu-system-x86")
    kern = kernel if isinstance(kernel, Kernel) else find_kernel(kernel)
    cache_file = lab_cache_dir() / f"accel-{_cache_key(kern, qemu)}.json"
    if use_cache and cache_file.is_file():
        try:
            data = json.loads(cache_file.read_text())
            return AccelChoice(**{**data, "requested": requested})
        except (OSError, ValueError, TypeError):
            pass
    initrd = build_initramfs(kern)
    reached, seconds, last = probe_kvm_boot(kern, initrd, timeout, qemu)
    if reached:
        choice = AccelChoice("kvm", requested, f"KVM: a probe guest reached init in {seconds:.1f} s", seconds)
    else:
        if last.startswith("QEMU failed"):
            what = f"a probe guest could not start under KVM ({last})"
        else:
            hint = f" (last console line: {last!r})" if last else " (no console output)"
            what = f"a probe guest did not reach init within {timeout:.0f} s{hint}"
        choice = AccelChoice(
            "tcg",
            requested,
            f"TCG: /dev/kvm exists but {what}; a PVM hypervisor (dmesg: kvm-pvm) cannot run stock kernels",
            seconds,
        )
    if use_cache:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(asdict(choice)))
    return choice
