"""Early calls: a structured call made before the model client is imported goes out with plain
httpx, as ChatOpenAI would send it; whatever it cannot answer is asked the usual way.

Real httpx and the real ChatOpenAI against the loopback fake model; ``client_ready`` forces the
early path (in this process the client is imported already).
"""

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from deskresearch.errors import ModelCallError
from deskresearch.nodes.plan_queries import QueryPlan
from deskresearch.prompts import plan_queries as prompt
from deskresearch.services.model.llm import OpenAIChat
from tests.support.loopback import FakeWeb
from tests.support.runs import context_for

pytestmark = pytest.mark.anyio


def env(web: FakeWeb) -> dict[str, str]:
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": web.base + "/v1"}


def messages() -> list[Any]:
    results = prompt.format_results([("ev batteries", ["[1] Recycling plants in Europe"])])
    return prompt.render(topic="EV battery recycling", results=results, max_queries=4,
                         today=date.today())  # fmt: skip


def early(web: FakeWeb, ready: bool = False) -> OpenAIChat:
    return OpenAIChat(environ=env(web), early=True, client_ready=lambda: ready)


def plan_calls(web: FakeWeb) -> list[Any]:
    return [c for c in web.log if c.kind == "model" and c.key == "QueryPlan"]


async def ask(llm: OpenAIChat, web: FakeWeb) -> Any:
    spec = context_for(web).summary_spec()
    return await llm.structured(messages(), QueryPlan, spec=spec, stage="plan_queries")


async def test_the_early_request_is_the_one_chatopenai_sends(web: FakeWeb) -> None:
    first = await ask(early(web), web)
    second = await ask(OpenAIChat(environ=env(web)), web)
    sent_early, sent_usual = (c.body for c in plan_calls(web))
    assert sent_early == sent_usual
    assert "(early)" in web.model_agents[0] and "OpenAI" in web.model_agents[1]
    assert first.value == second.value and first.usage["calls"] == 1
    assert first.usage["output_tokens"] == plan_calls(web)[0].tokens_out


async def test_no_early_request_once_the_client_is_ready(web: FakeWeb) -> None:
    await ask(early(web, ready=True), web)
    assert len(plan_calls(web)) == 1 and "OpenAI" in web.model_agents[0]


async def test_a_malformed_early_answer_is_asked_again_and_both_are_counted(web: FakeWeb) -> None:
    web.model.fail("QueryPlan", "malformed")
    reply = await ask(early(web), web)
    first, again = plan_calls(web)
    assert "OpenAI" in web.model_agents[1] and reply.value.queries
    assert reply.usage["calls"] == 2
    assert reply.usage["output_tokens"] == first.tokens_out + again.tokens_out


async def test_an_error_or_a_refused_method_goes_the_usual_way(web: FakeWeb) -> None:
    web.model.rejects.add("json_schema")
    reply = await ask(early(web), web)
    methods = [("tools" in c.body, "response_format" in c.body) for c in plan_calls(web)]
    assert methods[0] == (False, True)  # the early json_schema request, refused
    assert (True, False) in methods and reply.value.queries  # then the method chain


@pytest.mark.parametrize("fault", ["http_500", "http_429"])
async def test_a_busy_server_is_a_transient_error_for_the_retry_layer_not_a_resend(
    web: FakeWeb, fault: str
) -> None:
    web.model.fail("QueryPlan", fault)
    with pytest.raises(ModelCallError) as raised:
        await ask(early(web), web)
    assert raised.value.transient and raised.value.status == int(fault[-3:])
    assert len(plan_calls(web)) == 1  # not asked again at once, without a backoff


async def test_a_timeout_is_a_transient_error_and_the_request_is_not_sent_twice(
    web: FakeWeb,
) -> None:
    spec = replace(context_for(web).summary_spec(), timeout_s=0.3)
    web.hold()  # the server takes the request and does not answer
    try:
        with pytest.raises(ModelCallError, match="unreachable") as raised:
            await early(web).structured(messages(), QueryPlan, spec=spec, stage="plan_queries")
    finally:
        web.release()
    assert raised.value.transient
    assert web.model_agents and all("(early)" in agent for agent in web.model_agents)


async def test_a_url_without_its_scheme_goes_the_usual_way_not_as_an_outage(web: FakeWeb) -> None:
    from deskresearch.services.model.early import EarlyCalls

    spec = context_for(web).summary_spec()
    got = await EarlyCalls({}).ask(messages(), QueryPlan.model_json_schema(), spec,
                                   web.base.removeprefix("http://") + "/v1", "key")  # fmt: skip
    assert got is None and plan_calls(web) == []  # nothing sent: the usual call names the URL
