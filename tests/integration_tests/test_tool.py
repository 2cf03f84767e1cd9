"""The graph as a tool: a calling model gets the report and a short source list, not the state."""

import json

import pytest

from deskresearch import ResearchRequest
from tests.support.loopback import FakeWeb
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def tool_settings(web: FakeWeb, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call passes no context: the settings come from the environment."""
    for name, value in context_for(web).__dict__.items():
        if name in ("search", "tavily_base_url", "allow_hosts", "retry_backoff_s"):
            monkeypatch.setenv(f"DESKRESEARCH_{name.upper()}", str(value))


async def test_as_tool_returns_the_report_and_a_short_source_list(web: FakeWeb) -> None:
    graph = graph_for(web)
    ctx = context_for(web)
    tool = graph.as_tool(ResearchRequest, name="research", description="Research a question.")
    compact = await tool.ainvoke({"topic": "EV battery recycling"})
    full = await graph.ainvoke({"topic": "EV battery recycling"}, context=ctx)
    assert set(compact) == {"status", "reason", "report", "sources"}
    assert compact["report"] == full["report"] and compact["status"] == "ok"
    assert compact["sources"] == [
        {"id": s["id"], "title": s["title"], "url": s["url"]} for s in full["sources"]
    ]
    # The conversation (messages) repeats the report as an AI message: left out of the whole.
    state = {k: v for k, v in full.items() if k != "messages"}
    size, whole = len(json.dumps(compact)), len(json.dumps(state))
    # The documented size: the report plus about 100 characters a source.
    assert size <= len(json.dumps(full["report"])) + 150 * len(full["sources"]) + 100
    assert size * 3 < whole
    print(f"tool result: {size} characters (full state: {whole})")  # noqa: T201 - shown with -s


async def test_as_tool_gives_the_full_state_on_request(web: FakeWeb) -> None:
    tool = graph_for(web).as_tool(ResearchRequest, name="research", full=True)
    out = await tool.ainvoke({"topic": "EV battery recycling"})
    assert {"provenance", "usage", "queries", "sources", "report"} <= set(out)
