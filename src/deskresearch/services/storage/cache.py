"""The persistent cache as three service wrappers: model answers, searches, pages.

A re-run of the same research costs no model tokens and no fetches: answers are kept by
(endpoint, model, method, schema, messages), searches by (query, backend chain, scope, day), pages
by canonical URL (with every URL they came through, for the network policy and the domain scope
of later runs). A page
is used unasked for ``page_ttl_s``, then revalidated with a conditional GET (ETag /
Last-Modified). Each wrapper sits outside the limiter, so a hit takes no slot, no
retry and no budget; it is reported as ``cached_calls`` in usage and ``cached`` in provenance.
The per-run ``CachePolicy`` (None: off) arrives inside the spec/settings/limits like every
other per-run choice. LangGraph's own node cache was not used: a replayed node would replay
its usage rows, counting tokens the re-run never spent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ValidationError

from deskresearch.errors import FetchError, OutOfScope, RefusedURL
from deskresearch.records import (
    FetchedPage,
    FetchLimits,
    ModelSpec,
    SearchSettings,
    Stage,
    Usage,
    Validators,
)
from deskresearch.safety.scope import outside
from deskresearch.safety.urls import canonical_url
from deskresearch.services.base import (
    ChatCall,
    ChatLayer,
    ChatService,
    PageFetcher,
    Reply,
    SearchResult,
    SearchService,
)
from deskresearch.services.storage.cache_store import CacheStore, Entry, answer_key, digest
from deskresearch.services.web.netpolicy import check_target

T = TypeVar("T")


def search_key(query: str, settings: SearchSettings, max_results: int, day: str) -> str:
    """Key a search by everything that changes its hits: the chain, each backend's place, scope.

    The scope and ``since`` are asked of the engines, so an unscoped answer must not serve a
    scoped search (nor the reverse).
    """
    places = (settings.tavily_base_url, settings.searxng_url, settings.corpus_dir)
    scope = (settings.scope.include, settings.scope.exclude, settings.since)
    return digest("search", query, settings.backends, places, max_results, day, scope)


def hit_usage(stage: Stage, model: str) -> Usage:
    """The usage row of a call answered from the cache: nothing spent."""
    return Usage(stage=stage, model=model, input_tokens=0, output_tokens=0, calls=0, cached_calls=1)


class CachedChat(ChatLayer):
    """A ChatService that answers repeated calls from the cache."""

    def __init__(self, inner: ChatService, store: CacheStore) -> None:
        super().__init__(inner)
        self._store = store

    def check(self, spec: ModelSpec) -> None:
        """Open the cache file (a ConfigError names an unusable one), then check the model."""
        if spec.cache:
            self._store.open(spec.cache.path)
        self.inner.check(spec)

    async def around(self, call: Callable[[], Awaitable[Reply[T]]], request: ChatCall) -> Reply[T]:
        """The cached answer for this call, else the inner service's (then kept)."""
        spec, schema = request.spec, request.schema
        if spec.cache is None:
            return await call()
        shape = schema.model_json_schema() if schema else None
        prompt = [(m.type, m.content) for m in request.messages]
        key = answer_key(self.endpoint(spec), spec, prompt, shape)
        entry = await self._store.get(spec.cache.path, "answer", key)
        if entry is not None:
            try:
                value = schema.model_validate_json(entry.value) if schema else entry.value.decode()
            except (ValidationError, UnicodeDecodeError):
                pass  # kept by another version with another schema: ask again
            else:
                truncated = bool(entry.meta.get("truncated"))
                # The value has the type the caller asked for: its schema, or str for text.
                return Reply(cast(T, value), hit_usage(request.stage, spec.model), truncated)
        reply = await call()
        answer = reply.value
        raw = answer.model_dump_json() if isinstance(answer, BaseModel) else str(answer)
        meta = {"model": spec.model, "stage": request.stage, "truncated": reply.truncated}
        await self._store.put(spec.cache.path, "answer", key, raw.encode(), meta)
        return reply


class CachedSearch:
    """A SearchService that answers a query searched today from the cache."""

    def __init__(self, inner: SearchService, store: CacheStore) -> None:
        self.inner = inner
        self._store = store

    def check(self, settings: SearchSettings) -> None:
        """Open the cache file, then check the chain."""
        if settings.cache:
            self._store.open(settings.cache.path)
        self.inner.check(settings)

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> SearchResult:
        """Today's cached hits for this query and chain, else the chain's (then kept)."""
        if settings.cache is None:
            return await self.inner.search(query, max_results=max_results, settings=settings)
        day = datetime.now(UTC).date().isoformat()
        key = search_key(query, settings, max_results, day)
        entry = await self._store.get(settings.cache.path, "search", key)
        if entry is not None:
            return SearchResult(json.loads(entry.value), entry.meta["backend"], cached=True)
        result = await self.inner.search(query, max_results=max_results, settings=settings)
        # Nothing found is not kept (the backend may have been throttled); local files are
        # read fresh, since the folder may have changed.
        if result.hits and result.backend != "corpus":
            value = json.dumps(result.hits, ensure_ascii=False).encode()
            await self._store.put(
                settings.cache.path, "search", key, value, {"backend": result.backend}
            )
        return result


