from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage
from typing_extensions import TypedDict

from deskresearch.errors import ConfigError, ModelCallError, ModelOutputError
from deskresearch.nodes.keywords import Keywords
from deskresearch.records import ModelSpec
from deskresearch.services.base import Reply
from deskresearch.services.model.llm import OpenAIChat
from deskresearch.services.model.structured import strip_reasoning
from deskresearch.services.model.tokens import count_tokens
from tests.support.fake_model import FakeModel, chat_over
from tests.support.loopback import FakeWeb, serve

pytestmark = pytest.mark.anyio
MSGS = [HumanMessage("<topic>\nbatteries\n</topic>")]


def chat(model: FakeModel, status: int | None = None, content: str | None = None) -> OpenAIChat:
    return chat_over(model, status=status, content=content)


def spec(method: Any = "json_schema") -> ModelSpec:
    return ModelSpec(model="gpt-4o-mini", base_url="http://fake/v1", method=method, timeout_s=5)


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
async def test_structured_output_works_with_each_method(method: str) -> None:
    model = FakeModel()
    reply = await chat(model).structured(
        MSGS, Keywords, spec=spec(method), stage="generate_keywords"
    )
    assert reply.value.keywords[0] == "batteries overview"
    assert reply.usage["calls"] == 1 and reply.usage["input_tokens"] > 0
    assert reply.usage["stage"] == "generate_keywords" and reply.usage["model"] == "gpt-4o-mini"


async def test_json_mode_puts_the_schema_in_the_prompt() -> None:
    model = FakeModel()
    await chat(model).structured(MSGS, Keywords, spec=spec("json_mode"), stage="generate_keywords")
    system = model.requests[0]["messages"][-1]["content"]
    assert '"keywords"' in system and model.requests[0]["response_format"] == {
        "type": "json_object"
    }


async def test_malformed_json_raises_model_output_error_with_usage() -> None:
    model = FakeModel()
    model.fail("Keywords", "malformed")
    with pytest.raises(ModelOutputError) as err:
        await chat(model).structured(
            MSGS, Keywords, spec=spec("json_mode"), stage="generate_keywords"
        )
    assert err.value.usage is not None and err.value.usage["calls"] == 1


async def test_http_500_is_a_transient_model_call_error() -> None:
    model = FakeModel()
    model.fail("Keywords", "http_500")
    with pytest.raises(ModelCallError) as err:
        await chat(model).structured(MSGS, Keywords, spec=spec(), stage="generate_keywords")
    assert err.value.transient
    assert len(model.requests) == 1, "ChatOpenAI's own retries are off; the graph retries"


async def test_http_401_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await chat(FakeModel(), status=401).text(MSGS, spec=spec(), stage="write_report")


async def test_text_strips_reasoning_blocks() -> None:
    reply = await chat(FakeModel(), content="<think>secret plan</think>\n# Report").text(
        MSGS, spec=spec(), stage="write_report"
    )
    assert reply.value == "# Report"


def test_strip_reasoning_handles_an_unclosed_block() -> None:
    assert strip_reasoning("<think>never closed") == ""


def test_check_requires_a_key_or_a_base_url() -> None:
    none = ModelSpec(model="m", base_url="", method="json_schema", timeout_s=1)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY.*OPENAI_BASE_URL"):
        OpenAIChat(environ={}).check(none)
    OpenAIChat(environ={"OPENAI_BASE_URL": "http://localhost:11434/v1"}).check(none)
    OpenAIChat(environ={"OPENAI_API_KEY": "k"}).check(none)


def test_a_runs_budget_or_limits_do_not_make_a_client_that_outlives_it() -> None:
    import dataclasses

    from deskresearch.config.context import Context
    from deskresearch.services.model.llm import OpenAIChat

    chat = OpenAIChat(environ={"OPENAI_API_KEY": "k"})
    for budget in (0, 1000, 2000):
        spec = dataclasses.replace(Context(token_budget=budget).summary_spec(), max_concurrent=3)
        chat._model(spec)
    assert len(chat._models) == 1


