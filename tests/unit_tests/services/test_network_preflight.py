"""The network pre-flight against the loopback web: what it refuses and what it lets through.

Tavily's key: the loopback web, as the ``TAVILY_HTTP_PROXY`` to Tavily's own API, answers ``GET
/usage`` as Tavily does (401 for a key it does not know) and counts what it was sent, so the
check is seen to spend no search. The model list:
the loopback endpoint lists what ``served_models`` says, as a server or a proxy would.
"""

from __future__ import annotations

import asyncio

import pytest

from deskresearch.config.context import Context
from deskresearch.errors import ConfigError
from deskresearch.services.servers import check_network
from tests.support.loopback import FakeWeb, serve
from tests.support.server import free_port

TAVILY = "http://api.tavily.com"  # Tavily's own API, reached through the loopback web as proxy


def check(
    web: FakeWeb, search: str, key: str, tavily_url: str = TAVILY, model: str = "gpt-4o-mini",
    proxy: str | None = None, new: bool = True,
) -> list[str]:  # fmt: skip
    """The network pre-flight of a run with these settings; its notices."""
    ctx = Context(search=search, tavily_base_url=tavily_url, summary_model=model,
                  report_model=model, judge_model="", searxng_url=web.base + "/searxng")  # fmt: skip
    env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": web.base + "/v1",
           "TAVILY_API_KEY": key, "TAVILY_HTTP_PROXY": proxy or web.base}  # fmt: skip
    return list(asyncio.run(check_network(ctx, checkpoints=None, environ=env, new=new)).notices)


