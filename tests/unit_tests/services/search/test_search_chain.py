"""DuckDuckGo (ddgs) and SearxNG through their real clients on loopback, and the fallback chain."""

import dataclasses

import pytest
from ddgs.engines.duckduckgo import Duckduckgo

from deskresearch.config.context import Context, search_chain
from deskresearch.errors import ConfigError, SearchError
from deskresearch.records import DomainScope, SearchSettings
from deskresearch.services.search.ddgs import DuckDuckGoSearch
from deskresearch.services.search.router import SearchRouter
from deskresearch.services.search.searxng import SearxngSearch
from deskresearch.services.search.tavily import TavilySearch
from tests.support.fakes import FakeSearch, hit
from tests.support.loopback import FakeWeb

pytestmark = pytest.mark.anyio


def settings(web: FakeWeb, chain: str = "tavily") -> SearchSettings:
    return SearchSettings(
        backends=tuple(chain.split(",")),
        tavily_base_url=web.base,
        corpus_dir="",
        searxng_url=web.url("/searxng"),
        timeout_s=5,
    )


@pytest.fixture
def ddg(web: FakeWeb, monkeypatch: pytest.MonkeyPatch) -> DuckDuckGoSearch:
    """ddgs' own DuckDuckGo engine and HTTP client, posting to the loopback web."""
    monkeypatch.setattr(Duckduckgo, "search_url", web.url("/ddg/html/"))
    return DuckDuckGoSearch()


def router(ddg: DuckDuckGoSearch) -> SearchRouter:
    tavily = TavilySearch(environ={"TAVILY_API_KEY": "tvly-test"})
    return SearchRouter({"tavily": tavily, "duckduckgo": ddg, "searxng": SearxngSearch()})


async def test_duckduckgo_through_ddgs_returns_hits(web: FakeWeb, ddg: DuckDuckGoSearch) -> None:
    hits = await ddg.search("lithium", max_results=4, settings=settings(web))
    assert 1 <= len(hits) <= 4
    assert all(h["url"].startswith("http://127.0.0.") and h["title"] for h in hits)
    assert web.searches[-1]["engine"] == "duckduckgo" and web.searches[-1]["query"] == "lithium"


async def test_duckduckgo_rate_limit_or_empty_is_no_results(
    web: FakeWeb, ddg: DuckDuckGoSearch
) -> None:
    web.engines_down["duckduckgo"] = 202  # what DuckDuckGo answers when it throttles
    assert await ddg.search("lithium", max_results=4, settings=settings(web)) == []


async def test_searxng_json_api(web: FakeWeb) -> None:
    hits = await SearxngSearch().search("cobalt", max_results=3, settings=settings(web))
    assert len(hits) == 3 and all(h["snippet"] for h in hits)
    assert web.searches[-1]["engine"] == "searxng"


@pytest.mark.parametrize(("status", "transient", "words"), [
    (429, True, "HTTP 429"), (503, True, "HTTP 503"), (403, False, "search.formats"),
])  # fmt: skip
async def test_searxng_errors(web: FakeWeb, status: int, transient: bool, words: str) -> None:
    web.engines_down["searxng"] = status
    with pytest.raises(SearchError, match=words) as err:
        await SearxngSearch().search("cobalt", max_results=3, settings=settings(web))
    assert err.value.transient is transient


async def test_searxng_unreachable_and_unset() -> None:
    unset = SearchSettings(backends=("searxng",), tavily_base_url="", corpus_dir="",
                           searxng_url="", timeout_s=2)  # fmt: skip
    with pytest.raises(ConfigError, match="SEARXNG_URL"):
        SearxngSearch().check(unset)
    down = SearchSettings(backends=("searxng",), tavily_base_url="", corpus_dir="",
                          searxng_url="http://127.0.0.1:9", timeout_s=2)  # fmt: skip
    with pytest.raises(SearchError, match="unreachable") as err:
        await SearxngSearch().search("q", max_results=3, settings=down)
    assert err.value.transient


async def test_chain_falls_over_to_the_next_backend_and_says_why(
    web: FakeWeb, ddg: DuckDuckGoSearch
) -> None:
    web.engines_down["tavily"] = 503
    result = await router(ddg).search(
        "lithium", max_results=4, settings=settings(web, "tavily,searxng,duckduckgo")
    )
    assert result.backend == "searxng" and result.hits
    assert result.passed_over == ("tavily: HTTP 503",)


async def test_chain_skips_an_empty_answer(web: FakeWeb, ddg: DuckDuckGoSearch) -> None:
    web.engines_down["duckduckgo"] = 202
    result = await router(ddg).search(
        "lithium", max_results=4, settings=settings(web, "duckduckgo,tavily")
    )
    assert result.backend == "tavily" and result.passed_over == ("duckduckgo: no results",)


async def test_chain_fails_only_when_every_backend_failed(
    web: FakeWeb, ddg: DuckDuckGoSearch
) -> None:
    web.engines_down |= {"tavily": 429, "searxng": 500}
    with pytest.raises(SearchError) as err:
        await router(ddg).search("q", max_results=4, settings=settings(web, "tavily,searxng"))
    assert err.value.transient
    assert err.value.reason == "tavily: rate or usage limit: injected failure; searxng: HTTP 500"


