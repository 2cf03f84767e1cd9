"""The clients a run makes for its model and its search share one TLS context.

httpx parses the CA bundle for every client made with ``verify=True`` (about 40 ms of CPU);
ChatOpenAI makes two and tavily-python one, each on the run's critical path (the first call
through it).
"""

import ssl
from typing import Any

import httpx
import langchain_openai  # noqa: F401 - its import builds a context of its own, once: not counted
import pytest

from deskresearch.records import ModelSpec
from deskresearch.services.model.llm import OpenAIChat
from deskresearch.services.search.tavily import TavilySearch
from deskresearch.services.web.tls import tls_context

SPEC = ModelSpec(model="gpt-4o-mini", base_url="", method="json_schema", timeout_s=30.0)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every CA bundle parsed from now on (a new TLS context)."""
    tls_context()  # the head start built it, before the run
    made: list[str] = []
    real = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(str(kwargs.get("cafile") or args))
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    return made


def test_the_model_client_parses_no_ca_bundle_again(parsed: list[str]) -> None:
    chat = OpenAIChat(environ={"OPENAI_API_KEY": "k"})
    model = chat._model(SPEC)  # noqa: SLF001 - what the first usual call builds
    assert model.http_async_client is not None
    assert parsed == []


def test_the_tavily_client_parses_no_ca_bundle_again_and_keeps_its_proxies(
    parsed: list[str],
) -> None:
    env = {"TAVILY_API_KEY": "tvly-k", "TAVILY_HTTPS_PROXY": "http://127.0.0.1:9"}
    client = TavilySearch(environ=env)._client("https://api.tavily.com")  # noqa: SLF001
    assert parsed == []
    http: httpx.AsyncClient = client._client  # noqa: SLF001 - tavily-python's attribute
    assert http.headers["Authorization"] == "Bearer tvly-k"
    proxied = [m for pattern, m in http._mounts.items() if pattern.scheme == "https"]  # noqa: SLF001
    assert proxied and proxied[0] is not None


def test_a_proxy_set_for_openai_goes_through_our_client_and_the_model_still_builds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ChatOpenAI reads OPENAI_PROXY itself and refuses it beside a client it is given.
    monkeypatch.setenv("OPENAI_PROXY", "http://127.0.0.1:9")
    chat = OpenAIChat(environ={"OPENAI_API_KEY": "k", "OPENAI_PROXY": "http://127.0.0.1:9"})
    model = chat._model(SPEC)  # noqa: SLF001 - what the first usual call builds
    http = model.http_async_client
    assert isinstance(http, httpx.AsyncClient)
    assert [p for p in http._mounts if p.matches(httpx.URL("https://api.openai.com"))]  # noqa: SLF001