class _Written(TypedDict):
    done: bool


async def test_a_streamed_text_call_counts_the_tokens_a_server_did_not_report() -> None:
    """LangGraph's `messages` mode (Studio, the SDK) streams the writers' calls; a server asked
    for no usage (any but OpenAI's own API) reports none: the call's tokens are counted here."""
    from langgraph.graph import END, START, StateGraph

    with serve(FakeWeb()) as web:
        env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": web.base + "/v1"}
        llm = OpenAIChat(environ=env)
        at = ModelSpec(model="gpt-4o-mini", base_url=web.base + "/v1", method="auto", timeout_s=30)
        replies: list[Reply[str]] = []

        async def write(state: _Written) -> dict[str, Any]:
            replies.append(await llm.text(MSGS, spec=at, stage="write_report"))
            return {"done": True}

        graph = StateGraph(_Written).add_node("write", write)
        graph = graph.add_edge(START, "write").add_edge("write", END)
        streamed = [
            c async for c in graph.compile().astream({"done": False}, stream_mode="messages")
        ]
    [reply] = replies
    [request] = web.model.requests
    assert request["stream"] is True and "stream_options" not in request
    assert len(streamed) > 2, "the answer arrived token by token"
    prompt = "\n".join(str(m.content) for m in MSGS)
    assert (reply.usage["input_tokens"], reply.usage["output_tokens"]) == (
        count_tokens(prompt),
        count_tokens(reply.value),
    ) and reply.usage["output_tokens"] > 0
    assert reply.usage.get("counted_calls") == 1, "marked: our count, not the server's"


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
async def test_a_structured_call_is_never_streamed_and_keeps_the_server_s_usage(
    method: Any,
) -> None:
    """`messages` mode streams any call made under it; a JSON answer is not, whatever the mode."""
    from langgraph.graph import END, START, StateGraph

    with serve(FakeWeb()) as web:
        env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": web.base + "/v1"}
        llm = OpenAIChat(environ=env)
        at = ModelSpec(model="gpt-4o-mini", base_url=web.base + "/v1", method=method, timeout_s=30)
        replies: list[Reply[Keywords]] = []

        async def ask(state: _Written) -> dict[str, Any]:
            replies.append(await llm.structured(MSGS, Keywords, spec=at, stage="generate_keywords"))
            return {"done": True}

        graph = (
            StateGraph(_Written).add_node("ask", ask).add_edge(START, "ask").add_edge("ask", END)
        )
        streamed = [
            c async for c in graph.compile().astream({"done": False}, stream_mode="messages")
        ]
    [reply] = replies
    [request] = web.model.requests
    assert not request.get("stream") and streamed == []
    assert (
        reply.value.keywords
        and reply.usage["input_tokens"] > 0
        and reply.usage["output_tokens"] > 0
        and "counted_calls" not in reply.usage
    )


def test_only_openai_s_own_api_is_asked_for_usage_in_a_stream() -> None:
    """OpenAI's API reports a stream's usage when asked; other servers may refuse the ask."""
    llm = OpenAIChat(environ={"OPENAI_API_KEY": "test-key"})
    at = ModelSpec(model="gpt-4o-mini", base_url="", method="auto", timeout_s=5)
    local = ModelSpec(
        model="llama3.1", base_url="http://localhost:11434/v1", method="auto", timeout_s=5
    )
    assert llm._model(at).stream_usage is True
    assert not llm._model(local).stream_usage
    # Connecting gives up after 5 s whatever the call may take (the openai client would apply
    # the call's whole timeout to it): a host that went away fails fast.
    timeout = llm._model(local).request_timeout
    assert isinstance(timeout, httpx.Timeout) and (timeout.connect, timeout.read) == (5.0, 5.0)
    slow = ModelSpec(
        model="llama3.1", base_url="http://localhost:11434/v1", method="auto", timeout_s=600
    )
    timeout = llm._model(slow).request_timeout
    assert isinstance(timeout, httpx.Timeout) and (timeout.connect, timeout.read) == (5.0, 600.0)
