"""`langgraph dev` as agents and chat front ends meet it: the official MCP client over streamable
HTTP at /mcp (our tool, mounted through langgraph.json), langgraph-sdk with a `messages` input
(what Studio's chat view and Agent Chat UI send), and an A2A `message/send`."""

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent, TextResourceContents

from deskresearch.mcp.result import MAX_RESULT_CHARS
from tests.integration_tests.served.conftest import SERVED
from tests.integration_tests.test_examples import run_example
from tests.support.loopback import FakeWeb, Latency

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group(SERVED)]


async def call(
    url: str, arguments: dict[str, Any], seen: list[tuple[float, str]] | None = None
) -> Any:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if seen is not None:
            seen.append((progress, message or ""))

    async with streamable_http_client(url + "/mcp") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("research", arguments, progress_callback=on_progress)


async def test_the_served_tool_is_ours_with_its_description_and_schemas(server: str) -> None:
    async with streamable_http_client(server + "/mcp") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            [tool] = (await session.list_tools()).tools
    assert tool.name == "research"
    description = tool.description or ""
    for promise in ("cited report", "checked", "minutes", "model calls", "US cents", "thread_id"):
        assert promise in description, promise
    inputs = tool.input_schema
    assert set(inputs["properties"]) == {
        "topic",
        "language",
        "max_rounds",
        "since",
        "include_domains",
        "exclude_domains",
    }
    assert inputs["required"] == ["topic"]
    assert all(p.get("description") for p in inputs["properties"].values())
    outputs = tool.output_schema or {}
    assert {"status", "report", "sources", "citations", "thread_id", "report_uri"} <= set(
        outputs["properties"]
    )


async def test_a_call_answers_bounded_json_with_progress_and_a_thread_that_resolves(
    server: str,
) -> None:
    progress: list[tuple[float, str]] = []
    result = await call(server, {"topic": "EV battery recycling", "max_rounds": 1}, progress)
    assert not result.is_error
    [block] = result.content
    assert isinstance(block, TextContent)
    data = json.loads(block.text)
    assert data == result.structured_content  # the same JSON, for clients without structure
    assert len(block.text) <= MAX_RESULT_CHARS
    print(f"served tool result: {len(block.text)} characters")  # noqa: T201
    assert data["status"] == "ok" and "[1]" in data["report"]
    assert data["sources"] and all(s["url"].startswith("http") for s in data["sources"])
    assert data["citations"]["checked"] > 0 and data["cost"]["model_calls"] > 0
    # Progress: one notification per progress event, in order, the thread id first.
    messages = [m for _, m in progress]
    assert [d for d, _ in progress] == sorted({d for d, _ in progress})
    assert messages[0] == f"[research] started thread_id={data['thread_id']}"
    assert messages[1].startswith("[start_run] started topic=EV battery recycling")
    assert any(m.startswith("[read_page] finished") for m in messages)
    assert messages[-1].startswith("[finish_report] finished citations=")
    # The thread stays: langgraph-sdk finds the full result under the id the tool returned.
    async with get_client(url=server) as client:
        state = await client.threads.get_state(data["thread_id"])
    values: dict[str, Any] = state["values"]  # type: ignore[assignment]
    assert values["status"] == "ok" and values["sources"]
    assert values["report"].startswith(data["report"].split("\n## References")[0])
    # ... and so does the MCP resource the result names.
    async with streamable_http_client(server + "/mcp") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            read_back = await session.read_resource(data["report_uri"])
    [content] = read_back.contents
    assert isinstance(content, TextResourceContents) and content.text == values["report"]


async def test_an_empty_topic_is_a_tool_error_saying_what_to_pass(
    server: str, web: FakeWeb
) -> None:
    before = len(web.model.requests)
    result = await call(server, {"topic": "   "})
    assert result.is_error
    [block] = result.content
    assert isinstance(block, TextContent)
    assert "topic is empty: pass a research question" in block.text
    assert len(web.model.requests) == before


