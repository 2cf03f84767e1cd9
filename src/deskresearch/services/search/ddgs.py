"""DuckDuckGo search through the ddgs library: no key, the default when there is no Tavily key.

ddgs is synchronous (it drives its own HTTP client, primp, from a thread pool), so each search
runs in a thread. It reports a rate-limited or empty answer as "No results found"; both become
an empty list here, which makes the search chain try its next backend.
"""

from __future__ import annotations

import asyncio

from ddgs import DDGS
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from deskresearch.errors import SearchError
from deskresearch.records import SearchHit, SearchSettings
from deskresearch.safety.scope import site_query
from deskresearch.services.search.router import web_hits


class DuckDuckGoSearch:
    """SearchBackend over ``ddgs.DDGS().text(..., backend="duckduckgo")``.

    Args:
        engines: ddgs backends to ask ("duckduckgo"; "auto" lets ddgs spread over several).
        region: ddgs region code, e.g. "de-de"; "us-en" is ddgs' default.
    """

    name = "duckduckgo"

    def __init__(self, *, engines: str = "duckduckgo", region: str = "us-en") -> None:
        self._engines = engines
        self._region = region

    def check(self, settings: SearchSettings) -> None:
        """Nothing to configure: ddgs needs no key."""

    def _text(self, query: str, max_results: int, timeout_s: float) -> list[dict[str, str]]:
        client = DDGS(timeout=max(1, round(timeout_s)))
        return client.text(
            query, region=self._region, max_results=max_results, backend=self._engines
        )

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        """Return DuckDuckGo's results for ``query`` (narrowed by site: operators) as SearchHits."""
        try:
            asked = site_query(query, settings.scope)
            rows = await asyncio.to_thread(self._text, asked, max_results, settings.timeout_s)
        except RatelimitException as exc:
            raise SearchError(self.name, query, f"rate limited: {exc}", transient=True) from exc
        except TimeoutException as exc:
            raise SearchError(self.name, query, f"timeout: {exc}", transient=True) from exc
        except DDGSException as exc:
            if "no results" in str(exc).lower():
                return []
            raise SearchError(self.name, query, str(exc), transient=True) from exc
        return web_hits(rows, max_results=max_results, url="href", snippet="body")
