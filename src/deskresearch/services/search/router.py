"""The search chain: the run's backends in order, the next one tried when one fails or is empty.

``Context.search`` names the chain (``tavily,duckduckgo``); ``auto`` means Tavily then
DuckDuckGo when ``TAVILY_API_KEY`` is set, else DuckDuckGo alone. Why each backend was passed
over travels with the result into provenance.

A backend that answered a query with nothing is not asked it again for a while: when a later
backend fails for a moment, the run's retry goes down the chain again, and a paid engine (a
Tavily credit a search) would be paid again for the same empty answer.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from deskresearch.errors import ConfigError, SearchError
from deskresearch.records import SearchHit, SearchSettings
from deskresearch.services.base import SearchBackend, SearchResult


def web_hits(
    rows: Sequence[Any], *, max_results: int, url: str = "url", snippet: str = "content"
) -> list[SearchHit]:
    """Turn a web search API's result rows into SearchHits (rows without a URL are skipped).

    A URL that is not a web address (javascript:, file:, malformed) is kept: the search node
    drops it with its reason (``safety.urls.url_problem``), so no drop goes unrecorded.
    """
    hits = [
        SearchHit(
            url=str(r[url]),
            title=str(r.get("title") or ""),
            snippet=str(r.get(snippet) or ""),
            raw_content=None,
            content_type=None,
        )
        for r in rows
        if isinstance(r, dict) and isinstance(r.get(url), str) and r[url].strip()
    ]
    return hits[:max_results]


EMPTY_KEPT_S = 600.0  # how long an empty answer stands for the same query and settings
EMPTY_KEPT = 1024  # empty answers remembered at most (the oldest forgotten first)


class SearchRouter:
    """Runs the chain of backends a run's settings name; one router serves every setting.

    Args:
        backends: backend by name (tavily, duckduckgo, searxng, corpus).
        fallback: serves names not in ``backends`` (tests inject one fake for every name).
    """

    def __init__(
        self, backends: Mapping[str, SearchBackend], *, fallback: SearchBackend | None = None
    ) -> None:
        self._backends = dict(backends)
        self._fallback = fallback
        self._empty: OrderedDict[tuple[Any, ...], float] = OrderedDict()  # key → when answered

    def _chain(self, settings: SearchSettings) -> list[tuple[str, SearchBackend]]:
        chain: list[tuple[str, SearchBackend]] = []
        for name in settings.backends:
            backend = self._backends.get(name, self._fallback)
            if backend is None:
                known = ", ".join(sorted(self._backends))
                raise ConfigError(f"search backend {name!r} is unknown: use one of {known}")
            if all(backend is not b for _, b in chain):  # one fake serving every name: once
                chain.append((name, backend))
        return chain

    def check(self, settings: SearchSettings) -> None:
        """Check every backend of the chain, so a bad setting fails before any work."""
        for _, backend in self._chain(settings):
            backend.check(settings)

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> SearchResult:
        """Search with the first backend that answers with hits.

        Raises:
            SearchError: every backend failed (transient if any failure was).
            ConfigError: the last backend is misconfigured (earlier ones are passed over).
        """
        chain = self._chain(settings)
        passed: list[str] = []
        errors: list[SearchError] = []
        for i, (name, backend) in enumerate(chain):
            last = i == len(chain) - 1
            asked = (name, query, max_results, settings)
            if not last and self._answered_empty(asked):
                passed.append(f"{name}: no results (asked a moment ago)")
                continue
            try:
                hits = await backend.search(query, max_results=max_results, settings=settings)
            except ConfigError as exc:
                if last and not errors:
                    raise
                passed.append(f"{name}: {exc}")
                continue
            except SearchError as exc:
                errors.append(exc)
                passed.append(f"{name}: {exc.reason}")
                continue
            if hits or last and not errors:
                return SearchResult(hits, name, tuple(passed))
            self._remember_empty(asked)
            passed.append(f"{name}: no results")
        if errors:
            names = "→".join(name for name, _ in chain)
            transient = any(e.transient for e in errors)
            raise SearchError(names, query, "; ".join(passed), transient=transient)
        return SearchResult([], chain[-1][0], tuple(passed))

    def _answered_empty(self, asked: tuple[Any, ...]) -> bool:
        when = self._empty.get(asked)
        if when is None:
            return False
        if time.monotonic() - when > EMPTY_KEPT_S:
            del self._empty[asked]
            return False
        return True

    def _remember_empty(self, asked: tuple[Any, ...]) -> None:
        self._empty[asked] = time.monotonic()
        self._empty.move_to_end(asked)
        while len(self._empty) > EMPTY_KEPT:
            self._empty.popitem(last=False)
