"""The Limiter a topic's Ray task uses: provider-facing slots, pacing and cool-downs cluster-wide.

Model-call slots per endpoint and per-host fetch slots are leases from the batch's Coordinator
actor (``batch/coordinator.py``), so a provider sees the batch's limits however many nodes run
it; the total-fetch slot (this machine's bandwidth) and the run meters stay in the process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from deskresearch.config.providers import is_loopback
from deskresearch.services.model.limits import Limiter

SHARED = ("model ", "host ")  # Limiter names held cluster-wide


def on_machine(name: str) -> bool:
    """Whether a Limiter name is a model endpoint on the node's loopback: one server a machine.

    ``http://localhost:11434/v1`` is each machine's own Ollama: held as one provider for the
    cluster, ten machines would share the two calls one local server takes.
    """
    if not name.startswith("model "):
        return False
    try:
        return is_loopback(urlsplit(name.removeprefix("model ")).hostname or "")
    except ValueError:
        return False


class ClusterLimiter(Limiter):
    """A Limiter whose provider-facing slots, pacing and cool-downs are the Coordinator's.

    A model endpoint on the loopback is held per machine (``machine``: the node's address), so
    nodes on one machine share its server and nodes elsewhere do not.
    """

    def __init__(self, coordinator: Any, node: str, machine: str = "") -> None:
        super().__init__()
        self._coordinator = coordinator
        self._node = node
        self._machine = machine or node

    def _name(self, name: str) -> str:
        return f"{name} on {self._machine}" if on_machine(name) else name

    @asynccontextmanager
    async def slot(self, name: str, limit: int) -> AsyncIterator[None]:
        """Hold a cluster-wide slot for model endpoints and hosts, a local one otherwise."""
        if not name.startswith(SHARED):
            async with super().slot(name, limit):
                yield
            return
        name = self._name(name)
        lease = await self._coordinator.acquire.remote(name, limit, self._node)
        try:
            yield
        finally:
            self._coordinator.release.remote(name, lease)

    async def pace(self, name: str, per_second: float) -> None:
        """Wait for this request's turn across the cluster."""
        delay = await self._coordinator.pace.remote(self._name(name), per_second)
        if delay > 0:
            await asyncio.sleep(delay)

    def cool_down(self, name: str, seconds: float) -> None:
        """Tell every node to hold back (a 429's Retry-After); a machine's own server: its nodes."""
        self._coordinator.cool_down.remote(self._name(name), seconds)
