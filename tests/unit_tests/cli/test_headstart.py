"""The CLI's head start: generate_keywords' request sent before the imports, taken once by the node.

Real ChatOpenAI and real httpx against the loopback fake model: the early request must be the
one the client would send, and whatever the head start cannot answer is asked the usual way.
"""

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from deskresearch.cli.command import build_parser
from deskresearch.cli.headstart import begin, prepare
from deskresearch.errors import ConfigError, ModelCallError
from deskresearch.graph import build_graph
from deskresearch.prompts import keywords as prompt
from deskresearch.services.model.early import HeadStart
from deskresearch.services.model.headstart import HeadStartChat
from deskresearch.services.model.llm import OpenAIChat
from deskresearch.services.search.router import SearchRouter
from deskresearch.services.search.tavily import TavilySearch
from tests.support.loopback import FakeWeb
from tests.support.runs import context_for

TOPIC = "EV battery recycling"
pytestmark = pytest.mark.anyio


def env(web: FakeWeb) -> dict[str, str]:
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": web.base + "/v1"}


def started(web: FakeWeb, topic: str = TOPIC, **ctx: Any) -> HeadStart:
    head = begin(context_for(web, **ctx), topic, env(web))
    assert head is not None
    return head


async def run_with(web: FakeWeb, head: HeadStart, topic: str = TOPIC, **ctx: Any) -> dict[str, Any]:
    llm = HeadStartChat(OpenAIChat(environ=env(web)), head)
    search = SearchRouter({"tavily": TavilySearch(environ={"TAVILY_API_KEY": "tvly-test"})})
    graph: Any = build_graph(llm=llm, search=search)  # as tests.support.runs.graph_for
    out = await graph.ainvoke({"topic": topic}, context=context_for(web, **ctx))
    assert isinstance(out, dict)
    return out


def keyword_calls(web: FakeWeb) -> list[Any]:
    return [c for c in web.log if c.kind == "model" and c.key == "Keywords"]


def keywords_usage(out: dict[str, Any]) -> dict[str, Any]:
    return next(u for u in out["usage"] if u["stage"] == "generate_keywords")


async def test_the_early_request_is_the_one_chatopenai_sends(web: FakeWeb) -> None:
    ctx = context_for(web)
    head = started(web)
    assert head.reply.result(timeout=30) is not None
    messages = prompt.render(topic=TOPIC, max_keywords=ctx.max_keywords, today=date.today())
    usual = OpenAIChat(environ=env(web))
    await usual.structured(
        messages, prompt.Keywords, spec=ctx.summary_spec(), stage="generate_keywords"
    )
    early, asked = (c.body for c in keyword_calls(web))
    assert early == asked
    assert web.model_agents[0].startswith("deskresearch/") and "OpenAI" in web.model_agents[1]


async def test_a_run_takes_the_early_answer_once_and_counts_its_tokens(web: FakeWeb) -> None:
    out = await run_with(web, started(web))
    [call] = keyword_calls(web)  # the node did not ask again
    assert web.model_agents[0].startswith("deskresearch/")
    row = keywords_usage(out)
    assert (row["calls"], row["input_tokens"], row["output_tokens"]) == (
        1, call.tokens_in, call.tokens_out,
    )  # fmt: skip
    assert out["status"] == "ok" and out["sources"]


async def test_a_malformed_early_answer_is_asked_again_and_both_are_counted(web: FakeWeb) -> None:
    web.model.fail("Keywords", "malformed")
    out = await run_with(web, started(web))
    early, again = keyword_calls(web)
    assert "OpenAI" in web.model_agents[1]
    row = keywords_usage(out)
    assert row["calls"] == 2
    assert row["output_tokens"] == early.tokens_out + again.tokens_out
    assert out["status"] == "ok"


async def test_a_server_that_rejects_json_schema_is_asked_the_usual_way(web: FakeWeb) -> None:
    web.model.rejects.add("json_schema")
    out = await run_with(web, started(web))
    methods = [("tools" in c.body, "response_format" in c.body) for c in keyword_calls(web)]
    assert methods[0] == (False, True)  # the early json_schema request, refused
    assert (True, False) in methods  # then function calling, as the method chain does
    assert out["status"] == "ok" and out["sources"]


