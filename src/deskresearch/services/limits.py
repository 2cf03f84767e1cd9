"""Explicit concurrency limits: model calls per endpoint, fetches in total and per host.

LangGraph's ``max_concurrency`` bounds tasks, not what a task does: one page branch fetches
once but may summarise many chunks. These wrappers bound the calls themselves, shared by every
branch of every run that uses the same compiled graph, so a fan-out never floods a provider.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from langchain_core.messages import BaseMessage

from deskresearch.records import FetchedPage, FetchLimits, ModelSpec, Stage
from deskresearch.services.base import ChatService, M, PageFetcher, Reply


class Limiter:
    """Named semaphores, pacing and cool-downs, one set per event loop.

    asyncio primitives cannot cross event loops; the CLI runs one loop per run, a server one
    loop for all, so "per loop" is "per run or per server", never shared across processes.
    """

    def __init__(self) -> None:
        self._slots: WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]
        ] = WeakKeyDictionary()
        self._next: dict[str, float] = {}  # name → earliest monotonic time of the next request
        self._retries: Counter[str] = Counter()  # run key → retries taken

    async def pace(self, name: str, per_second: float) -> None:
        """Wait for ``name``'s next request time: ``per_second`` spacing and any cool-down."""
        now = time.monotonic()
        start = max(now, self._next.get(name, 0.0))
        self._next[name] = start + (1.0 / per_second if per_second > 0 else 0.0)
        if start > now:
            await asyncio.sleep(start - now)

    def cool_down(self, name: str, seconds: float) -> None:
        """Hold every request to ``name`` back for ``seconds`` (a server's Retry-After)."""
        self._next[name] = max(self._next.get(name, 0.0), time.monotonic() + seconds)

    def take_retry(self, run: str, cap: int) -> bool:
        """Count one retry against ``run``'s budget; False once ``cap`` retries were taken."""
        if self._retries[run] >= cap:
            return False
        self._retries[run] += 1
        return True

    @asynccontextmanager
    async def slot(self, name: str, limit: int) -> AsyncIterator[None]:
        """Hold one of ``limit`` slots named ``name`` for the duration of the block."""
        slots = self._slots.setdefault(asyncio.get_running_loop(), {})
        sem = slots.setdefault((name, limit), asyncio.Semaphore(limit))
        async with sem:
            yield


class LimitedChat:
    """A ChatService that holds a slot per endpoint while a call is in flight."""

    def __init__(self, inner: ChatService, limiter: Limiter) -> None:
        self.inner = inner
        self._limiter = limiter

    def check(self, spec: ModelSpec) -> None:
        """Delegate the configuration check."""
        self.inner.check(spec)

    async def structured(
        self, messages: Sequence[BaseMessage], schema: type[M], *, spec: ModelSpec, stage: Stage
    ) -> Reply[M]:
        """Call the inner service once a model slot is free and its pace allows."""
        name = f"model {spec.base_url}"
        async with self._limiter.slot(name, spec.max_concurrent):
            await self._limiter.pace(name, spec.requests_per_s)
            return await self.inner.structured(messages, schema, spec=spec, stage=stage)

    async def text(
        self, messages: Sequence[BaseMessage], *, spec: ModelSpec, stage: Stage
    ) -> Reply[str]:
        """Call the inner service once a model slot is free and its pace allows."""
        name = f"model {spec.base_url}"
        async with self._limiter.slot(name, spec.max_concurrent):
            await self._limiter.pace(name, spec.requests_per_s)
            return await self.inner.text(messages, spec=spec, stage=stage)


class LimitedFetcher:
    """A PageFetcher that holds a per-host slot, then a global one, while reading a page."""

    def __init__(self, inner: PageFetcher, limiter: Limiter) -> None:
        self.inner = inner
        self._limiter = limiter

    async def fetch(self, url: str, *, limits: FetchLimits) -> FetchedPage:
        """Fetch once both slots are free."""
        host = (urlsplit(url).hostname or "").lower()
        # Host slot first: a branch waiting for a busy host must not hold a global slot.
        async with (
            self._limiter.slot(f"host {host}", limits.max_per_host),
            self._limiter.slot("fetch", limits.max_concurrent),
        ):
            return await self.inner.fetch(url, limits=limits)
