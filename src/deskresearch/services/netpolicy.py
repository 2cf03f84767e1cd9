"""Which URLs the fetcher may read: http(s) to public addresses, unless explicitly allowed.

A search result is attacker-controlled input. Without this check a page (or a redirect) could
make the fetcher read ``file:`` URLs, cloud metadata at 169.254.169.254, or services on the
loopback and private networks (the SSRF that gpt-researcher's server was reported for). Hosts
are checked after DNS resolution, and again for every redirect.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from deskresearch.errors import FetchError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _kind(ip: IPAddress) -> str:
    """Return why ``ip`` is not public, or "" when it is."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return _kind(ip.ipv4_mapped)
    for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return "" if ip.is_global else "non-public"


def _inside(ips: Sequence[IPAddress], allow: Sequence[str]) -> bool:
    """Return whether every address lies in an allowed IP or CIDR range (names are skipped)."""
    nets = []
    for entry in allow:
        try:
            nets.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue  # a host name: matched before resolution
    return bool(ips) and all(any(ip in net for net in nets) for ip in ips)


async def check_target(url: str, allow: Sequence[str] = ()) -> None:
    """Raise FetchError unless ``url`` is http(s) to public addresses (or allowed).

    ``allow`` lists host names, IP addresses or CIDR ranges that may be read although they
    are loopback or private (the test suite allows 127.0.0.0/8 for its loopback web).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        scheme = parts.scheme or "(none)"
        raise FetchError(url, f"blocked: scheme {scheme}: only http and https pages are read")
    host = parts.hostname or ""
    if not host:
        raise FetchError(url, "invalid URL: no host")
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        ips: list[IPAddress] = [literal]
    elif host.lower() in {a.lower() for a in allow}:
        return
    else:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except socket.gaierror as exc:
            raise FetchError(
                url, f"network: cannot resolve {host}: {exc}", transient=True
            ) from None
        ips = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if _inside(ips, allow):
        return
    for ip in ips:
        kind = _kind(ip)
        if kind:
            raise FetchError(
                url,
                f"blocked: {host} resolves to {ip}, a {kind} address "
                "(set allow_hosts to read it on purpose)",
            )
