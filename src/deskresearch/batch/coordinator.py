"""Cluster-wide limits and progress for a batch on Ray: one actor, on the driver's node.

A provider's rate limit is per account, not per machine: eight model calls in flight on each of
ten nodes is eighty to the provider. So under ``--ray`` the model-call slots (per endpoint), the
request pacing and 429 cool-downs, and the per-host fetch slots are held by one ``Coordinator``
actor that every topic's task asks; the total-fetch slot and the token meters stay per process.

A slot is a lease. Leases of a node that died are freed when the actor sees it dead (within
``REAP_EVERY_S``), and any lease expires after ``LEASE_TTL_S`` (a worker process killed on a
live node), so a lost node never takes capacity with it for long. The actor lives on the
driver's node: it goes only when the driver goes, and then the batch's tasks stop too. This
module imports nothing heavy, so the actor's process starts in about a second.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

LEASE_TTL_S = 900.0  # longer than any one model call or fetch may take
REAP_EVERY_S = 1.0


class Coordinator:
    """The actor (``ray.remote(Coordinator)`` at the driver): slots, pacing, progress events."""

    def __init__(self, find_dead: Callable[[], set[str]] | None = None) -> None:
        """``find_dead`` names the nodes that died (default: Ray's view of the cluster)."""
        self._find_dead = find_dead or dead_nodes
        self._leases: dict[str, dict[str, tuple[str, float]]] = {}  # name → lease → (node, until)
        self._conditions: dict[str, asyncio.Condition] = {}
        self._next: dict[str, float] = {}  # name → earliest time of the next request
        self._events: list[tuple[str, dict[str, Any]]] = []
        self._dead: set[str] = set()
        self._checked = 0.0

    def _condition(self, name: str) -> asyncio.Condition:
        return self._conditions.setdefault(name, asyncio.Condition())

    def _reap(self, name: str) -> None:
        """Free the leases of dead nodes and expired ones."""
        now = time.monotonic()
        if now - self._checked >= REAP_EVERY_S:
            self._checked = now
            self._dead = self._find_dead()
        leases = self._leases.setdefault(name, {})
        for lease, (node, until) in list(leases.items()):
            if until < now or node in self._dead:
                del leases[lease]

    async def acquire(self, name: str, limit: int, node: str) -> str:
        """Wait until fewer than ``limit`` leases on ``name`` are held; return a new lease."""
        condition = self._condition(name)
        async with condition:
            while True:
                self._reap(name)
                leases = self._leases[name]
                if len(leases) < limit:
                    lease = uuid.uuid4().hex
                    leases[lease] = (node, time.monotonic() + LEASE_TTL_S)
                    return lease
                try:  # woken by a release, or after a while to look for dead nodes
                    await asyncio.wait_for(condition.wait(), REAP_EVERY_S)
                except TimeoutError:
                    pass

    async def release(self, name: str, lease: str) -> None:
        """Give a lease back."""
        condition = self._condition(name)
        async with condition:
            self._leases.get(name, {}).pop(lease, None)
            condition.notify_all()

    def pace(self, name: str, per_second: float) -> float:
        """Book the next request on ``name``; return how long the caller waits before sending."""
        now = time.monotonic()
        start = max(now, self._next.get(name, 0.0))
        self._next[name] = start + (1.0 / per_second if per_second > 0 else 0.0)
        return start - now

    def cool_down(self, name: str, seconds: float) -> None:
        """Hold every request to ``name`` back for ``seconds``, on every node (a Retry-After)."""
        self._next[name] = max(self._next.get(name, 0.0), time.monotonic() + seconds)

    def report(self, thread_id: str, event: dict[str, Any]) -> None:
        """Keep a progress event of a topic for the driver."""
        self._events.append((thread_id, event))

    def drain(self) -> list[tuple[str, dict[str, Any]]]:
        """Hand over (and forget) the events kept since the last call."""
        events, self._events = self._events, []
        return events

    def held(self) -> dict[str, int]:
        """Leases held per name (for tests and the curious)."""
        return {name: len(leases) for name, leases in self._leases.items()}


def dead_nodes() -> set[str]:
    """Ids of the cluster's nodes that are no longer alive."""
    import ray

    nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
    return {n["NodeID"] for n in nodes if not n.get("Alive")}
