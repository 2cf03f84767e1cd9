"""The domain scope at the fetcher: every hop checked before it is asked, cached chains too.

Named hosts (www.who.int, news.example) resolve to the loopback web through a stub resolver;
the network policy allows loopback and names them (a cached chain is checked with the system's
resolver, which does not know them), so only the scope decides.
"""

from pathlib import Path
from urllib.parse import quote

import pytest

from deskresearch.errors import OutOfScope
from deskresearch.records import CachePolicy, DomainScope, FetchLimits, SearchSettings
from deskresearch.services.storage.cache import CachedFetcher, search_key
from deskresearch.services.storage.cache_store import CacheStore
from deskresearch.services.web.fetch import HttpFetcher
from tests.support.loopback import FakeWeb

pytestmark = pytest.mark.anyio
TARGET = "/pages/heise.de.lithium.html"
WHO = DomainScope(include=("who.int",))
ALLOW = ("127.0.0.0/8", "www.who.int", "apps.who.int", "news.example")


async def loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


NONE = DomainScope()


def limits(scope: DomainScope = NONE, cache: CachePolicy | None = None) -> FetchLimits:
    return FetchLimits(timeout_s=5, max_bytes=5_000_000, max_redirects=3,
                       allow_hosts=ALLOW, cache=cache, scope=scope)  # fmt: skip


def via(web: FakeWeb, front: str, target: str) -> str:
    """A URL on ``front`` that redirects to TARGET on ``target``."""
    to = f"http://{target}:{web.port}{TARGET}"
    return f"http://{front}:{web.port}/redirect-to?url={quote(to, safe='')}"


async def test_a_redirect_out_of_the_scope_is_refused_before_it_is_asked(web: FakeWeb) -> None:
    url = via(web, "www.who.int", "news.example")
    with pytest.raises(OutOfScope) as err:
        await HttpFetcher(resolver=loopback).fetch(url, limits=limits(WHO))
    assert err.value.reason == (
        f"out of scope: it redirects to http://news.example:{web.port}{TARGET}: "
        "news.example is outside include_domains (who.int)"
    )
    assert web.fetches["/redirect-to"] == 1 and web.fetches[TARGET] == 0, "the hop never asked"
    inside = await HttpFetcher(resolver=loopback).fetch(via(web, "www.who.int", "apps.who.int"),
                                                        limits=limits(WHO))  # fmt: skip
    assert inside.url.startswith("http://apps.who.int") and web.fetches[TARGET] == 1


async def test_a_first_url_out_of_the_scope_is_never_requested(web: FakeWeb) -> None:
    excluded = DomainScope(exclude=(".example",))
    with pytest.raises(
        OutOfScope, match=r"news\.example is excluded \(exclude_domains: \.example\)"
    ):
        await HttpFetcher(resolver=loopback).fetch(f"http://news.example:{web.port}{TARGET}",
                                                   limits=limits(excluded))  # fmt: skip
    assert sum(web.fetches.values()) == 0


async def test_a_cached_page_is_served_only_while_every_hop_is_in_the_scope(
    web: FakeWeb, tmp_path: Path
) -> None:
    policy = CachePolicy(path=str(tmp_path / "cache.sqlite"), page_ttl_s=3600)
    fetcher = CachedFetcher(HttpFetcher(resolver=loopback), CacheStore())
    url = via(web, "www.who.int", "news.example")
    first = await fetcher.fetch(url, limits=limits(cache=policy))  # an unscoped run keeps it
    assert first.cached == "" and web.fetches[TARGET] == 1
    again = await fetcher.fetch(url, limits=limits(DomainScope(exclude=("stats.who.int",)), policy))
    assert again.cached == "hit", "every hop is still inside this scope"
    with pytest.raises(OutOfScope, match="it redirects to"):
        await fetcher.fetch(url, limits=limits(WHO, policy))  # asked live: stopped at the hop
    assert web.fetches[TARGET] == 1, "neither the copy nor the target was used"
    with pytest.raises(OutOfScope, match="www.who.int is excluded"):
        await fetcher.fetch(url, limits=limits(DomainScope(exclude=("who.int",)), policy))
    assert web.fetches["/redirect-to"] == 2, "only the live try of the scoped run asked again"


def test_a_scoped_search_has_its_own_cache_key() -> None:
    plain = SearchSettings(backends=("tavily",), tavily_base_url="u", corpus_dir="",
                           searxng_url="", timeout_s=1)  # fmt: skip
    keys = {search_key("q", s, 5, "2025-01-01") for s in (
        plain,
        SearchSettings(**{**plain.__dict__, "scope": WHO}),
        SearchSettings(**{**plain.__dict__, "scope": DomainScope(exclude=("who.int",))}),
        SearchSettings(**{**plain.__dict__, "since": "2024-01-01"}),
    )}  # fmt: skip
    assert len(keys) == 4
