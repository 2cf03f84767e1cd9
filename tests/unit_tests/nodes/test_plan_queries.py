from typing import Any, cast

import pytest

from deskresearch.config.context import Context
from deskresearch.graph import fan_out_queries
from deskresearch.nodes.plan_queries import (
    MIN_RESULTS_BUDGET,
    QueryPlan,
    fit_results,
    plan_queries,
    results_budget,
)
from deskresearch.services.model.tokens import TiktokenCounter
from tests.support.fakes import ScriptedChat, hit, runtime

pytestmark = pytest.mark.anyio


def state(**kw: Any) -> Any:
    hits = [
        {"keyword": "k1", "hits": [hit(i) for i in range(3)], "error": ""},
        {"keyword": "k2", "hits": [hit(9)], "error": ""},
    ]
    return {"topic": "t", "keywords": ["k1", "k2"], "keyword_hits": hits, **kw}


def test_fit_results_drops_the_last_item_of_the_longest_list_first() -> None:
    groups = [("a", ["a1", "a2", "a3"]), ("b", ["b1"])]
    seen: list[str] = []

    def fits(block: str) -> bool:
        seen.append(block)
        return len(seen) == 3  # fits after two drops

    block = fit_results(groups, fits)
    assert "a3" not in block and "a2" not in block
    assert "a1" in block and "b1" in block


def test_fit_results_stops_when_nothing_is_left() -> None:
    block = fit_results([("a", ["a1"])], lambda _: False)
    assert "a1" not in block and "(no results)" in block


def test_results_budget_is_positive_for_unknown_and_tiny_models() -> None:
    assert results_budget(Context(summary_model="my-own-model"), "t") > 4000
    tiny = Context(summary_model="x", summary_context_window=500)
    assert results_budget(tiny, "t") == MIN_RESULTS_BUDGET


async def test_plan_queries_enforces_the_maximum() -> None:
    llm = ScriptedChat({"plan_queries": [QueryPlan(queries=[f"q{i}" for i in range(7)])]})
    update = await plan_queries(
        state(), runtime(Context(decomposition_nums=4)), llm=llm, tokens=TiktokenCounter()
    )
    assert update["queries"] == ["q0", "q1", "q2", "q3"]


async def test_plan_queries_falls_back_to_keywords_on_malformed_output() -> None:
    llm = ScriptedChat({"plan_queries": ["not json"]})
    update = await plan_queries(state(), runtime(), llm=llm, tokens=TiktokenCounter())
    assert update["queries"] == ["k1", "k2"]
    assert update["provenance"][0]["outcome"] == "fallback"


async def test_plan_queries_prompt_shrinks_to_fit_a_small_window() -> None:
    many = {"keyword": "k", "hits": [hit(i, snippet="word " * 60) for i in range(40)], "error": ""}
    llm = ScriptedChat({"plan_queries": [QueryPlan(queries=["q"])]})
    ctx = Context(summary_model="x", summary_context_window=2500)
    await plan_queries(state(keyword_hits=[many]), runtime(ctx), llm=llm, tokens=TiktokenCounter())
    prompt_text = " ".join(str(m.content) for m in llm.calls[0][1])
    assert "example.org/0>" in prompt_text
    assert "example.org/39>" not in prompt_text
    assert TiktokenCounter().count(prompt_text) < 2500


async def test_plan_queries_plans_nothing_when_every_keyword_search_failed() -> None:
    llm = ScriptedChat()
    failed: list[Any] = [
        {"keyword": k, "hits": [], "error": f"{k}: HTTP 503"} for k in ("k1", "k2")
    ]
    update = await plan_queries(state(keyword_hits=failed), runtime(), llm=llm,
                                tokens=TiktokenCounter())  # fmt: skip
    assert update["queries"] == [] and llm.calls == [], "no call for a plan nobody can search"
    assert "every keyword search failed (k1: HTTP 503)" in update["provenance"][0]["reason"]
    assert fan_out_queries(cast(Any, {**state(), **update})) == "insufficient_evidence"
    one_answered = [*failed[:1], {"keyword": "k2", "hits": [], "error": ""}]
    llm = ScriptedChat({"plan_queries": [QueryPlan(queries=["q"])]})
    update = await plan_queries(state(keyword_hits=one_answered), runtime(), llm=llm,
                                tokens=TiktokenCounter())  # fmt: skip
    assert update["queries"] == ["q"], "a search that answered with nothing is not a failure"
