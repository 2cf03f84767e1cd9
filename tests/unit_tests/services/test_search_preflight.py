"""The network pre-flight and Tavily's key: a rejected key stops the run before its first call.

Run against the loopback web's Tavily, which answers ``GET /usage`` as Tavily does (401 for a
key it does not know) and counts what it was sent: the check must spend no search.
"""

from __future__ import annotations

import asyncio

import pytest

from deskresearch.config.context import Context
from deskresearch.errors import ConfigError
from deskresearch.services.servers import check_network
from tests.support.loopback import FakeWeb, serve
from tests.support.server import free_port


def check(web: FakeWeb, search: str, key: str, tavily_url: str | None = None) -> None:
    ctx = Context(search=search, tavily_base_url=tavily_url or web.base)
    env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": web.base + "/v1"}
    asyncio.run(check_network(ctx, checkpoints=None, environ=env | {"TAVILY_API_KEY": key}))


@pytest.mark.parametrize("search", ["tavily", "tavily,duckduckgo", "tavily,searxng"])
def test_a_rejected_tavily_key_is_named_before_any_search(search: str) -> None:
    with serve(FakeWeb(rejected_keys={"tvly-revoked"})) as web:
        with pytest.raises(ConfigError) as caught:
            check(web, search, "tvly-revoked")
    assert str(caught.value) == (
        f"the search engine tavily at {web.base} rejected the API key (HTTP 401): check "
        "TAVILY_API_KEY, or name another engine with --search"
    )
    assert web.usage_keys == ["tvly-revoked"], "asked once, with the key the searches would use"
    assert web.searches == [], "no search (no credit) spent on the check"


def test_a_taken_key_passes_with_one_free_request() -> None:
    with serve(FakeWeb(rejected_keys={"tvly-revoked"})) as web:
        check(web, "tavily,duckduckgo", "tvly-good")
    assert web.usage_keys == ["tvly-good"]
    assert web.searches == []


def test_a_tavily_that_does_not_answer_is_left_to_the_engine_after_it() -> None:
    with serve() as web:
        check(web, "tavily,duckduckgo", "tvly-good", tavily_url=f"http://127.0.0.1:{free_port()}")
    assert web.usage_keys == []


@pytest.mark.parametrize(("search", "key"), [("tavily", ""), ("duckduckgo", "tvly-revoked")])
def test_no_key_is_sent_where_none_is_used(search: str, key: str) -> None:
    with serve(FakeWeb(rejected_keys={"tvly-revoked"})) as web:
        check(web, search, key)
    assert web.usage_keys == []
