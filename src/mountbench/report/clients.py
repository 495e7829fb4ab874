"""Runs on several clients at once (run --client): the scaling view and per-client figures."""

from __future__ import annotations

from mountbench.model import RunData


def clients_terminal(run: RunData, *, per_client: bool = False) -> list:
    return []
