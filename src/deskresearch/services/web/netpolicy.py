"""Which URLs the fetcher may read: http(s) to public addresses, unless explicitly allowed.

A search result is attacker-controlled input. Without this check a page (or a redirect) could
make the fetcher read ``file:`` URLs, cloud metadata at 169.254.169.254, or services on the
loopback and private networks (the SSRF that gpt-researcher's server was reported for).

The check sits where the connection is made (``PolicyBackend``, httpcore's network backend):
a host name is resolved once, every address it resolves to is checked, and the connection goes
to an address that passed, while TLS (SNI, certificate) and the ``Host`` header keep the name.
A DNS answer that changes between a check and the connection (DNS rebinding) therefore cannot
reach an address that was never checked. Every redirect opens its connection the same way.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from deskresearch.errors import FetchError, RefusedURL
from deskresearch.safety.urls import url_problem
from deskresearch.services.web.tls import tls_context

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Turns (host, port) into addresses; tests pass one that answers what they need."""


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve ``host`` with the system resolver (off the event loop), addresses in its order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))


def _kind(ip: IPAddress) -> str:
    """Return why ``ip`` is not public, or "" when it is."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return _kind(ip.ipv4_mapped)
    for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return "" if ip.is_global else "non-public"


def _networks(allow: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    nets = []
    for entry in allow:
        try:
            nets.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue  # a host name: matched before resolution
    return nets


def refusal(host: str, ips: Sequence[IPAddress], allow: Sequence[str]) -> str | None:
    """Return why ``host`` at ``ips`` may not be read, or None when every address may."""
    if not ips:
        return f"blocked: {host} resolves to no address"
    nets = _networks(allow)
    for ip in ips:
        if any(ip in net for net in nets):
            continue
        kind = _kind(ip)
        if kind:
            return (
                f"blocked: {host} resolves to {ip}, a {kind} address "
                "(a deployment opens it with allow_hosts)"
            )
    return None


def split_target(url: str, allow: Sequence[str] = ()) -> tuple[str, int]:
    """Return (host, port) of ``url`` after the checks that need no DNS.

    Raises:
        RefusedURL: not http(s), malformed (``safety.urls.url_problem``), or an IP literal that
            is not public (and not allowed).
    """
    if problem := url_problem(url):
        raise RefusedURL(url, f"blocked: {problem}")
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port
    literal = _literal(host)
    if literal is not None and (why := refusal(host, [literal], allow)):
        raise RefusedURL(url, why)
    return host, port or (443 if parts.scheme == "https" else 80)


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def checked_addresses(
    host: str, port: int, allow: Sequence[str], resolver: Resolver = system_resolver
) -> list[IPAddress]:
    """Resolve ``host`` once and return its addresses if every one may be read.

    A name on the allow-list passes as it resolves (a deployment named it on purpose).

    Raises:
        PolicyRefused: an address is not public and not allowed, or the name cannot be encoded.
        OSError: the name does not resolve.
    """
    literal = _literal(host)
    ips = [literal] if literal is not None else []
    if literal is None:
        try:
            ips = [ipaddress.ip_address(a) for a in await resolver(host, port)]
        except UnicodeError as exc:  # the name's encoding failed (not an OSError): refuse it
            raise PolicyRefused(f"blocked: malformed host name {host[:80]!r} ({exc})") from None
    if host.lower() in {a.lower() for a in allow}:
        return ips
    why = refusal(host, ips, allow)
    if why:
        raise PolicyRefused(why)
    return ips


async def check_target(
    url: str, allow: Sequence[str] = (), resolver: Resolver = system_resolver
) -> None:
    """Raise FetchError unless ``url`` is http(s) to public addresses (or allowed).

    ``allow`` lists host names, IP addresses or CIDR ranges that may be read although they
    are loopback or private (the test suite allows 127.0.0.0/8 for its loopback web). Used
    on each URL of a cached page's chain before it is served, and before a request through a
    proxy (which resolves the name again itself: docs/security.md); direct connections
    are checked again, at connect time, by ``PolicyBackend``.
    """
    host, port = split_target(url, allow)
    if host.lower() in {a.lower() for a in allow}:
        return  # named on purpose: no lookup needed to allow it
    try:
        await checked_addresses(host, port, allow, resolver)
    except PolicyRefused as exc:
        raise RefusedURL(url, exc.reason) from None
    except OSError as exc:
        raise FetchError(url, f"network: cannot resolve {host}: {exc}", transient=True) from None


class PolicyRefused(Exception):
    """Raised inside a connection attempt the policy refuses (translated to RefusedURL)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PolicyBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses the policy allows.

    Args:
        allow: host names, IPs or CIDR ranges readable although not public.
        resolver: how names are resolved (default: the system resolver).
        inner: the backend that opens sockets (default: httpcore's own).
    """

    def __init__(
        self,
        allow: Sequence[str] = (),
        *,
        resolver: Resolver | None = None,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._allow = tuple(allow)
        self._resolver = resolver or system_resolver
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Resolve once, check every address, connect to the first that answers."""
        try:
            ips = await checked_addresses(host, port, self._allow, self._resolver)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        failure: Exception | None = None
        for ip in ips:
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore.ConnectError(f"{host} has no address")

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        """Refuse: pages are read over TCP only."""
        raise PolicyRefused("blocked: unix sockets are not read")

    async def sleep(self, seconds: float) -> None:
        """Sleep as the inner backend does."""
        await self._inner.sleep(seconds)


class PolicyTransport(httpx.AsyncHTTPTransport):
    """An httpx transport whose connections go through ``PolicyBackend``; no proxy, no env."""

    def __init__(
        self,
        allow: Sequence[str] = (),
        *,
        resolver: Resolver | None = None,
        network: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        context = tls_context(trust_env=False)
        super().__init__(verify=context, trust_env=False)
        # httpx builds its connection pool without a way to pass a network backend: build the
        # same pool with ours (HTTP/1.1, default limits, certificates checked).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            network_backend=PolicyBackend(allow, resolver=resolver, inner=network),
        )
