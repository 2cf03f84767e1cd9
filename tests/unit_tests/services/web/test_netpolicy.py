"""SSRF: only http(s) to public addresses, checked after resolution and on every redirect."""

import pytest

from deskresearch.errors import FetchError
from deskresearch.records import FetchLimits
from deskresearch.services.web.fetch import HttpFetcher
from deskresearch.services.web.netpolicy import check_target
from tests.support.loopback import FakeWeb, serve

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "scheme file"),
        ("ftp://example.org/x", "scheme ftp"),
        ("data:text/html,<p>x</p>", "scheme data"),
        ("http://127.0.0.1:8080/", "loopback"),
        ("http://localhost/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.1/", "private"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://224.0.0.1/", "multicast"),
        ("http://0.0.0.0/", "unspecified"),
    ],
)
async def test_non_public_targets_are_refused_with_the_reason(url: str, why: str) -> None:
    with pytest.raises(FetchError, match=why) as err:
        await check_target(url)
    assert not err.value.transient and "blocked" in err.value.reason


async def test_public_addresses_pass_and_the_allow_list_opens_named_exceptions() -> None:
    await check_target("https://93.184.215.14/page")  # a public literal: no DNS needed
    await check_target("http://127.0.0.1:9/", ["127.0.0.0/8"])
    await check_target("http://intranet.invalid/", ["intranet.invalid"])  # by name, no lookup
    with pytest.raises(FetchError, match="private"):
        await check_target("http://10.0.0.5/", ["127.0.0.0/8"])


async def test_a_redirect_to_a_host_that_is_not_allowed_is_refused() -> None:
    with serve(FakeWeb(hosts=2)) as web:
        target = f"http://127.0.0.2:{web.port}/pages/heise.de.lithium.html"
        limits = FetchLimits(
            timeout_s=5, max_bytes=100_000, max_redirects=3, allow_hosts=("127.0.0.1",)
        )
        with pytest.raises(FetchError, match="127.0.0.2, a loopback address"):
            await HttpFetcher().fetch(web.url(f"/redirect-to?url={target}"), limits=limits)
        assert "/pages/heise.de.lithium.html" not in web.fetches  # never requested
        page = await HttpFetcher().fetch(
            web.url(f"/redirect-to?url={target}"),
            limits=FetchLimits(
                timeout_s=5, max_bytes=100_000, max_redirects=3, allow_hosts=("127.0.0.0/8",)
            ),
        )
        assert page.url == target
