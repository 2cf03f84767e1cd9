"""The I/O seams: what nodes may ask of the outside world, as Protocols.

Services carry connections and are bound when the graph is built; per-run choices (model,
backend, limits) arrive as arguments built from the Context. Implementations translate library
errors into ``deskresearch.errors`` at this boundary, so nodes never import httpx or tavily.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from deskresearch.records import (
    Extracted,
    FetchedPage,
    FetchLimits,
    ModelSpec,
    SearchHit,
    SearchSettings,
    Stage,
    Usage,
    Validators,
)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


@dataclass(frozen=True)
class SearchResult:
    """Hits for one query, which backend gave them, and why earlier ones were passed over."""

    hits: list[SearchHit]
    backend: str
    passed_over: tuple[str, ...] = ()
    cached: bool = False  # today's stored result for the same query and chain


@dataclass(frozen=True)
class Reply(Generic[T]):
    """A model's answer and what it cost."""

    value: T
    usage: Usage
    truncated: bool = False  # the model stopped at its output limit (finish_reason=length)


class ChatService(Protocol):
    """Calls a chat model."""

    def check(self, spec: ModelSpec) -> None:
        """Raise ConfigError when ``spec`` cannot work (no key and no base URL), before any call."""
        ...

    async def structured(
        self, messages: Sequence[BaseMessage], schema: type[M], *, spec: ModelSpec, stage: Stage
    ) -> Reply[M]:
        """Return the answer parsed into ``schema``; raise ModelOutputError when it does not fit."""
        ...

    async def text(
        self, messages: Sequence[BaseMessage], *, spec: ModelSpec, stage: Stage
    ) -> Reply[str]:
        """Return the answer as text, reasoning blocks removed."""
        ...


@dataclass(frozen=True)
class ChatCall:
    """One model call, as a ChatLayer sees it."""

    messages: Sequence[BaseMessage]
    schema: type[BaseModel] | None  # None: a free-text answer
    spec: ModelSpec
    stage: Stage


def endpoint_of(service: object, spec: ModelSpec) -> str:
    """Return the URL ``service`` sends ``spec``'s calls to.

    One resolver for everything keyed by endpoint (the cache, slots, pacing): the service that
    makes the call says where it goes (``OpenAIChat.endpoint``); a service that cannot say is
    known by the spec's base URL.
    """
    resolve = getattr(service, "endpoint", None)
    return str(resolve(spec)) if callable(resolve) else spec.base_url


class ChatLayer:
    """A ChatService around another that adds one concern (limits, retries, the cache).

    Subclasses implement ``around``: what happens around the inner call, the same for
    structured and text answers.
    """

    def __init__(self, inner: ChatService) -> None:
        self.inner = inner

    def check(self, spec: ModelSpec) -> None:
        """Delegate the configuration check."""
        self.inner.check(spec)

    def endpoint(self, spec: ModelSpec) -> str:
        """Return where the inner service sends ``spec``'s calls."""
        return endpoint_of(self.inner, spec)

    async def structured(
        self, messages: Sequence[BaseMessage], schema: type[M], *, spec: ModelSpec, stage: Stage
    ) -> Reply[M]:
        """The inner service's answer, with this layer's concern around it."""
        return await self.around(
            lambda: self.inner.structured(messages, schema, spec=spec, stage=stage),
            ChatCall(messages, schema, spec, stage),
        )

    async def text(
        self, messages: Sequence[BaseMessage], *, spec: ModelSpec, stage: Stage
    ) -> Reply[str]:
        """The inner service's answer, with this layer's concern around it."""
        return await self.around(
            lambda: self.inner.text(messages, spec=spec, stage=stage),
            ChatCall(messages, None, spec, stage),
        )

    async def around(self, call: Callable[[], Awaitable[Reply[T]]], request: ChatCall) -> Reply[T]:
        """Run ``call`` (the inner service's answer to ``request``)."""
        raise NotImplementedError


class SearchBackend(Protocol):
    """Turns a query into hits. Raises SearchError; never returns None."""

    def check(self, settings: SearchSettings) -> None:
        """Raise ConfigError when ``settings`` cannot work (e.g. a missing corpus folder)."""
        ...

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        """Return at most ``max_results`` hits, best first."""
        ...


class SearchService(Protocol):
    """What nodes search with: a chain of backends (services.search.SearchRouter)."""

    def check(self, settings: SearchSettings) -> None:
        """Raise ConfigError when a backend of the chain cannot work."""
        ...

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> SearchResult:
        """Return the first backend's hits that has any, and why others were passed over."""
        ...


class PageFetcher(Protocol):
    """Reads a URL's bytes within limits. Raises FetchError."""

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        """Return the page body, cut at ``limits.max_bytes``.

        With ``validators`` (a cached copy's ETag / Last-Modified) the request is conditional:
        a 304 comes back as ``FetchedPage(not_modified=True)`` with an empty body. The page's
        ``chain`` (and a FetchError's) lists every URL requested, redirects included: the cache
        serves a copy only to a run whose network policy admits each of them.
        """
        ...


class PagePrefetcher(Protocol):
    """Starts fetching pages a step may read soon (services.web.prefetch)."""

    def prefetch(self, urls: Sequence[str], limits: FetchLimits) -> None:
        """Start fetching ``urls`` on the running loop; return at once."""
        ...


class ContentExtractor(Protocol):
    """Turns a page body into its main text as markdown."""

    def warm(self) -> None:
        """Start slow set-up (worker processes) in the background; return at once."""
        ...

    async def extract(self, body: bytes | str, *, url: str, content_type: str) -> Extracted | None:
        """Return the main content, or None when the page has none."""
        ...


class TokenCounter(Protocol):
    """Counts and splits text in model tokens."""

    def warm(self) -> None:
        """Start loading the tokenizer in the background; return at once."""
        ...

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        ...

    def fits(self, text: str, max_tokens: int) -> bool:
        """Return whether ``text`` is at most ``max_tokens`` tokens (cheaply when obvious)."""
        ...

    async def split(self, text: str, *, max_tokens: int) -> list[str]:
        """Split ``text`` into pieces of at most ``max_tokens`` tokens, on natural boundaries."""
        ...


RankFunc = Callable[[list[SearchHit]], list[SearchHit]]
"""A custom re-ranking applied after the model's ranking (MetaGPT's ``rank_func``)."""
