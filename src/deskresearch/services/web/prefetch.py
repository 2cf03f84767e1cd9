"""Pages fetched while they are ranked: read_page takes the fetched copy instead of waiting.

A query's results are known when its search answers; which of them are read is known only when
the ranking call returns, a third of a second later on a hosted model. ``Prefetcher`` starts
fetching every result at once (``prefetch``, from the search step) and hands a page to the
first ``fetch`` of the same URL under the same limits; a result ranked out is fetched and
dropped unread (bytes, never tokens). Each fetch goes through the fetcher it wraps, so the
network policy, the run's domain scope, the byte cap, the cache and the fetch limits apply
as to any read. A prefetch that failed or was evicted costs nothing: the page is fetched as
usual, with its own errors and retries.

Given an extractor, a prefetched page is also extracted as soon as it arrives, in the worker
pool, while the ranking call is still out (CPU in a network wait): ``Preread``, the graph's
extractor, hands that extraction to the read of the same body instead of extracting it again.
A result ranked out costs its extraction (CPU, never tokens).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, TypeVar

from deskresearch.errors import FetchError
from deskresearch.records import Extracted, FetchedPage, FetchLimits, Validators
from deskresearch.services.base import ContentExtractor, PageFetcher

KEEP = 48  # pages held at most (a round's results); the oldest is dropped first
FRESH_S = 120.0  # a page fetched longer ago than this is fetched again (another run's, say)
Held = tuple[float, "asyncio.Task[FetchedPage]"]  # when the fetch started, and the fetch


T = TypeVar("T")
Body = bytes | str
Extraction = tuple[Body, "asyncio.Task[Extracted | None]"]  # the body it reads, and the task


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Take a finished prefetch's error, so a page nobody read logs no "never retrieved" error."""
    if not task.cancelled():
        task.exception()


class _Dropped(Exception):
    """The held task was cancelled (evicted, or another run's), not the read awaiting it."""


async def _taken(task: asyncio.Task[T]) -> T:
    """The held task's result; a read cancelled meanwhile leaves the task for another read.

    Raises:
        _Dropped: the task itself was cancelled: do the work anew.
    """
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # this read was cancelled (the run stops), not only the held task
        raise _Dropped from None


class Prefetcher:
    """A PageFetcher that may already hold the page (see the module's doc).

    Args:
        inner: the fetcher every fetch goes through (limits, cache, policy).
        keep: how many prefetched pages are held, fetched or under way.
    """

    def __init__(
        self, inner: PageFetcher, keep: int = KEEP, extractor: ContentExtractor | None = None
    ) -> None:
        self._inner = inner
        self._keep = keep
        self._extractor = extractor
        # A page stays held once read: another query of the run that lists it does not
        # fetch it again.
        self._held: OrderedDict[tuple[str, FetchLimits], Held] = OrderedDict()
        # Extractions of prefetched bodies, by the body's identity (the read gets that very
        # object from the held fetch); as many as pages are held, the oldest dropped first.
        self._extracted: OrderedDict[int, Extraction] = OrderedDict()

    def prefetch(self, urls: Sequence[str], limits: FetchLimits) -> None:
        """Start fetching ``urls`` now (on the running loop); return at once."""
        loop = asyncio.get_running_loop()
        self._prune(loop)
        for url in urls:
            if self._fresh(url, limits) is not None:
                continue
            task = loop.create_task(self._inner.fetch(url, limits=limits), name=f"prefetch {url}")
            task.add_done_callback(_retrieve)
            if self._extractor is not None:
                task.add_done_callback(self._extract)
            self._held[(url, limits)] = (loop.time(), task)  # _prune dropped any stale one
            while len(self._held) > self._keep:
                _, (_, oldest) = self._held.popitem(last=False)
                oldest.cancel()

    def _extract(self, fetched: asyncio.Task[FetchedPage]) -> None:
        """Extract a prefetched page once it is here (a failed fetch: nothing to extract)."""
        if fetched.cancelled() or fetched.exception() is not None or self._extractor is None:
            return
        page = fetched.result()
        job = self._extractor.extract(page.body, url=page.url, content_type=page.content_type)
        task = fetched.get_loop().create_task(job, name=f"extract {page.url}")
        task.add_done_callback(_retrieve)
        self._extracted[id(page.body)] = (page.body, task)
        while len(self._extracted) > self._keep:
            _, (_, oldest) = self._extracted.popitem(last=False)
            oldest.cancel()

    def extraction(self, body: Body) -> asyncio.Task[Extracted | None] | None:
        """The extraction started for this very body (a prefetched page's), if any."""
        held = self._extracted.get(id(body))
        if held is None or held[0] is not body:
            return None
        task = held[1]
        return task if task.get_loop() is asyncio.get_running_loop() else None

    def _prune(self, loop: asyncio.AbstractEventLoop) -> None:
        """Drop what is too old to be handed out, or belongs to another run's loop."""
        for key, (started, task) in list(self._held.items()):
            if task.get_loop() is not loop or loop.time() - started > FRESH_S:
                del self._held[key]
                if task.get_loop() is loop:
                    task.cancel()
        for body_id, (_, extraction) in list(self._extracted.items()):
            if extraction.get_loop() is not loop:
                del self._extracted[body_id]

    def _fresh(self, url: str, limits: FetchLimits) -> asyncio.Task[FetchedPage] | None:
        held = self._held.get((url, limits))
        loop = asyncio.get_running_loop()
        if held is None or held[1].get_loop() is not loop or loop.time() - held[0] > FRESH_S:
            return None
        return held[1]

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        """The prefetched page when there is one under these limits; else a fetch."""
        task = self._fresh(url, limits) if validators is None else None
        if task is not None:
            try:
                return await _taken(task)
            except _Dropped:
                pass  # evicted: fetched anew
            except FetchError as exc:
                if not exc.transient:
                    raise  # what the fetch would say again (a 404, a refused URL)
        return await self._inner.fetch(url, limits=limits, validators=validators)

    def held(self) -> int:
        """How many pages are held (tests)."""
        return len(self._held)


class Preread:
    """The graph's extractor: a prefetched page's extraction when there is one, else ``inner``'s.

    Args:
        inner: the extractor every other page goes through (and the prefetch's, too).
        pages: the Prefetcher that started the extractions.
    """

    def __init__(self, inner: ContentExtractor, pages: Prefetcher) -> None:
        self._inner = inner
        self._pages = pages

    def warm(self) -> None:
        """Start the inner extractor's workers; returns at once."""
        self._inner.warm()

    async def extract(self, body: Body, *, url: str, content_type: str) -> Extracted | None:
        """The extraction the prefetch started for this body, else a new one (same errors)."""
        task = self._pages.extraction(body)
        if task is not None:
            with contextlib.suppress(_Dropped):  # evicted: extracted anew
                return await _taken(task)
        return await self._inner.extract(body, url=url, content_type=content_type)
