"""`langgraph dev` serves the graph offline; langgraph-sdk drives it like a user's front end."""

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import START, StateGraph
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_client
from typing_extensions import TypedDict

from tests.integration_tests.served.conftest import SERVED
from tests.integration_tests.test_examples import run_example
from tests.support.loopback import FakeWeb
from tests.support.runs import run

ROOT = Path(__file__).parents[3]
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group(SERVED)]


async def test_the_sdk_sees_the_assistant_and_its_schemas(server: str) -> None:
    async with get_client(url=server) as client:
        [assistant] = await client.assistants.search(graph_id="researcher")
        schemas: dict[str, Any] = dict(
            await client.assistants.get_schemas(assistant["assistant_id"])
        )
        assert set(schemas["input_schema"]["properties"]) == {"topic", "language", "messages"}
        assert {"report", "sources", "status"} <= set(schemas["output_schema"]["properties"])
        fields = schemas["context_schema"]["properties"]
        assert fields["summary_model"]["__template_metadata__"] == {"kind": "llm"}
        assert all(f.get("description") for f in fields.values())
        assert fields["url_per_query"]["maximum"] == 20


async def test_a_streamed_run_reports_progress_and_keeps_state_and_history(
    server: str, web: FakeWeb
) -> None:
    async with get_client(url=server) as client:
        thread = await client.threads.create()
        events: dict[str, list[Any]] = {}
        async for part in client.runs.stream(
            thread["thread_id"],
            "researcher",
            input={"topic": "EV battery recycling"},
            context={"url_per_query": 2},
            stream_mode=["updates", "custom"],
            stream_subgraphs=True,
        ):
            events.setdefault(part.event.split("|")[0], []).append(part.data)
        assert "error" not in events, events.get("error")
        stages = {e["stage"] for e in events["custom"]}
        assert {"start_run", "read_page", "summarise_chunk", "write_section"} <= stages
        assert {"check_citations", "finish_report"} <= stages
        state = await client.threads.get_state(thread["thread_id"])
        values: dict[str, Any] = state["values"]  # type: ignore[assignment]
        assert (
            values["status"] == "ok"
            and values["sources"]
            and values["settings"]["url_per_query"] == 2
        )
        history = await client.threads.get_history(thread["thread_id"], limit=100)
        assert len(history) > 5
        # Every outside call went to the loopback fakes; secrets stay out of what the server keeps.
        assert any(c.kind == "model" for c in web.log) and web.searches
        dump = str(values) + str(history) + str(events)
        assert "server-secret" not in dump


async def test_five_runs_at_once_all_finish(server: str) -> None:
    async with get_client(url=server) as client:

        async def one(i: int) -> dict[str, Any]:
            thread = await client.threads.create()
            out = await client.runs.wait(
                thread["thread_id"], "researcher",
                input={"topic": f"EV battery recycling, aspect {i}"}, context={"url_per_query": 2},
            )  # fmt: skip
            assert isinstance(out, dict)
            return out

        results = await asyncio.gather(*(one(i) for i in range(5)))
        assert [r["status"] for r in results] == ["ok"] * 5
        # The served output carries the citation check's verdict on every cited sentence.
        for r in results:
            assert r["citations"] and all(c["verdict"] == "supported" for c in r["citations"])
            assert all(
                c["quote"] and c["decided_by"] in ("lexical", "model") for c in r["citations"]
            )


class Desk(TypedDict, total=False):
    topic: str
    report: str
    status: str


async def test_remote_graph_serves_as_a_node_of_a_parent_graph(server: str) -> None:
    async with get_client(url=server) as client:
        parent = StateGraph(Desk)
        parent.add_node("research", RemoteGraph("researcher", client=client))
        parent.add_edge(START, "research")
        out = await parent.compile().ainvoke({"topic": "EV battery recycling"})
    assert out["status"] == "ok" and "[1]" in out["report"]


async def test_the_readme_sdk_example_saved_as_a_file_runs_as_in_process(
    server: str, web: FakeWeb
) -> None:
    out, served_calls = run_example("sdk", web, DESKRESEARCH_SERVER=server)
    assert "write_section finished" in out and "[1]" in out
    # The served run (the server's worker processes included) makes the calls of the same
    # research run in this process.
    before = len(web.model.requests)
    await run(web, "How are EV batteries recycled?", url_per_query=2)
    assert served_calls == len(web.model.requests) - before > 0


def test_langgraph_validate_accepts_the_config() -> None:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "langgraph"), "validate"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and "is valid" in proc.stdout, proc.stdout + proc.stderr
    assert "warning" not in (proc.stdout + proc.stderr).lower()


async def test_review_plan_pauses_a_served_run_and_the_sdk_resumes_it(server: str) -> None:
    async with get_client(url=server) as client:
        thread = await client.threads.create()
        tid = thread["thread_id"]
        ctx = {"url_per_query": 2, "review_plan": True}
        await client.runs.wait(
            tid, "researcher", input={"topic": "EV battery recycling"}, context=ctx
        )
        paused = await client.threads.get_state(tid)
        [task] = [t for t in paused["tasks"] if t["interrupts"]]
        pages = [p["url"] for p in task["interrupts"][0]["value"]["pages"]]
        out = await client.runs.wait(
            tid, "researcher", command={"resume": {"drop_urls": pages[:1]}}, context=ctx
        )
    assert isinstance(out, dict) and out["status"] == "ok"
    assert pages[0] not in {s["url"] for s in out["sources"]}


async def test_a_served_run_uses_the_cache_without_blocking_the_server(server: str) -> None:
    """The server forbids blocking I/O in the event loop: the cache must work under its guard."""
    context: dict[str, Any] = {"cache": True}
    outs = []
    async with get_client(url=server) as client:
        for _ in range(2):
            thread = await client.threads.create()
            out = await client.runs.wait(
                thread["thread_id"],
                "researcher",
                input={"topic": "Night trains in Europe"},
                context=context,
            )
            assert isinstance(out, dict) and out.get("status") == "ok", out
            outs.append(out)
    first, second = outs
    calls = sum(u["calls"] for u in first["usage"])
    assert sum(u.get("cached_calls", 0) for u in second["usage"]) == calls
    assert second["report"] == first["report"]
