"""One TLS context per CA source: clients made during a run parse the CA bundle once."""

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import certifi
import pytest

from deskresearch.records import SearchSettings
from deskresearch.services.search.searxng import SearxngSearch
from deskresearch.services.web import tls
from deskresearch.services.web.fetch import HttpFetcher
from deskresearch.services.web.netpolicy import PolicyTransport
from tests.support.loopback import FakeWeb

pytestmark = pytest.mark.anyio


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every CA source a context is built from in the test, whoever builds it (httpx or us)."""
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    tls._context.cache_clear()
    seen: list[Any] = []
    real = ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        seen.append(kwargs.get("cafile") or kwargs.get("capath"))
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counting)
    yield seen
    tls._context.cache_clear()


async def test_fetcher_transports_and_searches_build_one_context(
    loads: list[Any], web: FakeWeb
) -> None:
    PolicyTransport(("127.0.0.0/8",))
    PolicyTransport()
    fetcher = HttpFetcher(proxy="")
    fetcher.client_for(("127.0.0.0/8",))
    fetcher.client_for(())
    settings = SearchSettings(
        backends=("searxng",), tavily_base_url="", corpus_dir="",
        searxng_url=web.url("/searxng"), timeout_s=5,
    )  # fmt: skip
    for query in ("cobalt", "nickel"):
        assert await SearxngSearch().search(query, max_results=2, settings=settings)
    assert loads == [certifi.where()]  # httpx's defaults would have built one per client
    assert tls.tls_context() is tls.tls_context(trust_env=False)


def test_environment_ca_file_is_honoured_only_where_the_environment_is_trusted(
    loads: list[Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundle = tmp_path / "corporate.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert tls.tls_context() is not tls.tls_context(trust_env=False)
    assert tls.tls_context() is tls.tls_context()
    assert loads == [str(bundle), certifi.where()]
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    with pytest.raises(OSError):  # as httpx: a bad setting fails where the client is made
        tls.tls_context()
