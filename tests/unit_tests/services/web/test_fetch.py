import pytest

from deskresearch.errors import FetchError
from deskresearch.records import FetchLimits
from deskresearch.services.web.fetch import HttpFetcher
from tests.support.hostile import PAGES
from tests.support.loopback import FakeWeb

pytestmark = pytest.mark.anyio
LIMITS = FetchLimits(timeout_s=5, max_bytes=100_000, max_redirects=3, allow_hosts=("127.0.0.1",))


async def test_fetch_reads_a_real_page(web: FakeWeb) -> None:
    limits = FetchLimits(
        timeout_s=5, max_bytes=5_000_000, max_redirects=0, allow_hosts=("127.0.0.1",)
    )
    page = await HttpFetcher().fetch(web.url("/pages/heise.de.lithium.html"), limits=limits)
    assert page.content_type == "text/html" and b"Lithium" in page.body and not page.truncated


async def test_fetch_cuts_an_endless_body_at_the_byte_limit(web: FakeWeb) -> None:
    page = await HttpFetcher().fetch(web.url("/big"), limits=LIMITS)
    assert page.truncated and len(page.body) == LIMITS.max_bytes


async def test_fetch_follows_redirects_up_to_the_limit(web: FakeWeb) -> None:
    page = await HttpFetcher().fetch(web.url("/redirect/2/empty.html"), limits=LIMITS)
    assert page.url.endswith("/pages/empty.html")
    with pytest.raises(FetchError, match="too_many_redirects"):
        await HttpFetcher().fetch(web.url("/redirect/5/empty.html"), limits=LIMITS)


@pytest.mark.parametrize(
    ("path", "reason", "transient"),
    [
        ("/status/404", "http_404", False),
        ("/status/503", "http_503", True),
        ("/binary", "not_html", False),
    ],
)
async def test_fetch_errors_carry_reason_and_transience(
    web: FakeWeb, path: str, reason: str, transient: bool
) -> None:
    with pytest.raises(FetchError) as err:
        await HttpFetcher().fetch(web.url(path), limits=LIMITS)
    assert err.value.reason.startswith(reason) and err.value.transient is transient


async def test_fetch_gives_up_on_a_slow_drip_at_the_deadline(web: FakeWeb) -> None:
    with pytest.raises(FetchError, match="timeout"):
        await HttpFetcher().fetch(
            web.url("/slow"),
            limits=FetchLimits(
                timeout_s=0.5, max_bytes=100_000, max_redirects=0, allow_hosts=("127.0.0.1",)
            ),
        )


async def test_fetch_reports_an_unreachable_host_as_transient() -> None:
    with pytest.raises(FetchError) as err:
        await HttpFetcher().fetch("http://127.0.0.1:9/", limits=LIMITS)
    assert err.value.transient and "network" in err.value.reason


async def test_gzip_pages_are_decoded_and_a_gzip_bomb_is_cut_at_the_byte_limit(
    web: FakeWeb,
) -> None:
    roomy = FetchLimits(
        timeout_s=5, max_bytes=5_000_000, max_redirects=0, allow_hosts=("127.0.0.1",)
    )
    page = await HttpFetcher().fetch(web.url("/gzipped"), limits=roomy)
    assert page.body == (PAGES / "heise.de.lithium.html").read_bytes() and not page.truncated
    bomb = await HttpFetcher().fetch(web.url("/gzip-bomb"), limits=LIMITS)
    assert bomb.truncated and len(bomb.body) == LIMITS.max_bytes and set(bomb.body) == {0}


async def test_fetch_stops_waiting_for_a_server_that_never_answers(web: FakeWeb) -> None:
    import time

    limits = FetchLimits(timeout_s=0.5, max_bytes=100_000, max_redirects=0,
                         allow_hosts=("127.0.0.1",))  # fmt: skip
    started = time.monotonic()
    with pytest.raises(FetchError, match="timeout") as err:
        await HttpFetcher().fetch(web.url("/hang"), limits=limits)
    assert time.monotonic() - started < 2 and err.value.transient


async def test_fetch_detects_a_redirect_loop(web: FakeWeb) -> None:
    with pytest.raises(FetchError, match="too_many_redirects"):
        await HttpFetcher().fetch(web.url("/loop/a"), limits=LIMITS)
    assert web.fetches["/loop/a"] + web.fetches["/loop/b"] == LIMITS.max_redirects + 1


async def test_fetch_reads_pdf_and_the_extractor_gives_its_text(web: FakeWeb) -> None:
    from deskresearch.services.web.extract import extract_sync

    page = await HttpFetcher().fetch(web.url("/report.pdf"), limits=LIMITS)
    assert page.content_type == "application/pdf"
    found = extract_sync(page.body, url=page.url, content_type=page.content_type)
    assert found is not None and found.title == "Battery recycling report"
    assert "80 percent" in found.text
    broken = await HttpFetcher().fetch(web.url("/broken.pdf"), limits=LIMITS)
    assert extract_sync(broken.body, url=broken.url, content_type="application/pdf") is None
