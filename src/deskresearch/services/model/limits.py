"""Explicit concurrency limits: model calls per endpoint, fetches in total and per host.

LangGraph's ``max_concurrency`` bounds tasks, not what a task does: one page branch fetches
once but may summarise many chunks. These wrappers bound the calls themselves, shared by every
branch of every run that uses the same compiled graph, so a fan-out never floods a provider.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TypeVar
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from langchain_core.messages import BaseMessage

from deskresearch.errors import ContextLengthError, ModelOutputError, RefusedURL
from deskresearch.records import FetchedPage, FetchLimits, ModelSpec, Stage, Validators
from deskresearch.runscope import current_meter
from deskresearch.services.base import ChatCall, ChatLayer, ChatService, PageFetcher, Reply

T = TypeVar("T")


class Limiter:
    """Named semaphores (one set per event loop), request pacing and cool-downs.

    asyncio primitives cannot cross event loops; the CLI runs one loop per run, a server one
    loop for all. Nothing here is shared across processes, and nothing here belongs to one run
    (what a run spends is in its own meter: deskresearch.runscope).
    """

    def __init__(self) -> None:
        self._slots: WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]
        ] = WeakKeyDictionary()
        self._next: dict[str, float] = {}  # name → earliest monotonic time of the next request

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

    @asynccontextmanager
    async def slot(self, name: str, limit: int) -> AsyncIterator[None]:
        """Hold one of ``limit`` slots named ``name`` for the duration of the block."""
        slots = self._slots.setdefault(asyncio.get_running_loop(), {})
        sem = slots.setdefault((name, limit), asyncio.Semaphore(limit))
        async with sem:
            yield


def endpoint_name(endpoint: str) -> str:
    """The name one endpoint's slots, pace and cool-down are kept under."""
    return f"model {endpoint}"


def _estimate(messages: Sequence[BaseMessage]) -> int:
    """A prompt's tokens, roughly (4 characters a token), before the server counts them."""
    return sum(len(str(m.content)) for m in messages) // 4


class LimitedChat(ChatLayer):
    """A ChatService that holds a slot per endpoint while a call is in flight."""

    def __init__(self, inner: ChatService, limiter: Limiter) -> None:
        super().__init__(inner)
        self._limiter = limiter

    async def around(self, call: Callable[[], Awaitable[Reply[T]]], request: ChatCall) -> Reply[T]:
        """Call once a model slot is free, the pace allows and budget remains."""
        return await self._metered(call, request.spec, request.stage, _estimate(request.messages))

    async def _metered(
        self, call: Callable[[], Awaitable[Reply[T]]], spec: ModelSpec, stage: Stage, estimate: int
    ) -> Reply[T]:
        meter = current_meter()
        name = endpoint_name(self.endpoint(spec))
        async with self._limiter.slot(name, spec.max_concurrent):
            meter.check(stage, spec.token_budget)
            # Calls in flight count at their estimated size, so parallel branches cannot all
            # pass the check before the first one is charged.
            meter.tokens += estimate
            # Heard before the pace, so a listener across processes has it before the provider.
            meter.sending(stage, spec.model)
            spent = None
            try:
                await self._limiter.pace(name, spec.requests_per_s)
                reply = await call()
                spent = reply.usage
            except (ModelOutputError, ContextLengthError) as exc:  # useless; the tokens were spent
                spent = exc.usage
                raise
            finally:
                meter.tokens -= estimate
                meter.answered(stage, spec.model, spent)
        return reply


class LimitedFetcher:
    """A PageFetcher that holds a per-host slot, then a global one, while reading a page."""

    def __init__(self, inner: PageFetcher, limiter: Limiter) -> None:
        self.inner = inner
        self._limiter = limiter

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        """Fetch once both slots are free."""
        try:
            host = (urlsplit(url).hostname or "").lower()
        except ValueError as exc:  # a malformed result URL costs its page, not the run
            raise RefusedURL(url, f"blocked: malformed URL ({exc})") from None
        # Host slot first: a branch waiting for a busy host must not hold a global slot.
        async with (
            self._limiter.slot(f"host {host}", limits.max_per_host),
            self._limiter.slot("fetch", limits.max_concurrent),
        ):
            return await self.inner.fetch(url, limits=limits, validators=validators)