async def test_another_question_is_not_answered_by_the_head_start(web: FakeWeb) -> None:
    head = started(web, topic="Night trains in Europe")
    out = await run_with(web, head)
    early, asked = keyword_calls(web)
    assert "Night trains" in str(early.body) and TOPIC in str(asked.body)
    assert not head.taken and keywords_usage(out)["calls"] == 1


async def test_an_answer_in_the_cache_is_not_asked_early(web: FakeWeb, tmp_path: Path) -> None:
    cache: dict[str, Any] = {"cache": True, "cache_path": str(tmp_path / "cache.sqlite")}
    await run_with(web, started(web, **cache), **cache)
    sent = len(web.log)
    assert begin(context_for(web, **cache), TOPIC, env(web)) is None
    assert len(web.log) == sent
    assert begin(context_for(web, **cache), "Night trains in Europe", env(web)) is not None


def test_no_head_start_without_an_endpoint_or_for_another_method(web: FakeWeb) -> None:
    assert begin(context_for(web), TOPIC, {}) is None  # the settings check names what is missing
    methods = ("function_calling", "json_mode", "text")
    for method in methods:
        assert begin(context_for(web, structured_output=method), TOPIC, env(web)) is None
    assert web.log == []


async def test_every_keywords_call_is_counted_when_all_answers_are_malformed(web: FakeWeb) -> None:
    web.model.fail("Keywords", *["malformed"] * 20)
    out = await run_with(web, started(web))
    calls = keyword_calls(web)
    assert len(calls) > 2  # the early one, then the method chain, then the node's retries
    row = keywords_usage(out)
    assert row["calls"] == len(calls)
    assert row["output_tokens"] == sum(c.tokens_out for c in calls)


async def test_openai_api_base_is_where_the_early_request_goes(web: FakeWeb) -> None:
    legacy = {"OPENAI_API_KEY": "test-key", "OPENAI_API_BASE": web.base + "/v1"}
    head = begin(context_for(web), TOPIC, legacy)
    assert head is not None and head.reply.result(timeout=30) is not None
    assert len(keyword_calls(web)) == 1  # the loopback, not api.openai.com
    assert head.endpoint == OpenAIChat(environ=legacy).endpoint(context_for(web).summary_spec())


def test_no_head_start_where_chatopenai_would_ask_differently(web: FakeWeb) -> None:
    gateway = {"OPENAI_API_KEY": "test-key", "LANGSMITH_GATEWAY": "true"}
    assert begin(context_for(web), TOPIC, gateway) is None
    for model in ("o3-mini", "gpt-5-pro", "gpt-5.1-codex"):
        assert begin(context_for(web, summary_model=model), TOPIC, env(web)) is None
    assert begin(context_for(web), TOPIC, {**env(web), "LC_OUTPUT_VERSION": "responses/v1"}) is None
    assert web.log == []


def test_a_run_whose_search_settings_fail_sends_nothing(web: FakeWeb, tmp_path: Path) -> None:
    args = [TOPIC, "--search", "corpus", "--corpus-dir", str(tmp_path / "missing")]
    ns = build_parser().parse_args(args)
    with pytest.raises(ConfigError, match="is not a folder"):
        prepare(ns, env(web))
    assert web.log == []


@pytest.mark.parametrize("fault", ["http_500", "http_429"])
def test_a_busy_server_gives_the_retry_layer_a_transient_error_not_a_resend(
    web: FakeWeb, fault: str
) -> None:
    web.model.fail("Keywords", fault)
    head = started(web)
    error = head.reply.exception(timeout=30)
    assert isinstance(error, ModelCallError) and error.transient
    assert error.status == int(fault[-3:]) and len(keyword_calls(web)) == 1


async def test_a_run_whose_head_start_met_a_500_asks_again_after_a_backoff(web: FakeWeb) -> None:
    web.model.fail("Keywords", "http_500")
    out = await run_with(web, started(web))
    assert out["status"] == "ok" and len(keyword_calls(web)) == 2