async def test_chain_passes_over_a_misconfigured_backend_but_not_a_last_one(web: FakeWeb) -> None:
    broken = SearchSettings(backends=("searxng", "tavily"), tavily_base_url=web.base,
                            corpus_dir="", searxng_url="", timeout_s=5)  # fmt: skip
    chain = SearchRouter({"searxng": SearxngSearch(),
                          "tavily": TavilySearch(environ={"TAVILY_API_KEY": "k"})})  # fmt: skip
    result = await chain.search("q", max_results=2, settings=broken)
    assert result.backend == "tavily" and "SEARXNG_URL" in result.passed_over[0]
    alone = SearchSettings(backends=("searxng",), tavily_base_url="", corpus_dir="",
                           searxng_url="", timeout_s=5)  # fmt: skip
    with pytest.raises(ConfigError):
        await chain.search("q", max_results=2, settings=alone)


async def test_one_injected_backend_serves_every_name_once() -> None:
    fake = FakeSearch({"q": [hit(1)]})
    chain = SearchRouter({}, fallback=fake)
    both = SearchSettings(backends=("tavily", "duckduckgo"), tavily_base_url="", corpus_dir="",
                          searxng_url="", timeout_s=1)  # fmt: skip
    result = await chain.search("q", max_results=3, settings=both)
    assert result.hits == [hit(1)] and fake.queries == ["q"]


def test_auto_means_tavily_first_only_with_a_key() -> None:
    assert search_chain("auto", {"TAVILY_API_KEY": "k"}) == ("tavily", "duckduckgo")
    assert search_chain("auto", {}) == ("duckduckgo",)
    assert search_chain(" searxng , corpus,searxng", {}) == ("searxng", "corpus")


@pytest.mark.parametrize("bad", ["google", "tavily,,corpus", "", "tavily;corpus"])
def test_unknown_backends_are_rejected_up_front(bad: str) -> None:
    from deskresearch.config.context import validated

    with pytest.raises(ConfigError, match="search="):
        validated({"search": bad}, source="test")


def test_unknown_name_in_router_is_a_config_error() -> None:
    chain = SearchRouter({"tavily": FakeSearch()})
    with pytest.raises(ConfigError, match="unknown"):
        chain.check(SearchSettings(backends=("bing",), tavily_base_url="", corpus_dir="",
                                   searxng_url="", timeout_s=1))  # fmt: skip


def test_context_default_is_auto() -> None:
    assert Context.__dataclass_fields__["search"].default == "auto"


def scoped(web: FakeWeb, chain: str) -> SearchSettings:
    scope = DomainScope(include=("who.int", ".gov"), exclude=("stats.who.int",))
    return dataclasses.replace(settings(web, chain), scope=scope, since="2024-01-01")


async def test_tavily_is_asked_for_the_scope_with_its_own_parameters(web: FakeWeb) -> None:
    await router_without_ddg().search("lithium", max_results=4, settings=scoped(web, "tavily"))
    sent = web.searches[-1]
    assert sent["query"] == "lithium", "no operators in a Tavily query"
    assert sent["include_domains"] == ["who.int", "gov"]
    assert sent["exclude_domains"] == ["stats.who.int"] and sent["start_date"] == "2024-01-01"
    await router_without_ddg().search("lithium", max_results=4, settings=settings(web))
    assert not {"include_domains", "exclude_domains", "start_date"} & set(web.searches[-1])


async def test_duckduckgo_and_searxng_get_site_operators(
    web: FakeWeb, ddg: DuckDuckGoSearch
) -> None:
    expected = "lithium (site:who.int OR site:gov) -site:stats.who.int"
    await ddg.search("lithium", max_results=4, settings=scoped(web, "duckduckgo"))
    assert web.searches[-1] == {"query": expected, "max_results": 10, "engine": "duckduckgo"}
    await SearxngSearch().search("lithium", max_results=4, settings=scoped(web, "searxng"))
    assert web.searches[-1] == {"query": expected, "max_results": 10, "engine": "searxng"}


def router_without_ddg() -> SearchRouter:
    return SearchRouter({"tavily": TavilySearch(environ={"TAVILY_API_KEY": "tvly-test"})})


async def test_a_retry_does_not_pay_again_for_an_empty_answer() -> None:
    """A paid engine that answered nothing is not asked the same again when the run retries."""
    paid = FakeSearch({"q": []})
    later = FakeSearch({"q": SearchError("duckduckgo", "q", "HTTP 503", transient=True)})
    chain = SearchRouter({"tavily": paid, "duckduckgo": later})
    both = SearchSettings(backends=("tavily", "duckduckgo"), tavily_base_url="", corpus_dir="",
                          searxng_url="", timeout_s=1)  # fmt: skip
    with pytest.raises(SearchError) as err:
        await chain.search("q", max_results=3, settings=both)
    assert err.value.transient, "the node retries it"
    later.results["q"] = [hit(1)]
    retried = await chain.search("q", max_results=3, settings=both)
    assert retried.hits == [hit(1)] and paid.queries == ["q"], "asked once, paid once"
    assert retried.passed_over == ("tavily: no results (asked a moment ago)",)
    await chain.search("q", max_results=5, settings=both)  # another question: asked again
    await chain.search("other", max_results=3, settings=both)
    assert paid.queries == ["q", "q", "other"]
