"""PageFetcher over httpx.AsyncClient: one deadline, a byte cap, counted redirects, a type check."""

from __future__ import annotations

import asyncio
from urllib.parse import urljoin

import httpx

from deskresearch.errors import FetchError
from deskresearch.records import FetchedPage, FetchLimits
from deskresearch.services.netpolicy import check_target

READABLE_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown")
_USER_AGENT = "deskresearch/0.1 (+https://pypi.org/project/deskresearch/)"


class HttpFetcher:
    """Reads web pages with httpx.

    Args:
        client: the httpx client to use (tests pass one on a MockTransport); one is made lazily
            otherwise and shared by every branch of every run.
    """

    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self._client = client

    @property
    def client(self) -> httpx.AsyncClient:
        """Return the shared client, creating it on first use."""
        if self._client is None:
            self._client = httpx.AsyncClient(headers={"User-Agent": _USER_AGENT})
        return self._client

    async def fetch(self, url: str, *, limits: FetchLimits) -> FetchedPage:
        """Return the page at ``url``, following at most ``limits.max_redirects`` redirects.

        The whole read, redirects included, shares one deadline, so a server that drips bytes
        cannot hold a branch longer than ``limits.timeout_s``. Bodies stop at ``max_bytes``.

        Raises:
            FetchError: with reason timeout, too_many_redirects, http_<code>, not_html, network,
                or blocked (a non-http(s) scheme, or a host that is not public: netpolicy).
        """
        try:
            async with asyncio.timeout(limits.timeout_s):
                return await self._follow(url, limits)
        except TimeoutError:
            raise FetchError(url, f"timeout after {limits.timeout_s:g}s", transient=True) from None
        except httpx.TimeoutException:
            raise FetchError(url, "timeout", transient=True) from None
        except httpx.TransportError as exc:
            raise FetchError(url, f"network: {type(exc).__name__}: {exc}", transient=True) from exc
        except httpx.InvalidURL as exc:
            raise FetchError(url, f"invalid URL: {exc}") from exc

    async def _follow(self, url: str, limits: FetchLimits) -> FetchedPage:
        current = url
        for _ in range(limits.max_redirects + 1):
            await check_target(current, limits.allow_hosts)  # the first URL and every redirect
            async with self.client.stream(
                "GET", current, follow_redirects=False, timeout=limits.timeout_s
            ) as resp:
                if resp.is_redirect:
                    location = resp.headers.get("location", "")
                    if not location:
                        raise FetchError(
                            url, f"redirect without Location (HTTP {resp.status_code})"
                        )
                    current = urljoin(current, location)
                    continue
                return await _read(url, current, resp, limits)
        raise FetchError(url, f"too_many_redirects (more than {limits.max_redirects})")


async def _read(url: str, final_url: str, resp: httpx.Response, limits: FetchLimits) -> FetchedPage:
    """Check status and type, then read at most ``limits.max_bytes`` of the body."""
    if resp.status_code >= 400:
        transient = resp.status_code == 429 or resp.status_code >= 500
        raise FetchError(url, f"http_{resp.status_code}", transient=transient)
    content_type = resp.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and not content_type.startswith(READABLE_TYPES):
        raise FetchError(url, f"not_html: content type {content_type}")
    body = bytearray()
    truncated = False
    async for piece in resp.aiter_bytes():
        if len(body) + len(piece) > limits.max_bytes:
            # Stop reading: a 50 MB page is never held whole.
            body.extend(piece[: limits.max_bytes - len(body)])
            truncated = True
            break
        body.extend(piece)
    return FetchedPage(
        url=final_url,
        content_type=content_type or "text/html",
        body=bytes(body),
        truncated=truncated,
    )
