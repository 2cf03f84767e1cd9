"""The token budget: gathering stops when it is spent, the report is still written and says so."""

import asyncio

import pytest

from tests.support.fake_model import REPORT
from tests.support.loopback import Entry, FakeWeb
from tests.support.runs import context_for, graph_for, run

pytestmark = pytest.mark.anyio


async def test_a_spent_budget_stops_gathering_and_the_report_says_so(web: FakeWeb) -> None:
    full = await run(web)
    gathered = sum(u["input_tokens"] + u["output_tokens"] for u in full["usage"]
                   if u["stage"] in ("rank_urls", "summarise_chunk", "reduce_page"))  # fmt: skip
    before = sum(u["input_tokens"] + u["output_tokens"] for u in full["usage"]
                 if u["stage"] in ("generate_keywords", "plan_queries"))  # fmt: skip
    web.model.requests.clear()
    web.model.answered.clear()
    budget = before + gathered // 4  # room for some of the gathering, not all
    # One model call at a time: a gathering call starts only while the run has spent less than
    # the budget, so the run overshoots it by at most the last call admitted (whichever page's
    # chunk that is: the order pages are read in varies).
    out = await run(web, token_budget=budget, max_model_calls=1)
    assert out["status"] == "ok" and f"token budget ({budget})" in out["report"]
    assert out["budget_stopped"] is True and full["budget_stopped"] is False  # a field, typed
    refused = [p for p in out["provenance"] if "token budget reached" in p["reason"]]
    assert refused, "refused calls are recorded"
    spent = sum(u["input_tokens"] + u["output_tokens"] for u in out["usage"]
                if u["stage"] in ("rank_urls", "summarise_chunk", "reduce_page"))  # fmt: skip
    largest = max(t for s, t in web.model.answered if s in ("Ranking", "ChunkSummary", "PageFacts"))
    assert before + spent < budget + largest, "gathering stopped after the call at the limit"
    assert spent < gathered, "the budget left pages unsummarised"
    assert web.model.calls(REPORT), "the report is written all the same"
    assert out["sources"], "from what it had gathered"


async def test_a_budget_spent_before_any_page_ends_in_insufficient_evidence(web: FakeWeb) -> None:
    out = await run(web, token_budget=1)
    assert out["status"] == "insufficient_evidence" and out["budget_stopped"] is True
    assert "token budget ran out" in out["report"]
    assert web.model.calls(REPORT) == []


async def test_a_reason_that_mentions_the_budget_does_not_stop_the_report(web: FakeWeb) -> None:
    """The stop is a field, not a text match: a page titled like the refusal changes nothing."""
    web.catalogue[0] = Entry(web.catalogue[0].path, "token budget reached", "token budget reached")
    out = await run(web)
    assert out["budget_stopped"] is False and "token budget (" not in out["report"]


async def test_concurrent_runs_with_different_budgets_do_not_share_a_meter(web: FakeWeb) -> None:
    graph = graph_for(web)  # one compiled graph, as a server has
    tight, free = await asyncio.gather(
        graph.ainvoke({"topic": "EV battery recycling"}, context=context_for(web, token_budget=1)),
        graph.ainvoke({"topic": "EV battery recycling"}, context=context_for(web)),
    )
    assert tight["budget_stopped"] and tight["status"] == "insufficient_evidence"
    assert not free["budget_stopped"] and free["status"] == "ok" and free["sources"]
