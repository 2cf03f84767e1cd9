from typing import Any

import pytest

from deskresearch.config.context import Context
from deskresearch.graph import route_after_keywords
from deskresearch.nodes.keywords import Keywords, generate_keywords, keywords_fallback
from tests.support.fakes import ScriptedChat, runtime

pytestmark = pytest.mark.anyio


def state(**kw: Any) -> Any:
    return {"topic": "EV battery recycling", "keyword_attempts": 0, **kw}


async def test_generate_keywords_cleans_dedupes_and_caps() -> None:
    llm = ScriptedChat({"generate_keywords": [Keywords(keywords=[" a  b ", "A B", "", "c", "d"])]})
    update = await generate_keywords(state(), runtime(Context(max_keywords=2)), llm=llm)
    assert update["keywords"] == ["a b", "c"]
    assert update["keyword_attempts"] == 1
    assert update["provenance"] == []
    assert update["usage"][0]["stage"] == "generate_keywords"


async def test_generate_keywords_records_malformed_output_and_returns_none() -> None:
    llm = ScriptedChat({"generate_keywords": ["{broken"]})
    update = await generate_keywords(state(), runtime(), llm=llm)
    assert update["keywords"] == []
    assert update["provenance"][0]["outcome"] == "failed"
    assert "attempt 1" in update["provenance"][0]["reason"]
    assert update["usage"], "tokens of a failed call still count"


async def test_generate_keywords_treats_empty_list_as_failure() -> None:
    llm = ScriptedChat({"generate_keywords": [Keywords(keywords=[])]})
    update = await generate_keywords(state(), runtime(), llm=llm)
    assert update["keywords"] == []
    assert "no usable keyword" in update["provenance"][0]["reason"]


def test_route_after_keywords_retries_then_falls_back() -> None:
    saved = {"settings": {"max_output_retries": 1}}  # what start_run saved
    assert (
        route_after_keywords(state(keywords=[], keyword_attempts=1, **saved)) == "generate_keywords"
    )
    assert (
        route_after_keywords(state(keywords=[], keyword_attempts=2, **saved)) == "keywords_fallback"
    )
    sends = route_after_keywords(state(keywords=["a", "b"], keyword_attempts=1, **saved))
    assert isinstance(sends, list) and [s.arg["keyword"] for s in sends] == ["a", "b"]


async def test_keywords_fallback_searches_the_topic_and_records_why() -> None:
    update = await keywords_fallback(state(keyword_attempts=2), runtime())
    assert update["keywords"] == ["EV battery recycling"]
    assert update["provenance"][0]["outcome"] == "fallback"
    assert "2 attempt" in update["provenance"][0]["reason"]
