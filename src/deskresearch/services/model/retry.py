"""Retries of model calls: Retry-After honoured, exponential backoff with jitter, a per-run cap.

The one retry layer for model calls (ChatOpenAI's own is off). A 429's ``Retry-After`` cools
the whole endpoint down, so every branch of the run waits, not only the one that was told. What
still fails after ``max_attempts``, or once the run's retry budget is spent, is raised as not
transient, so the graph's RetryPolicy does not multiply the attempts.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from deskresearch.errors import ModelCallError
from deskresearch.records import ModelSpec, Stage
from deskresearch.runscope import current_meter
from deskresearch.services.base import ChatCall, ChatLayer, ChatService, Reply
from deskresearch.services.model.limits import Limiter, endpoint_name

T = TypeVar("T")
MAX_DELAY_S = 60.0


def backoff_delay(attempt: int, base_s: float, retry_after: float | None) -> float:
    """Seconds before retry number ``attempt`` (1-based): the server's word, else jittered backoff.

    "Equal jitter": half the exponential delay fixed, half random, so branches that failed
    together do not retry together.
    """
    if retry_after is not None:
        return min(retry_after, MAX_DELAY_S) + random.uniform(0, base_s / 4)
    delay = min(base_s * 2.0 ** (attempt - 1), MAX_DELAY_S)
    return delay / 2 + random.uniform(0, delay / 2)


class RetryingChat(ChatLayer):
    """A ChatService that retries transient failures (429/5xx/timeouts) of the one it wraps."""

    def __init__(self, inner: ChatService, limiter: Limiter) -> None:
        super().__init__(inner)
        self._limiter = limiter

    async def around(self, call: Callable[[], Awaitable[Reply[T]]], request: ChatCall) -> Reply[T]:
        """Run ``call``, retrying under the run's limits."""
        return await self._retry(call, request.spec, request.stage)

    async def _retry(self, call: Callable[[], Awaitable[T]], spec: ModelSpec, stage: Stage) -> T:
        attempt = 1
        while True:
            try:
                return await call()
            except ModelCallError as exc:
                if not exc.transient:
                    raise
                if attempt >= spec.max_attempts:
                    raise _final(exc, f"gave up after {attempt} attempts") from exc
                if not current_meter().take_retry(stage, spec.run_retries):
                    raise _final(exc, f"the run's {spec.run_retries} retries are spent") from exc
                if exc.retry_after is not None:
                    self._limiter.cool_down(endpoint_name(self.endpoint(spec)), exc.retry_after)
                await asyncio.sleep(backoff_delay(attempt, spec.backoff_s, exc.retry_after))
                attempt += 1


def _final(exc: ModelCallError, why: str) -> ModelCallError:
    return ModelCallError(f"{exc} ({why})", status=exc.status, retry_after=exc.retry_after)


def retry_after(response: Any) -> float | None:
    """Seconds a response asks us to wait: ``retry-after-ms``, ``Retry-After`` seconds or date.

    ``response`` is the openai client's response (httpx-like; newer clients bundle their own).
    """
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if "retry-after-ms" in headers:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:  # not seconds: an HTTP date
            pass
        when = parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (ValueError, TypeError, OverflowError):
        return None