async def test_a_cancelled_call_interrupts_the_served_run_which_resumes(
    server: str, web: FakeWeb
) -> None:
    web.latency = Latency(call_s=0.4)  # slow enough to cancel half-way
    progress: list[tuple[float, str]] = []
    try:
        task = asyncio.ensure_future(call(server, {"topic": "Night trains in Europe"}, progress))
        while not any(m.startswith("[read_page]") for _, m in progress):
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        web.latency = Latency()
    thread = progress[0][1].removeprefix("[research] started thread_id=")
    async with get_client(url=server) as client:
        for _ in range(100):  # the server interrupts the run
            [run] = await client.runs.list(thread)
            if run["status"] != "running":
                break
            await asyncio.sleep(0.1)
        assert run["status"] == "interrupted"
        state = await client.threads.get_state(thread)
        assert state["values"]["sources"] == [] and state["next"]  # type: ignore[call-overload]
        out = await client.runs.wait(thread, "researcher", input=None)
    assert isinstance(out, dict) and out["status"] == "ok"


def chat(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_a_chat_message_gets_the_report_as_an_ai_message(server: str) -> None:
    async with get_client(url=server) as client:
        thread = (await client.threads.create())["thread_id"]
        chunks: list[Any] = []
        final: dict[str, Any] = {}
        async for part in client.runs.stream(
            thread, "researcher",
            input=chat("How are EV batteries recycled?"),
            stream_mode=["values", "messages-tuple"],
        ):  # fmt: skip
            if part.event == "values":
                final = part.data
            elif part.event == "messages":
                chunks.append(part.data)
        human, ai = final["messages"]
        assert human["type"] == "human" and ai["type"] == "ai"
        assert ai["content"] == final["report"] and "[1]" in ai["content"]
        assert chunks  # the report's writer streams its tokens, as a chat UI shows them
        # Streamed, a call gets no usage from a server not asked for it: every stage's tokens
        # count all the same (the writers' counted, the JSON answers never streamed).
        spent = [u for u in final["usage"] if u["calls"]]
        assert {"write_section", "summarise_chunk", "rank_urls"} <= {u["stage"] for u in spent}
        assert all(u["input_tokens"] and u["output_tokens"] for u in spent), spent
        # A follow-up on the same thread is a new research on the follow-up's words.
        out = await client.runs.wait(
            thread, "researcher",
            input=chat("Night trains in Europe"),
        )  # fmt: skip
        state = await client.threads.get_state(thread)
    assert isinstance(out, dict) and out["status"] == "ok"
    values: dict[str, Any] = state["values"]  # type: ignore[assignment]
    assert values["topic"] == "Night trains in Europe"
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "human", "ai"]
    assert values["messages"][-1]["content"] == values["report"]


async def test_an_a2a_message_send_answers_with_the_report(server: str) -> None:
    async with get_client(url=server) as client:
        [assistant] = await client.assistants.search(graph_id="researcher")
    request = {
        "jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": {"role": "user", "messageId": uuid.uuid4().hex,
                               "parts": [{"kind": "text", "text": "EV battery recycling"}]}},
    }  # fmt: skip
    async with httpx.AsyncClient(timeout=120) as http:
        card = (await http.get(f"{server}/a2a/{assistant['assistant_id']}")).json()
        answer = (await http.post(f"{server}/a2a/{assistant['assistant_id']}", json=request)).json()
    assert "cited markdown report" in card["description"]
    task = answer["result"]
    assert task["status"]["state"] == "completed", answer
    [artifact] = task["artifacts"]
    text = "".join(p.get("text", "") for p in artifact["parts"])
    assert text.startswith("# ") and "[1]" in text and "## References" in text


def test_the_readme_mcp_http_example_saved_as_a_file_runs(server: str, web: FakeWeb) -> None:
    out = run_example("mcp_http", web, DESKRESEARCH_SERVER=server)[0].splitlines()
    assert out[0].startswith("research - Research a question on the web")
    assert out[1].startswith("ok ") and out[2].startswith('{"status":"ok"')


def test_the_readme_chat_example_saved_as_a_file_runs(server: str, web: FakeWeb) -> None:
    out = run_example("chat", web, DESKRESEARCH_SERVER=server)[0]
    answers = [line for line in out.splitlines() if line.startswith("ai ")]
    assert len(answers) == 2 and all(a.startswith("ai # ") for a in answers)


def test_the_readme_a2a_example_saved_as_a_file_runs(server: str, web: FakeWeb) -> None:
    out = run_example("a2a", web, DESKRESEARCH_SERVER=server)[0].splitlines()
    assert out[0].startswith("Researches a question on the web")
    assert out[1].startswith("completed ")
    assert out[2].startswith("# ")
