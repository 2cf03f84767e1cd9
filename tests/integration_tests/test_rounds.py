"""Research in rounds: what the first pages name is searched next, and the report uses it all.

The whole graph runs against the loopback web serving the multi-hop cases' pages among the
fixture pages, with a search that ranks pages by the words they share with the query: a case's
later pages share no word with its question, so only the name an earlier page mentions finds
them. The fake model's reflection follows such names (tests/support/fake_reflect.py).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deskresearch.services.servers import searches_at_most
from tests.support.fake_model import stage_of
from tests.support.loopback import FakeWeb, serve
from tests.support.multihop import Case, case, hop_web, overlap
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio
TWO_HOP, THREE_HOP = "en-bridge-year", "fr-horlogerie-fleuve"


async def research(c: Case, **ctx: Any) -> tuple[dict[str, Any], FakeWeb]:
    web = hop_web([c])
    with serve(web):
        out = await graph_for(web).ainvoke({"topic": c.question}, context=context_for(web, **ctx))
    return out, web


def answered(c: Case, out: dict[str, Any]) -> bool:
    return c.answered_in(out["report"], out["sources"])


def calls(web: FakeWeb, stage: str) -> list[dict[str, Any]]:
    return [r for r in web.model.requests if stage_of(r) == stage]


def paths(out: dict[str, Any]) -> list[str]:
    return [s["url"].split("/", 3)[-1] for s in out["sources"]]


def test_the_cases_hidden_pages_share_no_word_with_their_question() -> None:
    for c in (case(TWO_HOP), case(THREE_HOP)):
        assert overlap(c) == {p.path: set() for p in c.hidden_pages()}


async def test_a_two_hop_question_needs_the_second_round() -> None:
    c = case(TWO_HOP)
    single, _ = await research(c, max_rounds=1)
    assert single["status"] == "ok" and not answered(c, single)
    assert "hop/nordvik-konstrukt.html" not in paths(single)
    assert len(single["rounds"]) == 1 and single["rounds"][0]["gaps"] == []

    out, web = await research(c, max_rounds=2)
    assert out["status"] == "ok" and answered(c, out), out["report"]
    first, second = out["rounds"]
    [lead] = second["queries"]
    # The lead is searched by its own name, tied to the fact that names it and its page.
    assert lead["query"] == lead["lead"] == "Nordvik Konstrukt AS"
    assert "built" in lead["fact"] and lead["source"].endswith("/hop/storasen-bridge.html")
    assert first["gaps"] == [lead["gap"]] and second["gaps"] == [] and second["pages"] >= 1
    assert first["tokens"] > 0 and second["tokens"] > 0 and second["seconds"] >= 0
    hidden = next(s for s in out["sources"] if s["url"].endswith("/hop/nordvik-konstrukt.html"))
    assert hidden["round"] == 2 and "Nordvik Konstrukt AS" in hidden["queries"]
    followup = [p for p in out["provenance"] if p["outcome"] == "followup"]
    assert [p["subject"] for p in followup] == ["Nordvik Konstrukt AS"]
    assert "round 2" in followup[0]["reason"] and "storasen-bridge" in followup[0]["reason"]
    assert max(web.fetches.values()) == 1, "no page is fetched twice"
    searched = [s["query"] for s in web.searches]
    assert len(searched) == len(set(searched)), "no query is searched twice"
    assert out["queries"][-1] == "Nordvik Konstrukt AS"
    assert len(calls(web, "Reflection")) == 2  # after round 1 (a lead), after round 2 (none)
    # The citation check covers the second round's source too.
    assert any(c["sources"] == [hidden["id"]] and c["verdict"] == "supported"
               for c in out["citations"])  # fmt: skip


async def test_a_three_hop_question_needs_three_rounds() -> None:
    c = case(THREE_HOP)
    two, _ = await research(c, max_rounds=2)
    assert two["status"] == "ok" and not answered(c, two)
    # Rounds ran out with a gap open: the report says what it could not establish.
    assert two["rounds"][-1]["gaps"] and "Port Sainte-Claire" in two["rounds"][-1]["gaps"][0]
    assert "## Ce que ce rapport n'a pas pu établir" not in two["report"]  # language en-us
    assert "## What this report could not establish" in two["report"]
    closing = two["report"].split("## What this report could not establish")[1]
    assert "Port Sainte-Claire" in closing.split("## References")[0]

    three, web = await research(c, max_rounds=3)
    assert answered(c, three), three["report"]
    assert [r["queries"][0]["query"] for r in three["rounds"][1:]] == [
        "Auguste Ravel", "Port Sainte-Claire",
    ]  # fmt: skip
    assert "could not establish" not in three["report"]
    assert max(web.fetches.values()) == 1
    # The pre-flight holds Tavily's credits against a run's searches at most: never fewer.
    ctx = context_for(web, max_rounds=3)
    assert ctx.max_keywords + ctx.decomposition_nums < len(web.searches) <= searches_at_most(ctx)


async def test_a_report_in_french_closes_with_its_open_gaps_in_french() -> None:
    out, _ = await research(case(THREE_HOP), max_rounds=2, language="fr")
    assert "## Ce que ce rapport n'a pas pu établir" in out["report"]


async def test_a_topic_the_first_round_covers_stops_after_one_reflection(web: FakeWeb) -> None:
    out = await graph_for(web).ainvoke(
        {"topic": "EV battery recycling"}, context=context_for(web, max_rounds=3)
    )
    assert out["status"] == "ok" and len(out["rounds"]) == 1
    assert out["rounds"][0]["gaps"] == [] and len(calls(web, "Reflection")) == 1
    reflected_at = next(i for i, r in enumerate(web.model.requests)
                        if stage_of(r) == "Reflection")  # fmt: skip
    after = web.model.requests[reflected_at + 1 :]
    assert not [r for r in after if stage_of(r) in ("Ranking", "ChunkSummary")], "no new round"
    assert all(s["round"] == 1 for s in out["sources"])


async def test_max_rounds_1_makes_no_reflection_call(web: FakeWeb) -> None:
    out = await graph_for(web).ainvoke(
        {"topic": "EV battery recycling"}, context=context_for(web, max_rounds=1)
    )
    assert out["status"] == "ok" and calls(web, "Reflection") == []
    [only] = out["rounds"]
    assert only["round"] == 1 and [q["query"] for q in only["queries"]] == out["queries"]


async def test_a_budget_spent_in_the_first_round_still_ends_with_a_report() -> None:
    c = case(TWO_HOP)
    full, _ = await research(c, max_rounds=2)
    first = full["rounds"][0]["tokens"]
    out, web = await research(c, max_rounds=2, token_budget=first // 2, max_model_calls=1)
    assert out["budget_stopped"] and out["status"] in ("ok", "insufficient_evidence")
    assert len(out["rounds"]) == 1 and calls(web, "Reflection") == [], "no round after the stop"
    if out["status"] == "ok":
        assert out["sources"] and "token budget" in out["report"]


async def test_a_round_starts_only_if_the_budget_can_pay_for_it() -> None:
    c = case(TWO_HOP)
    full, _ = await research(c, max_rounds=2)
    first = full["rounds"][0]["tokens"]
    # Enough to finish round 1 and reflect, not for round 2: one query, so about a quarter of
    # round 1's four (the estimate is per query).
    out, _ = await research(c, max_rounds=2, token_budget=first + first // 8)
    assert len(out["rounds"]) == 1 and not out["budget_stopped"]
    [skipped] = [
        p for p in out["provenance"] if p["stage"] == "reflect" and "no round 2" in p["reason"]
    ]
    assert "budget has" in skipped["reason"]
    assert "What this report could not establish" in out["report"]  # the lead stays open
    assert out["status"] == "ok" and not answered(c, out)


async def test_a_run_stopped_in_round_2_resumes_without_redoing_round_1() -> None:
    c = case(TWO_HOP)
    web = hop_web([c])
    saver, config = InMemorySaver(), {"configurable": {"thread_id": "rounds"}}
    with serve(web):
        graph, ctx = graph_for(web, checkpointer=saver), context_for(web, max_rounds=2)
        task = asyncio.current_task()
        assert task is not None
        try:
            async for _, _, chunk in graph.astream({"topic": c.question}, config, context=ctx,
                                                   stream_mode=["custom"], subgraphs=True):  # fmt: skip
                if isinstance(chunk, dict) and chunk.get("stage") == "rank_urls" and \
                        chunk.get("query") == "Nordvik Konstrukt AS":  # fmt: skip
                    task.cancel()  # round 2 is under way
        except asyncio.CancelledError:
            task.uncancel()
        before = Counter(stage_of(r) for r in web.model.requests)
        done_before = len(web.model.requests)
        out = await graph.ainvoke(None, config, context=ctx)
    after = Counter(stage_of(r) for r in web.model.requests[done_before:])
    assert before["Reflection"] == 1 and out["status"] == "ok" and answered(c, out)
    assert after["Keywords"] == after["QueryPlan"] == 0, "round 1's planning is not redone"
    assert after["Reflection"] == 1  # only the one after round 2
    round_1 = {json.dumps(r["messages"]) for r in web.model.requests[:done_before]
               if stage_of(r) == "ChunkSummary"}  # fmt: skip
    redone = [r for r in web.model.requests[done_before:]
              if stage_of(r) == "ChunkSummary" and json.dumps(r["messages"]) in round_1]  # fmt: skip
    assert redone == [], "round 1's pages are not summarised again"
    assert [r["round"] for r in out["rounds"]] == [1, 2]
