"""SearxNG search through its JSON API (``GET /search?format=json``) with httpx."""

from __future__ import annotations

from typing import Any

import httpx

from deskresearch.errors import SearchError, in_words
from deskresearch.records import SearchHit, SearchSettings
from deskresearch.safety.masking import mask_secrets
from deskresearch.safety.scope import site_query
from deskresearch.services.search.checks import check_backend
from deskresearch.services.search.router import web_hits
from deskresearch.services.web.tls import tls_context


class SearxngSearch:
    """SearchBackend over a SearxNG instance (``searxng_url`` / ``SEARXNG_URL``).

    Args:
        transport: an httpx transport (tests pass a MockTransport); default: the network.
    """

    name = "searxng"

    def __init__(self, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport = transport

    def check(self, settings: SearchSettings) -> None:
        """Require an http(s) base URL."""
        check_backend("searxng", settings)

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        """Return the instance's results for ``query`` (narrowed by site: operators) as SearchHits."""
        self.check(settings)
        url = settings.searxng_url.rstrip("/") + "/search"
        params = {"q": site_query(query, settings.scope), "format": "json"}
        try:
            async with httpx.AsyncClient(
                transport=self._transport, timeout=settings.timeout_s, verify=tls_context()
            ) as client:
                resp = await client.get(url, params=params, headers={"Accept": "application/json"})
        except httpx.TimeoutException as exc:
            raise SearchError(self.name, query, "timeout", transient=True) from exc
        except httpx.TransportError as exc:
            reason = f"unreachable at {mask_secrets(settings.searxng_url)}: {in_words(exc, settings.timeout_s)}"
            raise SearchError(self.name, query, reason, transient=True) from exc
        if resp.status_code == 403:
            reason = "HTTP 403: the instance does not serve JSON; add json to search.formats in its settings.yml"
            raise SearchError(self.name, query, reason)
        if resp.status_code != 200:
            code = resp.status_code
            raise SearchError(
                self.name, query, f"HTTP {code}", transient=code == 429 or code >= 500
            )
        try:
            data: Any = resp.json()
        except ValueError as exc:
            raise SearchError(self.name, query, "answer is not JSON") from exc
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SearchError(self.name, query, "answer has no results list")
        return web_hits(results, max_results=max_results)
