"""Lab errors, and reading the likely cause of a failed boot from the console."""

from __future__ import annotations

from collections.abc import Sequence

from mountbench.errors import MountbenchError


class GuestError(MountbenchError):
    """The lab guest failed: did not boot, died, or a command ran out of time."""

    def __init__(self, message: str, console_tail: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.console_tail = list(console_tail)

    def __str__(self) -> str:
        text = super().__str__()
        if self.console_tail:
            text += "\n  guest console, last lines:\n" + "\n".join(f"    | {line}" for line in self.console_tail)
        return text


class BootError(GuestError):
    """The guest did not become ready (boot timeout, QEMU failure, failed mounts)."""


class GuestTimeout(GuestError):
    """A command in the guest did not finish in time; the guest was stopped."""


def likely_cause(
    tail: Sequence[str],
    *,
    accel: str,
    root: str,
    qemu_log: str = "",
    events: Sequence[str] = (),
) -> str:
    """A one-line guess at why a boot failed, from the console tail and QEMU's stderr.

    `events` are the lab markers seen so far (init, root-ready, ...), oldest first.
    """
    text = "\n".join(tail)
    if qemu_log.strip():
        last = qemu_log.strip().splitlines()[-1]
        if "kvm" in last.lower():
            return f"QEMU cannot use KVM ({last}); use --accel tcg"
        if "virtiofs" in last.lower() or "vhost-user" in last.lower() or "chardev" in last.lower():
            return f"QEMU could not reach a virtiofsd ({last}); check the virtiofsd log"
        return f"QEMU failed: {last}"
    if "fatal" in events:
        fatal = [line for line in tail if "MB-LAB fatal" in line]
        detail = fatal[-1].split("MB-LAB fatal", 1)[1].strip() if fatal else "guest init failed"
        if "virtiofs" in detail:
            return f"{detail}: the root virtiofsd (Rust, --readonly) is missing or failed"
        return detail
    if "Failed to execute /init" in text or "No working init found" in text:
        return "the initramfs has no working /init (busybox not static, or a broken cache entry)"
    if "insmod" in text and "failed" in text:
        return "kernel modules do not match the kernel (pass --kernel with its own /lib/modules)"
    if "Kernel panic" in text:
        return "the guest kernel panicked (see the console lines)"
    if "root-ready" in events:
        return "the host root is mounted but stage 2 did not finish (slow mounts or a hung sshfs?)"
    if "init" in events:
        return f"the guest reached init but could not mount the host root over {root}"
    if not tail or not any(line.strip() for line in tail):
        if accel == "kvm":
            return "no console output under KVM: this /dev/kvm cannot run the kernel; use --accel tcg"
        return "no console output: the kernel did not start (wrong --kernel, or too little time)"
    if accel == "kvm":
        return "the kernel stalled under KVM (PVM hypervisor?); use --accel tcg"
    return "the kernel did not reach init in time (TCG is slow; raise the boot timeout)"