@pytest.mark.parametrize("search", ["tavily", "tavily,duckduckgo", "tavily,searxng"])
def test_a_key_tavily_rejects_is_named_before_any_search(search: str) -> None:
    with serve(FakeWeb(rejected_keys={"tvly-revoked"})) as web:
        with pytest.raises(ConfigError) as caught:
            check(web, search, "tvly-revoked")
    assert str(caught.value) == (
        f"the search engine tavily at {TAVILY} rejected the API key (HTTP 401): check "
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
        check(web, "tavily,duckduckgo", "tvly-good", proxy=f"http://127.0.0.1:{free_port()}")


def test_a_gateway_at_another_url_is_asked_only_whether_it_answers() -> None:
    """A gateway may hold the real key and route only /search: its /usage proves nothing."""
    with serve(FakeWeb(rejected_keys={"tvly-dummy"})) as web:
        check(web, "tavily", "tvly-dummy", tavily_url=web.base)
    assert web.usage_keys == [], "the key went nowhere but where the searches send it"


@pytest.mark.parametrize(("search", "key"), [("tavily", ""), ("duckduckgo", "tvly-revoked")])
def test_no_key_is_sent_where_none_is_used(search: str, key: str) -> None:
    with serve(FakeWeb(rejected_keys={"tvly-revoked"})) as web:
        check(web, search, key)
    assert web.usage_keys == []


@pytest.mark.parametrize(
    ("routes", "model"),
    [(("*",), "gpt-4o-mini"), (("anthropic/*", "gpt-4o"), "anthropic/claude-3-5-haiku")],
)
def test_a_proxy_s_wildcard_routes_serve_the_models_they_match(
    routes: tuple[str, ...], model: str
) -> None:
    """LiteLLM lists its wildcard routes as they are written ("*", "anthropic/*")."""
    with serve(FakeWeb(served_models=routes)) as web:
        check(web, "tavily", "tvly-good", model=model)


def test_a_model_no_route_matches_is_refused_with_what_the_server_lists() -> None:
    with serve(FakeWeb(served_models=("anthropic/*", "gpt-4o"))) as web:
        with pytest.raises(ConfigError, match=r"does not serve the model 'gpt-4o-mini' .*: it "
                           r"serves anthropic/\*, gpt-4o\. Name one"):  # fmt: skip
            check(web, "tavily", "tvly-good", model="gpt-4o-mini")


def test_credits_used_up_stop_a_chain_of_tavily_alone_before_any_search() -> None:
    with serve(FakeWeb(spent_keys={"tvly-spent"})) as web:
        with pytest.raises(ConfigError) as caught:
            check(web, "tavily", "tvly-spent")
    assert str(caught.value) == (
        f"the search engine tavily at {TAVILY} would refuse every search: this key's limit is "
        "reached (1,000 of 1,000 credits used). Raise the key's limit at app.tavily.com, or name "
        "another engine with --search (e.g. --search duckduckgo)"
    )
    assert web.usage_keys == ["tvly-spent"] and web.searches == []


@pytest.mark.parametrize("search", ["tavily,duckduckgo", "tavily,searxng"])
def test_credits_used_up_leave_the_searches_to_the_engine_after_tavily(search: str) -> None:
    """The chain's next engine serves every search (each one's provenance says why)."""
    with serve(FakeWeb(spent_keys={"tvly-spent"})) as web:
        notices = check(web, search, "tvly-spent")
    assert notices == [
        f"the search engine tavily at {TAVILY} has no credits left (this key: 1,000 of 1,000 used); "
        f"this run makes up to 9 searches, and those past its credits go to {search[7:]}. Add "
        "credits at app.tavily.com, or name another engine with --search"
    ]
    assert web.usage_keys == ["tvly-spent"]


def test_a_resumed_run_is_not_stopped_by_credits_it_may_not_need() -> None:
    """Interrupted while summarising, say, it needs no more search."""
    with serve(FakeWeb(spent_keys={"tvly-spent"})) as web:
        assert check(web, "tavily", "tvly-spent", new=False) == [], "nor told of them"
    assert web.usage_keys == ["tvly-spent"], "the key is still checked"


def test_fewer_credits_left_than_the_run_s_searches_is_a_notice_not_a_stop() -> None:
    """2 keywords + 4 queries + 3 leads in the second round: 9 searches; 5 credits left."""
    with serve(FakeWeb(key_credits={"tvly-low": (995, 1000)})) as web:
        notices = check(web, "tavily", "tvly-low")
    assert notices == [
        f"the search engine tavily at {TAVILY} has 5 credits left (this key: 995 of 1,000 used); "
        "this run makes up to 9 searches, and those past its credits fail (the run goes on with "
        "what the others found). Add credits at app.tavily.com, or name another engine with "
        "--search"
    ]
    assert web.searches == [], "no credit spent on the check"


@pytest.mark.parametrize(
    ("search", "credits"),
    [
        ("tavily", (991, 1000)),  # 9 left: enough for every search of the run
        ("tavily,searxng", (12, None)),  # no limit on the key
        ("duckduckgo,tavily", (995, 1000)),  # Tavily only serves what DuckDuckGo does not
    ],
)
def test_no_notice_where_the_credits_cover_the_run_or_tavily_comes_second(
    search: str, credits: tuple[int, int]
) -> None:
    with serve(FakeWeb(key_credits={"tvly-key": credits})) as web:
        assert check(web, search, "tvly-key") == []
    assert web.usage_keys == ["tvly-key"]


def test_the_default_chain_s_notice_names_duckduckgo_and_an_unstated_cap_says_may(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """auto with a key: tavily,duckduckgo. A plan without a stated pay-as-you-go limit may bill
    the searches past it rather than refuse them."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-free")  # what `auto` is resolved from
    usage = {"account": {"plan_usage": 999, "plan_limit": 1000, "paygo_limit": None}}
    with serve(FakeWeb(key_usage={"tvly-free": usage})) as web:
        notices = check(web, "auto", "tvly-free")
    assert notices == [
        f"the search engine tavily at {TAVILY} has 1 credit left (plan: 999 of 1,000 used, no "
        "pay-as-you-go limit stated); this run makes up to 9 searches, and those past its "
        "credits may go to duckduckgo. Add credits at app.tavily.com, or name another engine "
        "with --search"
    ]


def test_a_local_summary_server_that_says_nothing_is_taken_at_its_default_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that does not say its context: the run says what it assumes, and how to say more."""
    import httpx

    from deskresearch.services import local_window
    from deskresearch.services.local_window import Window, asked_context

    async def refused(url: str, *args: object, **kw: object) -> tuple[int, object]:
        raise httpx.ConnectError("refused")  # as where no server listens (a real Ollama might)

    monkeypatch.setattr(local_window, "get_json", refused)
    local = Context(summary_model="ollama:llama3.1", report_model="ollama:llama3.1")
    found = asyncio.run(asked_context(local, {}))
    [said] = found.notices
    assert found.tokens == 0
    assert said.startswith("http://localhost:11434/v1 is a local server: its models are taken")
    assert "4,096-token context" in said and "--summary-context-window" in said
    env = {"OPENAI_BASE_URL": "http://gpu-box:11434/v1"}  # Ollama's port on another machine
    assert asyncio.run(asked_context(Context(summary_model="llama3.1"), env)).notices
    given = Context(summary_model="ollama:llama3.1", summary_context_window=4096)
    assert asyncio.run(asked_context(given, {})) == Window(), "a window given is not asked about"
    assert asyncio.run(asked_context(Context(summary_model="gpt-4o-mini"), {})) == Window()
    assert asyncio.run(asked_context(Context(summary_model="vllm:qwen2.5"), {})) == Window()


def test_the_window_notice_comes_with_a_new_runs_network_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from deskresearch.services import local_window, servers

    async def answers(*args: object, **kw: object) -> None:  # the servers, as if they answered
        return None

    async def says_nothing(*args: object) -> tuple[int, str]:  # the local server, as if silent
        return 0, ""

    monkeypatch.setattr(servers, "_model_endpoint", answers)
    monkeypatch.setattr(servers, "_search_engines", answers)
    monkeypatch.setattr(local_window, "asked_window", says_nothing)
    ctx = Context(summary_model="ollama:llama3.1", report_model="ollama:llama3.1")
    new = asyncio.run(check_network(ctx, checkpoints=None, environ={}, new=True)).notices
    assert [n.split(" is a local")[0] for n in new] == ["http://localhost:11434/v1"]
    assert asyncio.run(check_network(ctx, checkpoints=None, environ={}, new=False)).notices == ()
    off = asyncio.run(check_network(ctx, checkpoints=None, environ={}, providers=False))
    assert off.notices == ()
