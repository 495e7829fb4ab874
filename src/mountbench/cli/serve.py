"""`mountbench serve`: be a client of `mountbench run --client` (fio's server plus host facts)."""

from __future__ import annotations

import getpass
import ipaddress

import click

from mountbench.cli.console import err
from mountbench.errors import UsageError
from mountbench.fio.binary import find_fio


@click.command()
@click.option(
    "--bind",
    default="127.0.0.1",
    show_default=True,
    metavar="ADDRESS",
    help="address to listen on; anything but loopback must be named here (fio's protocol has no authentication)",
)
@click.option(
    "--port", default=8765, show_default=True, type=click.IntRange(1, 65534), help="fio's port; host facts on PORT + 1"
)
def serve(bind: str, port: int) -> None:
    """Be a client of 'mountbench run --client': run fio's server here, plus host facts.

    Anyone who can reach these ports (on loopback: every user of this machine) can run fio
    jobs, and commands through them, as this user: listen only on a trusted network, and
    prefer 'run --client ssh://HOST' where SSH reaches this machine. Stop with Ctrl-C.

    \b
    mountbench serve --bind 10.0.0.2          then, elsewhere: mountbench run --client 10.0.0.2 share=/mnt/share
    """
    from mountbench.clients import serve as serving_mod

    check_bind(bind)
    fio = find_fio()
    with serving_mod.serving(fio, bind, port) as served:
        reach = serving_mod.exposure(bind)
        err.print(
            f"{fio.version} server listening on {bind}:{port} (fio's protocol), "
            f"host facts on {bind}:{served.agent_port} ({reach}); stop with Ctrl-C",
            markup=False,
            highlight=False,
        )
        err.print(serving_mod.who_can_reach(bind, port, getpass.getuser()), markup=False, highlight=False)
        try:
            serving_mod.wait(served)
        except KeyboardInterrupt:
            err.print("stopped")


def check_bind(bind: str) -> None:
    """--bind is one IP address; a port belongs in --port."""
    try:
        ipaddress.ip_address(bind)
        return
    except ValueError:
        pass
    host, sep, port = bind.rpartition(":")
    if sep and port.isdigit() and host and "]" not in port:
        raise UsageError(f"--bind {bind}: give the address alone and the port with --port, e.g. --bind "
                         f"{host.strip('[]')} --port 8765")  # fmt: skip
    raise UsageError(f"--bind {bind} is not an IP address; give one of this machine's, e.g. 127.0.0.1 or 10.0.0.2")
