"""PageFetcher over httpx.AsyncClient: one deadline, a byte cap, counted redirects, a type check.

Connections are made through the network policy (services.netpolicy): the address checked is
the address connected to. The fetcher ignores ``HTTP(S)_PROXY`` and ``.netrc`` (a proxy would
route around the policy): a deployment that needs one sets ``DESKRESEARCH_FETCH_PROXY``. Every
target is then still checked before it is requested, but the proxy resolves the name again and
connects itself, so the pinning that stops DNS rebinding is the proxy's job (a warning says so
once per process). We do not hand the proxy the checked address instead of the name: for plain
http the proxy would send that address as the ``Host`` (RFC 9112 has it take the host from the
request line), breaking every virtual host, and a proxy that filters by name would see none.
Cookies are never stored, so nothing a site sets in one run reaches a request of another.
"""

from __future__ import annotations

import asyncio
import logging
import os
import zlib
from functools import cache
from http.cookiejar import CookieJar, DefaultCookiePolicy
from urllib.parse import urljoin

import httpcore
import httpx

from deskresearch.errors import FetchError, OutOfScope, RefusedURL
from deskresearch.records import FetchedPage, FetchLimits, Validators
from deskresearch.safety.masking import mask_secrets
from deskresearch.safety.scope import outside
from deskresearch.safety.urls import shown
from deskresearch.services.web.netpolicy import (
    PolicyRefused,
    PolicyTransport,
    Resolver,
    check_target,
    split_target,
)
from deskresearch.services.web.tls import tls_context

READABLE_TYPES = (
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "application/pdf",
)
_USER_AGENT = "deskresearch/0.1 (+https://pypi.org/project/deskresearch/)"
PROXY_ENV = "DESKRESEARCH_FETCH_PROXY"
log = logging.getLogger("deskresearch.fetch")


@cache
def warn_proxy(proxy: str) -> None:
    """Say once per process and proxy that a fetch proxy must filter its own egress."""
    log.warning(
        "deskresearch: warning: pages are fetched through the proxy %s (%s). Each target is "
        "checked before it is requested, but the proxy looks the name up again and connects on "
        "its own: a name that then resolves to a private address (DNS rebinding) reaches what "
        "the proxy can reach. Make the proxy refuse loopback, private and link-local "
        "destinations itself (docs/security.md).",
        mask_secrets(proxy),
        PROXY_ENV,
    )


def _no_cookies() -> CookieJar:
    """A cookie jar that accepts nothing (no domain is allowed to set a cookie)."""
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


