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


def shared(name: str) -> bool:
    """Whether a Limiter name is one provider for the whole cluster.

    A model endpoint on a node's loopback (``http://localhost:11434/v1``: the node's own Ollama)
    is a server per node, each with its own slots: held cluster-wide, ten nodes would share the
    two calls one local server takes.
    """
    if not name.startswith(SHARED):
        return False
    if name.startswith("model "):
        try:
            host = urlsplit(name.removeprefix("model ")).hostname or ""
        except ValueError:
            return True
        return not is_loopback(host)
    return True


class ClusterLimiter(Limiter):
    """A Limiter whose provider-facing slots, pacing and cool-downs are the Coordinator's."""

    def __init__(self, coordinator: Any, node: str) -> None:
        super().__init__()
        self._coordinator = coordinator
        self._node = node

    @asynccontextmanager
    async def slot(self, name: str, limit: int) -> AsyncIterator[None]:
        """Hold a cluster-wide slot for model endpoints and hosts, a local one otherwise."""
        if not shared(name):
            async with super().slot(name, limit):
                yield
            return
        lease = await self._coordinator.acquire.remote(name, limit, self._node)
        try:
            yield
        finally:
            self._coordinator.release.remote(name, lease)

    async def pace(self, name: str, per_second: float) -> None:
        """Wait for this request's turn across the cluster (a node's own server: the node's)."""
        if not shared(name):
            return await super().pace(name, per_second)
        delay = await self._coordinator.pace.remote(name, per_second)
        if delay > 0:
            await asyncio.sleep(delay)

    def cool_down(self, name: str, seconds: float) -> None:
        """Tell every node to hold back (a 429's Retry-After); a node's own server: this node."""
        if not shared(name):
            return super().cool_down(name, seconds)
        self._coordinator.cool_down.remote(name, seconds)
