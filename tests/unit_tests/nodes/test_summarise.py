from typing import Any

import pytest

from deskresearch.nodes.summarise import ChunkSummary, PageSummary, reduce_page, summarise_chunk
from tests.support.fakes import ScriptedChat, runtime

pytestmark = pytest.mark.anyio


def chunk_task(**kw: Any) -> Any:
    return {
        "url": "u",
        "title": "T",
        "queries": ["q"],
        "topic": "t",
        "language": "German",
        "index": 0,
        "chunk": "c",
        **kw,
    }


def page_state(notes: list[Any]) -> Any:
    page = {
        "url": "u",
        "title": "T",
        "site": "",
        "published": "",
        "date_read": "d",
        "queries": ["q"],
        "text_hash": "h",
        "origin": "page",
        "summary": "",
        "order": 0,
    }
    return {
        "url": "u",
        "title": "T",
        "queries": ["q"],
        "topic": "t",
        "language": "German",
        "page": page,
        "chunk_notes": notes,
    }


def note(i: int, relevant: bool, summary: str = "", error: str = "") -> Any:
    return {"index": i, "relevant": relevant, "summary": summary, "error": error}


async def test_summarise_chunk_passes_language_and_keeps_the_summary() -> None:
    llm = ScriptedChat({"summarise_chunk": [ChunkSummary(relevant=True, summary="95% recovered")]})
    update = await summarise_chunk(chunk_task(), runtime(), llm=llm)
    assert update["chunk_notes"] == [note(0, True, "95% recovered")]
    assert "German" in str(llm.calls[0][1][0].content)


async def test_summarise_chunk_treats_relevant_but_empty_as_not_relevant() -> None:
    llm = ScriptedChat({"summarise_chunk": [ChunkSummary(relevant=True, summary="  ")]})
    update = await summarise_chunk(chunk_task(), runtime(), llm=llm)
    assert update["chunk_notes"][0]["relevant"] is False


async def test_summarise_chunk_records_malformed_output() -> None:
    llm = ScriptedChat({"summarise_chunk": ["garbage"]})
    update = await summarise_chunk(chunk_task(index=2), runtime(), llm=llm)
    assert update["chunk_notes"][0]["error"] and update["provenance"][0]["outcome"] == "failed"


async def test_reduce_page_drops_a_page_with_no_relevant_chunk() -> None:
    update = await reduce_page(
        page_state([note(0, False), note(1, False)]), runtime(), llm=ScriptedChat()
    )
    assert "pages" not in update
    assert update["provenance"][0]["outcome"] == "not_relevant"
    assert "2 chunk(s)" in update["provenance"][0]["reason"]


async def test_reduce_page_uses_a_single_relevant_note_without_a_call() -> None:
    llm = ScriptedChat()
    update = await reduce_page(
        page_state([note(0, False), note(1, True, "fact")]), runtime(), llm=llm
    )
    assert update["pages"][0]["summary"] == "fact" and llm.calls == []


async def test_reduce_page_merges_several_notes_in_chunk_order_with_one_call() -> None:
    llm = ScriptedChat({"reduce_page": [PageSummary(summary="merged")]})
    update = await reduce_page(
        page_state([note(1, True, "second"), note(0, True, "first")]), runtime(), llm=llm
    )
    assert update["pages"][0]["summary"] == "merged"
    prompt = str(llm.calls[0][1][1].content)
    assert prompt.index("first") < prompt.index("second")


async def test_reduce_page_joins_notes_when_the_merge_is_malformed() -> None:
    llm = ScriptedChat({"reduce_page": ["garbage"]})
    update = await reduce_page(
        page_state([note(0, True, "a"), note(1, True, "b")]), runtime(), llm=llm
    )
    assert (
        update["pages"][0]["summary"] == "a\n\nb"
        and update["provenance"][0]["outcome"] == "fallback"
    )


async def test_a_chunk_too_long_for_the_window_is_summarised_in_halves() -> None:
    from deskresearch.errors import ContextLengthError

    text = "First half about lithium.\n\nSecond half about cobalt."
    llm = ScriptedChat(
        {
            "summarise_chunk": [
                ContextLengthError("too long", status=400),
                ChunkSummary(relevant=True, summary="lithium facts"),
                ChunkSummary(relevant=False, summary=""),
            ]
        }
    )
    update = await summarise_chunk(chunk_task(chunk=text), runtime(), llm=llm)
    asked = [m[-1].content for _, m in llm.calls[1:]]
    assert "lithium" in str(asked[0]) and "cobalt" not in str(asked[0])
    assert "cobalt" in str(asked[1]) and "lithium" not in str(asked[1])
    assert update["chunk_notes"][0]["summary"] == "lithium facts"
    assert update["chunk_notes"][0]["relevant"] is True
    assert [p["outcome"] for p in update["provenance"]] == ["fallback"]
    assert "2 parts" in update["provenance"][0]["reason"]
    assert len(update["usage"]) == 2


async def test_a_chunk_still_too_long_after_halving_fails_visibly() -> None:
    from deskresearch.errors import ContextLengthError

    llm = ScriptedChat({"summarise_chunk": [ContextLengthError("too long")] * 7})
    with pytest.raises(ContextLengthError):
        await summarise_chunk(chunk_task(chunk="a b c d e f g h"), runtime(), llm=llm)
    assert len(llm.calls) == 3, "whole chunk, first half, first quarter: then it gives up"