class HttpFetcher:
    """Reads web pages with httpx.

    Args:
        client: the httpx client to use (tests pass one on a MockTransport): then only the checks
            that need no connection apply. By default one client per allow-list is made lazily
            and shared by every branch of every run with that allow-list.
        resolver: how host names are resolved (tests pass a stub; default: the system's).
        network: httpcore's backend that opens sockets (tests pass a recording stub).
        proxy: an HTTP(S) proxy for every fetch (default: ``DESKRESEARCH_FETCH_PROXY``; the
            ``HTTP(S)_PROXY`` variables are ignored).
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        resolver: Resolver | None = None,
        network: httpcore.AsyncNetworkBackend | None = None,
        proxy: str | None = None,
    ) -> None:
        self._client = client
        self._clients: dict[tuple[str, ...], httpx.AsyncClient] = {}
        self._resolver = resolver
        self._network = network
        self._proxy = proxy if proxy is not None else os.environ.get(PROXY_ENV) or None
        if self._proxy:
            warn_proxy(self._proxy)

    def client_for(self, allow: tuple[str, ...]) -> httpx.AsyncClient:
        """Return the client for one allow-list, creating it on first use.

        One per allow-list: a pooled connection was checked against the policy that opened it,
        and must not serve a run whose policy is stricter.
        """
        if self._client is not None:
            return self._client
        if allow not in self._clients:
            transport: httpx.AsyncBaseTransport
            if self._proxy:
                transport = httpx.AsyncHTTPTransport(
                    proxy=self._proxy, trust_env=False, verify=tls_context(trust_env=False)
                )
            else:
                transport = PolicyTransport(allow, resolver=self._resolver, network=self._network)
            self._clients[allow] = httpx.AsyncClient(
                transport=transport,
                trust_env=False,
                cookies=_no_cookies(),
                # Only encodings _body() decodes with a bound (no br/zstd).
                headers={"User-Agent": _USER_AGENT, "Accept-Encoding": "gzip, deflate"},
            )
        return self._clients[allow]

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        """Return the page at ``url``, following at most ``limits.max_redirects`` redirects.

        The whole read, redirects included, shares one deadline, so a server that drips bytes
        cannot hold a branch longer than ``limits.timeout_s``. Bodies stop at ``max_bytes``.
        ``validators`` make the request conditional (If-None-Match / If-Modified-Since); a 304
        returns ``not_modified=True`` and no body.

        Raises:
            FetchError: with reason timeout, too_many_redirects, http_<code>, not_html, network.
            RefusedURL: blocked by the network policy (a non-http(s) scheme, a malformed URL, or
                a host that is not public: netpolicy), or outside the run's domain scope
                (``limits.scope``), for the first URL or any redirect.
        """
        hops: list[str] = []  # every URL requested, for the page's (or the failure's) chain
        try:
            async with asyncio.timeout(limits.timeout_s):
                return await self._follow(url, limits, _conditional(validators), hops)
        except FetchError as exc:
            exc.chain = exc.chain or tuple(hops)
            raise
        except TimeoutError:
            raise FetchError(url, f"timeout after {limits.timeout_s:g}s", transient=True) from None
        except PolicyRefused as exc:
            raise RefusedURL(url, exc.reason) from None
        except httpx.TimeoutException:
            raise FetchError(url, "timeout", transient=True) from None
        except httpx.TransportError as exc:
            raise FetchError(url, f"network: {type(exc).__name__}: {exc}", transient=True) from exc
        except httpx.InvalidURL as exc:
            raise RefusedURL(url, f"blocked: malformed URL ({exc})") from exc

    async def _follow(
        self, url: str, limits: FetchLimits, headers: dict[str, str], hops: list[str]
    ) -> FetchedPage:
        current = url
        client = self.client_for(limits.allow_hosts)
        for _ in range(limits.max_redirects + 1):
            # The user's domain scope, before anything is asked of the hop's host.
            if why := outside(current, limits.scope):
                hop = f"it redirects to {shown(current)}: " if hops else ""
                raise OutOfScope(url, f"out of scope: {hop}{why}")
            hops.append(current)
            # The first URL and every redirect: what needs no DNS here, the addresses when the
            # connection is made (or here, before a proxy resolves the name itself).
            if self._proxy or self._client is not None:
                await check_target(current, limits.allow_hosts)
            else:
                split_target(current, limits.allow_hosts)
            async with client.stream(
                "GET", current, headers=headers, follow_redirects=False, timeout=limits.timeout_s
            ) as resp:
                if resp.status_code == 304 and headers:  # httpx counts 304 as a redirect
                    return FetchedPage(url=current, content_type="", body=b"", truncated=False,
                                       not_modified=True, chain=tuple(hops))  # fmt: skip
                if resp.is_redirect:
                    location = resp.headers.get("location", "")
                    if not location:
                        raise FetchError(
                            url, f"redirect without Location (HTTP {resp.status_code})"
                        )
                    current = urljoin(current, location)
                    continue
                return await _read(url, tuple(hops), resp, limits)
        raise FetchError(url, f"too_many_redirects (more than {limits.max_redirects})")


def _conditional(validators: Validators | None) -> dict[str, str]:
    """Request headers that let the server answer 304 for an unchanged cached copy."""
    headers = {}
    if validators and validators.etag:
        headers["If-None-Match"] = validators.etag
    if validators and validators.last_modified:
        headers["If-Modified-Since"] = validators.last_modified
    return headers


async def _read(
    url: str, chain: tuple[str, ...], resp: httpx.Response, limits: FetchLimits
) -> FetchedPage:
    """Check status and type, then read at most ``limits.max_bytes`` of the body."""
    if resp.status_code >= 400:
        transient = resp.status_code == 429 or resp.status_code >= 500
        raise FetchError(url, f"http_{resp.status_code}", transient=transient)
    content_type = resp.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type and not content_type.startswith(READABLE_TYPES):
        raise FetchError(url, f"not_html: content type {content_type}")
    body, truncated = await _body(url, resp, limits.max_bytes)
    return FetchedPage(
        url=chain[-1],
        content_type=content_type or "text/html",
        body=body,
        truncated=truncated,
        etag=resp.headers.get("etag", ""),
        last_modified=resp.headers.get("last-modified", ""),
        chain=chain,
    )


async def _body(url: str, resp: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """Read and decode at most ``max_bytes`` of body; return (bytes, cut).

    We decode gzip/deflate ourselves, with an output bound: httpx would inflate each network
    chunk whole, and 64 KB of a gzip bomb inflate to ~64 MB before any cap could act.
    """
    encoding = resp.headers.get("content-encoding", "").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib, by header
    elif encoding in ("", "identity"):
        decoder = None
    else:
        raise FetchError(url, f"not_html: unsupported content-encoding {encoding}")
    body = bytearray()
    try:
        async for raw in resp.aiter_raw():
            pending = raw
            while pending and len(body) <= max_bytes:
                if decoder is None:
                    body.extend(pending[: max_bytes + 1 - len(body)])
                    break
                body.extend(decoder.decompress(pending, max_bytes + 1 - len(body)))
                pending = decoder.unconsumed_tail
            if len(body) > max_bytes:  # stop reading: a 50 MB page is never held whole
                return bytes(body[:max_bytes]), True
    except zlib.error as exc:
        raise FetchError(url, f"corrupt {encoding} body: {exc}") from None
    return bytes(body), False
