"""Structured output through the real ChatOpenAI: each method, the auto chain, tolerant parsing."""

import re
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from deskresearch.errors import ContextLengthError, ModelCallError, ModelOutputError
from deskresearch.nodes.keywords import Keywords
from deskresearch.records import ModelSpec, Usage
from deskresearch.services.model.retry import retry_after
from deskresearch.services.model.structured import parse_tolerant
from tests.support.fake_model import FakeModel, chat_over, method_of

pytestmark = pytest.mark.anyio
MSGS = [HumanMessage("<topic>\nbatteries\n</topic>")]


def spec(method: Any = "auto") -> ModelSpec:
    return ModelSpec(model="local-model", base_url="http://fake/v1", method=method, timeout_s=5)


async def ask(model: FakeModel, method: Any = "auto", chat: Any = None) -> Any:
    chat = chat or chat_over(model)
    return await chat.structured(MSGS, Keywords, spec=spec(method), stage="generate_keywords")


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode", "text"])
async def test_each_method_alone_sends_its_own_request_shape(method: str) -> None:
    model = FakeModel()
    reply = await ask(model, method)
    assert reply.value.keywords[0] == "batteries overview"
    assert [method_of(r) for r in model.requests] == [method]


@pytest.mark.parametrize(
    ("rejects", "used"),
    [
        ({"json_schema"}, "function_calling"),
        ({"json_schema", "function_calling"}, "json_mode"),
        ({"json_schema", "function_calling", "json_mode"}, "text"),
    ],
)
async def test_auto_falls_back_past_methods_the_server_rejects_and_remembers(
    rejects: set[str], used: str
) -> None:
    model = FakeModel(rejects=rejects)
    chat = chat_over(model)
    first = await ask(model, chat=chat)
    assert first.value.keywords and method_of(model.requests[-1]) == used
    assert len(model.requests) == len(rejects) + 1
    assert first.usage["calls"] == 1, "a rejected request costs no tokens"
    model.requests.clear()
    await ask(model, chat=chat)
    assert [method_of(r) for r in model.requests] == [used], "rejected methods are not retried"


async def test_a_configured_method_the_server_rejects_is_a_clear_error() -> None:
    model = FakeModel(rejects={"json_schema"})
    with pytest.raises(ModelCallError, match="400") as err:
        await ask(model, "json_schema")
    assert not err.value.transient and len(model.requests) == 1


@pytest.mark.parametrize("fault", ["think", "prose"])
@pytest.mark.parametrize("method", ["json_mode", "text"])
async def test_json_after_reasoning_or_inside_prose_is_still_read(fault: str, method: str) -> None:
    model = FakeModel()
    model.fail("Keywords", fault)
    reply = await ask(model, method)
    assert reply.value.keywords[0] == "batteries overview"
    assert len(model.requests) == 1, "parsed from the same answer, no second call"


async def test_auto_moves_on_when_an_answer_does_not_parse_and_counts_every_attempt() -> None:
    model = FakeModel()
    model.fail("Keywords", "malformed", "refusal")
    reply = await ask(model)
    assert reply.value.keywords
    assert [method_of(r) for r in model.requests] == [
        "json_schema",
        "function_calling",
        "json_mode",
    ]
    assert reply.usage["calls"] == 3, "the failed answers' tokens are counted too"


async def test_auto_gives_up_after_the_whole_chain_with_every_problem_named() -> None:
    model = FakeModel()
    model.fail("Keywords", "refusal", "refusal", "refusal", "refusal")
    with pytest.raises(ModelOutputError) as err:
        await ask(model)
    assert len(model.requests) == 4
    assert "text:" in str(err.value) and "no JSON object" in str(err.value)
    assert err.value.usage is not None and err.value.usage["calls"] == 4


async def test_truncated_structured_answer_is_an_output_error() -> None:
    model = FakeModel()
    model.fail("Keywords", "length")
    with pytest.raises(ModelOutputError, match="length"):
        await ask(model, "json_schema")


async def test_truncated_report_is_marked_truncated() -> None:
    model = FakeModel()
    model.fail("report", "length")
    reply = await chat_over(model).text(MSGS, spec=spec(), stage="write_report")
    assert reply.truncated and reply.value


@pytest.mark.parametrize("fault", ["context_length", "context_size"])
async def test_context_length_error_is_its_own_type_and_not_transient(fault: str) -> None:
    model = FakeModel()
    model.fail("Keywords", fault)
    with pytest.raises(ContextLengthError) as err:
        await ask(model)
    assert not err.value.transient and len(model.requests) == 1, "no method fallback for it"


def local(method: Any = "auto") -> ModelSpec:
    return ModelSpec(
        model="llama3.1", base_url="http://localhost:11434/v1", method=method, timeout_s=5
    )


