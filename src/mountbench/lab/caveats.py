"""What limits a lab mount's numbers, as caveats shown next to them."""

from __future__ import annotations

from mountbench import model
from mountbench.lab.spec import MountSpec
from mountbench.model import Caveat


def host_cache_caveat(spec: MountSpec) -> Caveat | None:
    """Mounts whose data the host serves from its own page cache, whatever the guest asks
    (O_DIRECT included): their numbers can be host-RAM numbers."""
    why = spec.mount_kind.host_cache(spec)
    if why is None:
        return None
    return Caveat(model.HOST_CACHE, f"the host's page cache may serve these: {why}")
