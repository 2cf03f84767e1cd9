"""Tavily search through tavily-python's AsyncTavilyClient (base URL and httpx client injectable)."""

from __future__ import annotations

import os
from collections.abc import Mapping

import httpx
from tavily import AsyncTavilyClient
from tavily import errors as tavily_errors

from deskresearch.errors import ConfigError, SearchError, in_words
from deskresearch.records import SearchHit, SearchSettings
from deskresearch.safety.scope import engine_domains
from deskresearch.services.search.checks import check_backend
from deskresearch.services.search.router import web_hits
from deskresearch.services.web.tls import tls_context


def _http_client(base_url: str, environ: Mapping[str, str]) -> httpx.AsyncClient:
    """The client tavily-python would make (its proxy variables), on the shared TLS context.

    Its own would parse the CA bundle again (about 40 ms of CPU), before the run's first search.
    """
    context = tls_context()
    proxies = {
        scheme: httpx.AsyncHTTPTransport(proxy=proxy, verify=context)
        for scheme, proxy in (
            ("http://", environ.get("TAVILY_HTTP_PROXY")),
            ("https://", environ.get("TAVILY_HTTPS_PROXY")),
        )
        if proxy
    }
    return httpx.AsyncClient(base_url=base_url, mounts=proxies or None, verify=context)


class TavilySearch:
    """Web search via Tavily; reads ``TAVILY_API_KEY`` (tavily-python's keyless mode without one).

    Args:
        transport: an httpx transport for the Tavily client (tests pass a MockTransport);
            by default tavily-python makes its own client.
        environ: where ``TAVILY_API_KEY`` is read.
    """

    name = "tavily"

    def __init__(
        self,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._transport = transport
        self._env = os.environ if environ is None else environ
        self._clients: dict[str, AsyncTavilyClient] = {}

    def _client(self, base_url: str) -> AsyncTavilyClient:
        if base_url not in self._clients:
            key = self._env.get("TAVILY_API_KEY") or None
            http = None
            if self._transport is not None:
                http = httpx.AsyncClient(base_url=base_url, transport=self._transport)
            elif key:  # keyless mode is tavily-python's own client's
                http = _http_client(base_url, self._env)
            self._clients[base_url] = AsyncTavilyClient(
                api_key=key,
                api_base_url=base_url,
                client=http,
            )
        return self._clients[base_url]

    def check(self, settings: SearchSettings) -> None:
        """Tavily needs only a URL here; keyless mode covers a missing key."""
        check_backend(self.name, settings)

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        """Return Tavily's results for ``query``, translated into SearchHits.

        The run's domain scope and ``since`` go as Tavily's own parameters (None: not sent).
        """
        client = self._client(settings.tavily_base_url)
        try:
            data = await client.search(
                query,
                max_results=max_results,
                timeout=settings.timeout_s,
                include_domains=engine_domains(settings.scope.include),
                exclude_domains=engine_domains(settings.scope.exclude),
                start_date=settings.since or None,
            )
        except tavily_errors.InvalidAPIKeyError as exc:
            raise ConfigError(f"Tavily rejected the API key: check TAVILY_API_KEY ({exc})") from exc
        except tavily_errors.MissingAPIKeyError as exc:
            raise ConfigError("Tavily needs an API key: set TAVILY_API_KEY") from exc
        except tavily_errors.UsageLimitExceededError as exc:
            raise SearchError(
                self.name, query, f"rate or usage limit: {exc}", transient=True
            ) from exc
        except tavily_errors.TimeoutError as exc:
            raise SearchError(self.name, query, f"timeout: {exc}", transient=True) from exc
        except (tavily_errors.BadRequestError, tavily_errors.ForbiddenError) as exc:
            raise SearchError(self.name, query, str(exc)) from exc
        except httpx.HTTPStatusError as exc:
            code = exc.response.status_code
            raise SearchError(
                self.name, query, f"HTTP {code}", transient=code == 429 or code >= 500
            ) from exc
        except httpx.TransportError as exc:
            raise SearchError(
                self.name,
                query,
                f"unreachable: {in_words(exc, settings.timeout_s)}",
                transient=True,
            ) from exc
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SearchError(self.name, query, "answer has no results list")
        return web_hits(results, max_results=max_results)