LONG = [HumanMessage("Battery recycling recovers lithium and cobalt. " * 800)]  # 6,400 tokens


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode", "text"])
async def test_a_prompt_a_local_server_cut_silently_is_a_context_length_error(method: str) -> None:
    """Ollama cuts a prompt longer than its context and answers: only its count tells."""
    with pytest.raises(ContextLengthError) as err:
        await chat_over(FakeModel(context_tokens=4096)).structured(
            LONG, Keywords, spec=local(method), stage="generate_keywords"
        )
    assert re.search(
        r"read 2,050 tokens of a prompt of 6,[4-6]\d\d: the server cut it", str(err.value)
    )
    assert "OLLAMA_CONTEXT_LENGTH" in str(err.value) and not err.value.transient
    assert err.value.usage and err.value.usage["input_tokens"] == 2050, "its tokens still count"
    room = await chat_over(FakeModel(context_tokens=16_384)).structured(
        LONG, Keywords, spec=local(method), stage="generate_keywords"
    )
    assert room.value.keywords, "the same prompt on a server with room is read whole"


async def test_a_hosted_api_is_not_suspected_of_cutting() -> None:
    """A hosted API answers a prompt too long with HTTP 400; its counts are taken as they are."""
    reply = await chat_over(FakeModel(context_tokens=4096)).structured(
        LONG, Keywords, spec=spec(), stage="generate_keywords"
    )
    assert reply.value.keywords


async def test_a_reply_in_text_from_a_cut_prompt_is_refused_too() -> None:
    long = [HumanMessage("Write the report on battery recycling. " * 1000)]
    with pytest.raises(ContextLengthError):
        await chat_over(FakeModel(context_tokens=4096)).text(
            long, spec=local(), stage="write_report"
        )


DENSE = "-" * 200_000  # separator lines: ~35 characters a token
COLUMNS = "\n".join(f"{'Lithium':<30}{'95 %':>30}{'2024':>30}" for _ in range(500))
CJK = "本报告研究电池回收。" * 3000  # about a token a character


def usage_of_read(read: int) -> Usage:
    return Usage(stage="summarise_chunk", model="m", input_tokens=read, output_tokens=9, calls=1)


@pytest.mark.parametrize("text", [DENSE, COLUMNS, CJK])
def test_dense_or_sparse_text_read_whole_is_not_taken_for_a_cut(text: str) -> None:
    from deskresearch.services.model.cut import check_read
    from deskresearch.services.model.tokens import count_tokens

    read = usage_of_read(count_tokens(text))  # what a server with room reports
    check_read([HumanMessage(text)], read, model="m", base="http://localhost:11434/v1")


@pytest.mark.parametrize("text", [DENSE, COLUMNS])
def test_dense_text_cut_to_a_third_is_told(text: str) -> None:
    from deskresearch.services.model.cut import check_read
    from deskresearch.services.model.tokens import count_tokens

    read = usage_of_read(max(count_tokens(text) // 3, 768))
    with pytest.raises(ContextLengthError):
        check_read([HumanMessage(text)], read, model="m", base="http://localhost:11434/v1")


async def test_429_carries_retry_after() -> None:
    model = FakeModel(retry_after="7")
    model.fail("Keywords", "http_429")
    with pytest.raises(ModelCallError) as err:
        await ask(model)
    assert err.value.transient and err.value.status == 429 and err.value.retry_after == 7.0


def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    import httpx

    def resp(**headers: str) -> httpx.Response:
        return httpx.Response(429, headers=headers)

    assert retry_after(resp(**{"retry-after": "2.5"})) == 2.5
    assert retry_after(resp(**{"retry-after-ms": "1500"})) == 1.5
    assert retry_after(resp(**{"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after(resp(**{"retry-after": "soon"})) is None
    assert retry_after(resp()) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"keywords": ["a"]}',
        '<think>{"keywords": 3}</think>{"keywords": ["a"]}',
        'Here you go: {"keywords": ["a"]} — done. {"other": 1}',
        'Sure.\n```json\n{"keywords": ["a"]}\n```',
        '{"note": "first object is not it"} then {"keywords": ["a"]}',
    ],
)
def test_parse_tolerant_finds_the_fitting_object(text: str) -> None:
    assert parse_tolerant(text, Keywords).keywords == ["a"]


@pytest.mark.parametrize(
    "text", ["I can't help with that.", '{"keywords": "not a list"}', '{"keywords": ["a"', ""]
)
def test_parse_tolerant_rejects_what_does_not_fit(text: str) -> None:
    with pytest.raises(ModelOutputError):
        parse_tolerant(text, Keywords)
