"""The policy holds where connections are made: DNS rebinding, redirects, proxies, cookies.

Canary listeners on loopback addresses record every request; a hit on one fails the test. Names
resolve through a stub of the system resolver that can answer differently the second time.
"""

from __future__ import annotations

import socket
from typing import Any

import httpcore
import pytest

from deskresearch.errors import FetchError, RefusedURL
from deskresearch.records import FetchLimits
from deskresearch.services.web.fetch import HttpFetcher
from tests.support.canary import Listener, listening

pytestmark = pytest.mark.anyio
REAL_GETADDRINFO = socket.getaddrinfo


def limits(*allow: str) -> FetchLimits:
    return FetchLimits(timeout_s=5, max_bytes=100_000, max_redirects=3, allow_hosts=allow)


def stub_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> list[str]:
    """Make the system resolver answer ``answers[host]`` in turn (the last one repeats)."""
    asked: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in answers:
            return REAL_GETADDRINFO(host, port, *args, **kwargs)
        asked.append(name)
        queue = answers[name]
        ip = queue.pop(0) if len(queue) > 1 else queue[0]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, int(port or 80)))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


async def test_a_name_that_rebinds_after_the_check_is_read_from_the_checked_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good, canary = Listener("127.0.0.2"), Listener("127.0.0.3")
    with listening(good, canary):
        # The first answer is allowed; every later one points at the canary.
        stub_dns(monkeypatch, {"rebind.test": ["127.0.0.2", "127.0.0.3"]})
        page = await HttpFetcher().fetch(
            f"http://rebind.test:{good.port}/article", limits=limits("127.0.0.2/32")
        )
    assert canary.hits == [], "connected to an address that was never checked"
    assert b"Lithium recovery" in page.body and len(good.hits) == 1
    assert good.hits[0]["host"] == f"rebind.test:{good.port}"  # the name kept for the server


async def test_a_public_answer_then_a_loopback_one_never_reaches_loopback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stub answers a public address first, loopback after: the connection goes public."""
    connected: list[tuple[str, int]] = []

    class Recorder(httpcore.AsyncNetworkBackend):
        async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
            connected.append((host, port))  # no socket: tests never leave the machine
            raise httpcore.ConnectError("recorded, not connected")

    canary = Listener("127.0.0.1")
    with listening(canary):
        stub_dns(monkeypatch, {"rebind.test": ["93.184.215.14", "127.0.0.1"]})
        with pytest.raises(FetchError) as err:
            await HttpFetcher(network=Recorder()).fetch(
                f"http://rebind.test:{canary.port}/", limits=limits()
            )
    assert canary.hits == [] and connected == [("93.184.215.14", canary.port)]
    assert err.value.reason.startswith("network")


async def test_a_redirect_to_a_name_on_loopback_is_refused_at_connect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    canary = Listener("127.0.0.3")
    good = Listener("127.0.0.2", status=302)
    with listening(good, canary):
        good.headers["Location"] = f"http://internal.test:{good.port}/admin"
        stub_dns(monkeypatch, {"start.test": ["127.0.0.2"], "internal.test": ["127.0.0.3"]})
        with pytest.raises(RefusedURL, match="127.0.0.3, a loopback address"):
            await HttpFetcher().fetch(
                f"http://start.test:{good.port}/", limits=limits("127.0.0.2/32")
            )
    assert canary.hits == [] and len(good.hits) == 1


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
async def test_proxy_variables_do_not_route_fetches_around_the_policy(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    page, proxy = Listener("127.0.0.2"), Listener("127.0.0.3")
    with listening(page, proxy):
        monkeypatch.setenv(variable, proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        fetched = await HttpFetcher().fetch(page.url + "/", limits=limits("127.0.0.2/32"))
    assert proxy.hits == [] and len(page.hits) == 1 and b"Lithium" in fetched.body


async def test_a_configured_proxy_is_used_and_its_targets_are_still_checked() -> None:
    proxy = Listener("127.0.0.3")
    with listening(proxy):
        fetcher = HttpFetcher(proxy=proxy.url)
        with pytest.raises(RefusedURL, match="loopback"):
            await fetcher.fetch("http://127.0.0.9/secret", limits=limits())
        await fetcher.fetch("http://127.0.0.2/page", limits=limits("127.0.0.2/32"))
    assert proxy.paths == ["http://127.0.0.2/page"]


async def test_cookies_set_by_a_site_are_never_sent_back() -> None:
    site = Listener("127.0.0.2", headers={"Set-Cookie": "session=run-one-secret; Path=/"})
    with listening(site):
        fetcher = HttpFetcher()  # shared by every run, like the graph's
        for _ in range(2):
            await fetcher.fetch(site.url + "/", limits=limits("127.0.0.2/32"))
    assert [h.get("cookie") for h in site.hits] == [None, None]


@pytest.mark.parametrize(
    "url",
    ["http://[127.0.0.1]/x", "http://host:99999/", "http://exa mple.org/", "javascript:alert(1)"],
)
async def test_a_malformed_url_is_refused_not_raised(url: str) -> None:
    with pytest.raises(RefusedURL, match="blocked"):
        await HttpFetcher().fetch(url, limits=limits())


@pytest.mark.parametrize(
    ("location", "why"),
    [
        (f"http://{'a' * 64}.example/", "host label of 64 characters"),
        ("http://lithium..example/", "empty host label"),
        ("http://[fe80::1%25eth0]/", "IPv6 zone id"),
        ("http://127.0.0.2:0/", "port 0"),
    ],
)
async def test_a_redirect_to_a_malformed_url_is_refused_not_raised(location: str, why: str) -> None:
    front = Listener("127.0.0.2", status=302)
    with listening(front):
        front.headers["Location"] = location
        with pytest.raises(RefusedURL, match=why):
            await HttpFetcher().fetch(front.url + "/", limits=limits("127.0.0.2/32"))
    assert len(front.hits) == 1


async def test_a_name_the_lookup_cannot_encode_is_refused_not_raised() -> None:
    """Defence in depth behind url_problem: the resolver's UnicodeError is not an OSError."""

    async def resolver(host: str, port: int) -> list[str]:
        raise UnicodeError("label empty or too long")

    with pytest.raises(RefusedURL, match="malformed host name"):
        await HttpFetcher(resolver=resolver).fetch("http://odd.example/", limits=limits())