class CachedFetcher:
    """A PageFetcher that serves fresh cached pages and revalidates stale ones.

    The network policy and the run's domain scope come first: a cached copy is used (served,
    remembered as a failure, or revalidated with its validators) only if this run's policy and
    scope admit every URL it came through, the first one and each redirect (a page kept by a
    run that allowed an intranet host, or a host this run excludes, directly or behind a
    redirect, is not served to a run that does not). A copy whose chain a policy or scope
    refuses is asked of the server again, where that run's checks decide. A copy
    kept without its chain (by a version before chains were recorded) is never used: where it
    came from is unknown. Pages that failed for good (404, not a page, redirect loops) are
    remembered for the same TTL; transient failures (timeouts, 5xx) and policy refusals (which
    depend on the run's allow-list) are not.
    """

    def __init__(self, inner: PageFetcher, store: CacheStore) -> None:
        self.inner = inner
        self._store = store

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        """A cached copy younger than the TTL, else the server's answer (a 304 reuses the copy)."""
        policy = limits.cache
        if policy is None:
            return await self.inner.fetch(url, limits=limits, validators=validators)
        key = canonical_url(url)
        entry = await self._store.get(policy.path, "page", key)
        if entry is not None:  # about to be used without the network: check first
            entry = await _admitted(url, entry, limits)
        fresh = entry is not None and time.time() - entry.stored < policy.page_ttl_s
        meta = entry.meta if entry else {}
        if "error" in meta:  # a page that failed for good (404, not a page) is not asked again
            if fresh:
                raise FetchError(url, f"{meta['error']} (remembered from {meta['read_on']})")
            entry = None
        # A copy cut at a smaller byte limit than this run's is not the page this run reads.
        elif meta.get("truncated") and meta.get("max_bytes", 0) < limits.max_bytes:
            entry = None
        if entry is not None:
            if fresh:
                return _from_cache(entry.value, meta, "hit")
            validators = Validators(etag=meta["etag"], last_modified=meta["last_modified"])
        try:
            page = await self.inner.fetch(url, limits=limits, validators=validators)
        except FetchError as exc:
            if not exc.transient and not isinstance(exc, RefusedURL):
                failed = {"error": exc.reason, "read_on": date.today().isoformat(),
                          "chain": list(exc.chain or (url,))}  # fmt: skip
                await self._store.put(policy.path, "page", key, b"", failed)
            raise
        if page.not_modified and entry is not None:
            await self._store.touch(policy.path, "page", key)
            return _from_cache(entry.value, meta, "revalidated")
        await self._store.put(policy.path, "page", key, page.body, _page_meta(url, page, limits))
        return page


async def _admitted(url: str, entry: Entry, limits: FetchLimits) -> Entry | None:
    """The entry, if this run's policy and scope admit every URL of its chain; else None (ask again).

    Raises:
        RefusedURL: the policy or the scope refuses ``url`` itself (as the live fetch would).
    """
    chain = entry.meta.get("chain")
    if not isinstance(chain, list) or not chain:
        return None  # kept without its chain: which hosts it came through is unknown
    if why := outside(url, limits.scope):
        raise OutOfScope(url, f"out of scope: {why}")
    await check_target(url, limits.allow_hosts)
    for hop in dict.fromkeys(str(h) for h in chain):
        if hop == url:  # just checked
            continue
        if outside(hop, limits.scope):
            return None  # the live fetch refuses that hop before asking for it
        try:
            await check_target(hop, limits.allow_hosts)
        except FetchError:  # refused, or not resolvable now: the server is asked again
            return None
    return entry


def _page_meta(url: str, page: FetchedPage, limits: FetchLimits) -> dict[str, Any]:
    return {
        "url": page.url,
        "chain": list(page.chain or dict.fromkeys((url, page.url))),  # every URL requested
        "content_type": page.content_type,
        "truncated": page.truncated,
        "max_bytes": limits.max_bytes,
        "etag": page.etag,
        "last_modified": page.last_modified,
        "read_on": date.today().isoformat(),
    }


def _from_cache(
    body: bytes, meta: dict[str, Any], how: Literal["hit", "revalidated"]
) -> FetchedPage:
    # A revalidated copy is the page as the server has it today.
    read_on = date.today().isoformat() if how == "revalidated" else meta.get("read_on", "")
    return FetchedPage(
        url=meta["url"],
        content_type=meta["content_type"],
        body=body,
        truncated=bool(meta["truncated"]),
        etag=meta.get("etag", ""),
        last_modified=meta.get("last_modified", ""),
        cached=how,
        read_on=read_on,
        chain=tuple(meta["chain"]),
    )
