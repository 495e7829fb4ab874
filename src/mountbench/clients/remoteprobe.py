"""Coherence between two clients (probe --view across machines), through `mountbench serve`."""

from __future__ import annotations

from mountbench.clients.agent import Handler

AGENT_OPS: dict[str, Handler] = {}
