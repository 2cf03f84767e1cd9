"""Pages fetched while they are ranked: read_page takes the fetched copy instead of waiting.

A query's results are known when its search answers; which of them are read is known only when
the ranking call returns, a third of a second later on a hosted model. ``Prefetcher`` starts
fetching every result at once (``prefetch``, from the search step) and hands a page to the
first ``fetch`` of the same URL under the same limits; a result ranked out is fetched and
dropped unread (bytes, never tokens). Each fetch goes through the fetcher it wraps, so the
network policy, the run's domain scope, the byte cap, the cache and the fetch limits apply
as to any read. A prefetch that failed or was evicted costs nothing: the page is fetched as
usual, with its own errors and retries.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence

from deskresearch.errors import FetchError
from deskresearch.records import FetchedPage, FetchLimits, Validators
from deskresearch.services.base import PageFetcher

KEEP = 48  # pages held at most (a round's results); the oldest is dropped first
FRESH_S = 120.0  # a page fetched longer ago than this is fetched again (another run's, say)
Held = tuple[float, "asyncio.Task[FetchedPage]"]  # when the fetch started, and the fetch


def _retrieve(task: asyncio.Task[FetchedPage]) -> None:
    """Take a finished prefetch's error, so a page nobody read logs no "never retrieved" error."""
    if not task.cancelled():
        task.exception()


class Prefetcher:
    """A PageFetcher that may already hold the page (see the module's doc).

    Args:
        inner: the fetcher every fetch goes through (limits, cache, policy).
        keep: how many prefetched pages are held, fetched or under way.
    """

    def __init__(self, inner: PageFetcher, keep: int = KEEP) -> None:
        self._inner = inner
        self._keep = keep
        # A page stays held once read: another query of the run that lists it does not
        # fetch it again.
        self._held: OrderedDict[tuple[str, FetchLimits], Held] = OrderedDict()

    def prefetch(self, urls: Sequence[str], limits: FetchLimits) -> None:
        """Start fetching ``urls`` now (on the running loop); return at once."""
        loop = asyncio.get_running_loop()
        self._prune(loop)
        for url in urls:
            if self._fresh(url, limits) is not None:
                continue
            task = loop.create_task(self._inner.fetch(url, limits=limits), name=f"prefetch {url}")
            task.add_done_callback(_retrieve)
            self._held[(url, limits)] = (loop.time(), task)  # _prune dropped any stale one
            while len(self._held) > self._keep:
                _, (_, oldest) = self._held.popitem(last=False)
                oldest.cancel()

    def _prune(self, loop: asyncio.AbstractEventLoop) -> None:
        """Drop what is too old to be handed out, or belongs to another run's loop."""
        for key, (started, task) in list(self._held.items()):
            if task.get_loop() is not loop or loop.time() - started > FRESH_S:
                del self._held[key]
                if task.get_loop() is loop:
                    task.cancel()

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
                return await asyncio.shield(task)  # a cancelled read leaves the page held
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # this read was cancelled (the run stops), not only the prefetch
            except FetchError as exc:
                if not exc.transient:
                    raise  # what the fetch would say again (a 404, a refused URL)
        return await self._inner.fetch(url, limits=limits, validators=validators)

    def held(self) -> int:
        """How many pages are held (tests)."""
        return len(self._held)
