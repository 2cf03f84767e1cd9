from typing import Any

import pytest
from langgraph.errors import NodeError

from deskresearch.config.context import Context
from deskresearch.errors import ModelCallError, ModelOutputError
from deskresearch.nodes.rank_urls import Ranking, checked_order, rank_failed, rank_urls
from deskresearch.records import SearchHit
from tests.support.fakes import ScriptedChat, hit, runtime

pytestmark = pytest.mark.anyio


def task(n: int) -> Any:
    return {"topic": "t", "query": "q", "order": 0, "round": 1, "hits": [hit(i) for i in range(n)]}


def urls(hits: list[SearchHit]) -> list[str]:
    return [h["url"] for h in hits]


@pytest.mark.parametrize("bad", [[], [0, 0], [3], [-1], [0, 5]])
def test_checked_order_rejects_invalid_indices(bad: list[int]) -> None:
    with pytest.raises(ModelOutputError):
        checked_order(bad, 3)


def test_checked_order_accepts_a_partial_unique_order() -> None:
    assert checked_order([2, 0], 3) == [2, 0]


async def test_rank_urls_keeps_the_models_order_and_explains_every_drop() -> None:
    llm = ScriptedChat({"rank_urls": [Ranking(indices=[3, 1, 0])]})
    update = await rank_urls(task(5), runtime(Context(url_per_query=2)), llm=llm)
    assert urls(update["ranked"][0]["hits"]) == ["https://example.org/3", "https://example.org/1"]
    reasons = {p["subject"]: p["reason"] for p in update["provenance"]}
    assert "ranked below the top 2" in reasons["https://example.org/0"]
    assert "dropped by the model" in reasons["https://example.org/2"]
    assert set(reasons) == {
        "https://example.org/0",
        "https://example.org/2",
        "https://example.org/4",
    }


async def test_rank_urls_falls_back_to_engine_order_on_out_of_range_index() -> None:
    llm = ScriptedChat({"rank_urls": [Ranking(indices=[7, 0])]})
    update = await rank_urls(task(3), runtime(Context(url_per_query=2)), llm=llm)
    assert urls(update["ranked"][0]["hits"]) == ["https://example.org/0", "https://example.org/1"]
    assert update["provenance"][0]["outcome"] == "fallback"


async def test_rank_urls_applies_an_injected_rank_function_after_the_model() -> None:
    llm = ScriptedChat({"rank_urls": [Ranking(indices=[0, 1, 2])]})
    update = await rank_urls(
        task(3), runtime(), llm=llm, rank_func=lambda hits: list(reversed(hits))[:2]
    )
    assert urls(update["ranked"][0]["hits"]) == ["https://example.org/2", "https://example.org/1"]
    assert "custom rank function" in update["provenance"][0]["reason"]


async def test_rank_urls_makes_no_call_without_hits() -> None:
    llm = ScriptedChat()
    update = await rank_urls(task(0), runtime(), llm=llm)
    assert update["ranked"][0]["hits"] == [] and llm.calls == []


def test_rank_failed_keeps_engine_order_after_a_transient_failure() -> None:
    cmd = rank_failed(
        task(3),
        NodeError("rank_urls", ModelCallError("503", transient=True)),
        runtime(Context(url_per_query=1)),
    )
    assert cmd.update is not None
    update: Any = cmd.update
    assert urls(update["ranked"][0]["hits"]) == ["https://example.org/0"]
    assert update["provenance"][0]["outcome"] == "fallback"


def test_rank_failed_reraises_non_service_errors() -> None:
    with pytest.raises(KeyError):
        rank_failed(task(1), NodeError("rank_urls", KeyError("bug")), runtime())
