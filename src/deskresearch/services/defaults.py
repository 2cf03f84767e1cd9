"""The real services, filled in for whatever a caller of build_graph did not inject."""

from __future__ import annotations

from dataclasses import dataclass

from deskresearch.services.base import (
    ChatService,
    ContentExtractor,
    PageFetcher,
    RankFunc,
    SearchBackend,
    SearchService,
    TokenCounter,
)
from deskresearch.services.model.limits import LimitedChat, LimitedFetcher, Limiter
from deskresearch.services.model.llm import OpenAIChat
from deskresearch.services.model.retry import RetryingChat
from deskresearch.services.model.tokens import TiktokenCounter
from deskresearch.services.search.corpus import CorpusSearch
from deskresearch.services.search.ddgs import DuckDuckGoSearch
from deskresearch.services.search.router import SearchRouter
from deskresearch.services.search.searxng import SearxngSearch
from deskresearch.services.search.tavily import TavilySearch
from deskresearch.services.storage.cache import CachedChat, CachedFetcher, CachedSearch
from deskresearch.services.storage.cache_store import CacheStore
from deskresearch.services.storage.claims import PageClaims
from deskresearch.services.web.extract import TrafilaturaExtractor
from deskresearch.services.web.fetch import HttpFetcher
from deskresearch.services.web.prefetch import Prefetcher


@dataclass(frozen=True, kw_only=True)
class Services:
    """Everything a node may use for I/O."""

    llm: ChatService
    search: SearchService
    fetcher: Prefetcher  # every read, and the results fetched while they are ranked
    extractor: ContentExtractor
    tokens: TokenCounter
    limiter: Limiter
    claims: PageClaims
    rank_func: RankFunc | None = None


def search_service(search: SearchRouter | SearchBackend | None) -> SearchService:
    """The search chain: the given router, a given backend serving every name, or the real ones."""
    if isinstance(search, SearchRouter):
        return search
    if search is not None:
        return SearchRouter({}, fallback=search)
    backends: dict[str, SearchBackend] = {
        "tavily": TavilySearch(),
        "duckduckgo": DuckDuckGoSearch(),
        "searxng": SearxngSearch(),
        "corpus": CorpusSearch(),
    }
    return SearchRouter(backends)


def default_services(
    *,
    llm: ChatService | None = None,
    search: SearchRouter | SearchBackend | None = None,
    fetcher: PageFetcher | None = None,
    extractor: ContentExtractor | None = None,
    tokens: TokenCounter | None = None,
    rank_func: RankFunc | None = None,
    limiter: Limiter | None = None,
) -> Services:
    """Return a Services bundle: the given ones, real implementations for the rest.

    Every default is cheap to build and connects lazily: ``langgraph dev`` imports the graph
    before any key is configured, so nothing here may need one. Model calls and fetches, given
    or default, go through one Limiter (the Context's max_model_calls / max_fetches limits);
    model calls are retried by RetryingChat (Retry-After, backoff, the run's retry budget).
    Answers, searches and pages go through the persistent cache when the run's Context has it.
    A given ``limiter`` replaces the process-local one (a batch on a Ray cluster shares its
    limits across nodes).
    """
    limiter = limiter or Limiter()
    store = CacheStore()  # outermost: a cache hit takes no slot, no retry and no budget
    return Services(
        llm=CachedChat(RetryingChat(LimitedChat(llm or OpenAIChat(), limiter), limiter), store),
        search=CachedSearch(search_service(search), store),
        fetcher=Prefetcher(CachedFetcher(LimitedFetcher(fetcher or HttpFetcher(), limiter), store)),
        extractor=extractor or TrafilaturaExtractor(),
        tokens=tokens or TiktokenCounter(),
        limiter=limiter,
        claims=PageClaims(),
        rank_func=rank_func,
    )
