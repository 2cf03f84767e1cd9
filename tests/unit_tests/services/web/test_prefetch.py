"""Pages fetched while they are ranked: taken by the first read, fetched once, errors kept."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from deskresearch.errors import FetchError
from deskresearch.records import FetchedPage, FetchLimits, Validators
from deskresearch.services.web.prefetch import Prefetcher

pytestmark = pytest.mark.anyio
LIMITS = FetchLimits(timeout_s=5, max_bytes=1000, max_redirects=3)


class Inner:
    """A fetcher that counts its fetches, answers when told, and fails where told."""

    def __init__(self) -> None:
        self.fetched: Counter[str] = Counter()
        self.release = asyncio.Event()
        self.fail: dict[str, FetchError] = {}

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        self.fetched[url] += 1
        await self.release.wait()
        if url in self.fail:
            raise self.fail[url]
        return FetchedPage(url=url, content_type="text/html", body=url.encode(), truncated=False)


async def test_a_prefetched_page_is_taken_by_the_read_and_fetched_once() -> None:
    inner = Inner()
    pages = Prefetcher(inner)
    pages.prefetch(["https://a.org/1", "https://a.org/2"], LIMITS)
    pages.prefetch(["https://a.org/1"], LIMITS)  # another query lists it too
    read = asyncio.create_task(pages.fetch("https://a.org/1", limits=LIMITS))
    await asyncio.sleep(0)
    assert not read.done()  # it waits for the fetch under way, not a second one
    inner.release.set()
    assert (await read).body == b"https://a.org/1"
    assert (await pages.fetch("https://a.org/1", limits=LIMITS)).body == b"https://a.org/1"
    assert inner.fetched == Counter({"https://a.org/1": 1, "https://a.org/2": 1})


async def test_other_limits_or_a_conditional_read_fetch_anew() -> None:
    inner = Inner()
    inner.release.set()
    pages = Prefetcher(inner)
    pages.prefetch(["https://a.org/1"], LIMITS)
    stricter = FetchLimits(timeout_s=5, max_bytes=1000, max_redirects=3, allow_hosts=("10.0.0.1",))
    await pages.fetch("https://a.org/1", limits=stricter)
    await pages.fetch("https://a.org/1", limits=LIMITS, validators=Validators(etag='"x"'))
    await asyncio.sleep(0)  # the prefetch itself runs too
    assert inner.fetched["https://a.org/1"] == 3


async def test_the_oldest_page_is_dropped_and_then_fetched_as_usual() -> None:
    inner = Inner()
    pages = Prefetcher(inner, keep=2)
    pages.prefetch(["https://a.org/1", "https://a.org/2"], LIMITS)
    await asyncio.sleep(0)  # both under way
    pages.prefetch(["https://a.org/3"], LIMITS)
    assert pages.held() == 2
    inner.release.set()
    await pages.fetch("https://a.org/1", limits=LIMITS)  # its prefetch was cancelled
    assert inner.fetched["https://a.org/1"] == 2


async def test_a_lasting_error_is_the_reads_and_a_passing_one_is_tried_again() -> None:
    inner = Inner()
    inner.release.set()
    inner.fail = {"https://a.org/gone": FetchError("https://a.org/gone", "http_404"),
                  "https://a.org/slow": FetchError("https://a.org/slow", "timeout", transient=True)}  # fmt: skip
    pages = Prefetcher(inner)
    pages.prefetch(["https://a.org/gone", "https://a.org/slow"], LIMITS)
    with pytest.raises(FetchError, match="http_404"):
        await pages.fetch("https://a.org/gone", limits=LIMITS)
    assert inner.fetched["https://a.org/gone"] == 1
    with pytest.raises(FetchError, match="timeout"):
        await pages.fetch("https://a.org/slow", limits=LIMITS)
    assert inner.fetched["https://a.org/slow"] == 2  # asked again, as a read would be retried


async def test_a_cancelled_read_is_cancelled_and_leaves_the_page_for_the_next() -> None:
    inner = Inner()
    pages = Prefetcher(inner)
    pages.prefetch(["https://a.org/1"], LIMITS)
    read = asyncio.create_task(pages.fetch("https://a.org/1", limits=LIMITS))
    await asyncio.sleep(0)
    read.cancel()
    with pytest.raises(asyncio.CancelledError):
        await read
    inner.release.set()
    assert (await pages.fetch("https://a.org/1", limits=LIMITS)).body == b"https://a.org/1"
    assert inner.fetched["https://a.org/1"] == 1


async def test_an_expired_page_is_fetched_anew_and_its_old_fetch_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inner = Inner()
    pages = Prefetcher(inner)
    pages.prefetch(["https://a.org/1"], LIMITS)
    await asyncio.sleep(0)  # under way
    [(_, old)] = list(pages._held.values())
    monkeypatch.setattr("deskresearch.services.web.prefetch.FRESH_S", -1.0)  # all expired
    pages.prefetch(["https://a.org/2"], LIMITS)  # a later query: the expired one is dropped
    await asyncio.sleep(0)
    assert old.cancelled() and pages.held() == 1
    pages.prefetch(["https://a.org/2"], LIMITS)  # listed again once expired: fetched anew
    await asyncio.sleep(0)
    assert inner.fetched == Counter({"https://a.org/1": 1, "https://a.org/2": 2})
    assert pages.held() == 1


async def test_a_failed_prefetch_nobody_reads_logs_no_unretrieved_error() -> None:
    import gc

    seen: list[dict[str, object]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: seen.append(ctx))
    inner = Inner()
    inner.release.set()
    inner.fail = {"https://a.org/gone": FetchError("https://a.org/gone", "http_404")}
    pages = Prefetcher(inner)
    pages.prefetch(["https://a.org/gone"], LIMITS)  # ranked out: never read
    await asyncio.wait([task for _, task in pages._held.values()])
    del pages  # the run ends
    gc.collect()
    assert inner.fetched["https://a.org/gone"] == 1 and seen == []
