from collections.abc import Sequence
from typing import Any

import pytest

from deskresearch.config.context import Context
from deskresearch.nodes.summarise import (
    MAX_FACTS,
    ChunkSummary,
    FactItem,
    PageFacts,
    reduce_page,
    summarise_chunk,
)
from tests.support.fakes import ScriptedChat, runtime

pytestmark = pytest.mark.anyio

CHUNK = (
    "Das Umweltbundesamt meldet, dass 95 Prozent der Bleibatterien recycelt werden. "
    "Bei Lithium-Ionen-Akkus liegt die Quote deutlich niedriger."
)


def chunk_task(**kw: Any) -> Any:
    return {
        "url": "u",
        "title": "T",
        "queries": ["q"],
        "topic": "t",
        "language": "German",
        "index": 0,
        "chunk": CHUNK,
        **kw,
    }


def fact(claim: str, quote: str) -> FactItem:
    return FactItem(claim=claim, quote=quote)


def page_state(notes: list[Any], text: str = CHUNK) -> Any:
    page = {
        "url": "u",
        "title": "T",
        "site": "",
        "published": "",
        "date_read": "d",
        "queries": ["q"],
        "text_hash": "h",
        "origin": "page",
        "facts": [],
        "order": 0,
        "text": text,
        "language": "de",
        "round": 1,
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


def note(i: int, relevant: bool, facts: Sequence[tuple[str, str]] = (), error: str = "") -> Any:
    return {
        "index": i,
        "relevant": relevant,
        "facts": [{"claim": c, "quote": q} for c, q in facts],
        "error": error,
    }


async def test_summarise_chunk_keeps_facts_whose_quote_is_in_the_chunk() -> None:
    answer = ChunkSummary(
        relevant=True,
        facts=[
            fact(
                "95 % der Bleibatterien werden recycelt.",
                "dass 95 Prozent der Bleibatterien recycelt werden",
            )
        ],
    )
    llm = ScriptedChat({"summarise_chunk": [answer]})
    update = await summarise_chunk(chunk_task(), runtime(), llm=llm)
    assert update["chunk_notes"][0]["facts"] == [
        {
            "claim": "95 % der Bleibatterien werden recycelt.",
            "quote": "dass 95 Prozent der Bleibatterien recycelt werden",
        }
    ]
    assert update["chunk_notes"][0]["relevant"] is True
    assert "German" in str(llm.calls[0][1][0].content)


async def test_summarise_chunk_drops_a_fact_whose_quote_is_not_in_the_chunk_and_says_so() -> None:
    answer = ChunkSummary(
        relevant=True,
        facts=[
            fact("97 %", "dass 97 Prozent der Bleibatterien recycelt werden"),  # figure changed
            fact("lower", "Bei Lithium-Ionen-Akkus liegt die Quote deutlich niedriger"),
        ],
    )
    update = await summarise_chunk(
        chunk_task(), runtime(), llm=ScriptedChat({"summarise_chunk": [answer]})
    )
    assert [f["claim"] for f in update["chunk_notes"][0]["facts"]] == ["lower"]
    [unverified] = [p for p in update["provenance"] if p["outcome"] == "unverified"]
    assert "1 fact(s)" in unverified["reason"] and "97 Prozent" in unverified["reason"]


async def test_summarise_chunk_with_no_verifiable_fact_is_not_relevant() -> None:
    answer = ChunkSummary(relevant=True, facts=[fact("made up", "a sentence that is not there")])
    update = await summarise_chunk(
        chunk_task(), runtime(), llm=ScriptedChat({"summarise_chunk": [answer]})
    )
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


async def test_reduce_page_keeps_few_facts_in_chunk_order_without_a_call() -> None:
    llm = ScriptedChat()
    state = page_state(
        [note(1, True, [("b", "quote b")]), note(0, True, [("a", "quote a")]), note(2, False)]
    )
    update = await reduce_page(state, runtime(), llm=llm)
    assert [f["claim"] for f in update["pages"][0]["facts"]] == ["a", "b"] and llm.calls == []


def _many(n: int) -> tuple[str, list[tuple[str, str]]]:
    sentences = [f"Messpunkt {i} zeigt einen Anstieg um {i} Prozent im Jahr." for i in range(n)]
    return " ".join(sentences), [(f"claim {i}", s.rstrip(".")) for i, s in enumerate(sentences)]


async def test_reduce_page_asks_the_model_to_choose_when_there_are_too_many_and_checks_its_quotes() -> (
    None
):
    text, facts = _many(MAX_FACTS + 3)
    chosen = PageFacts(
        facts=[fact(c, q) for c, q in facts[:2]] + [fact("x", "Messpunkt 99 zeigt einen Anstieg")]
    )
    llm = ScriptedChat({"reduce_page": [chosen]})
    update = await reduce_page(page_state([note(0, True, facts)], text), runtime(), llm=llm)
    assert [f["claim"] for f in update["pages"][0]["facts"]] == ["claim 0", "claim 1"]
    assert any(p["outcome"] == "unverified" for p in update["provenance"])
    assert "Messpunkt 7" in str(llm.calls[0][1][1].content)


async def test_reduce_page_keeps_the_first_facts_when_the_choice_is_malformed() -> None:
    text, facts = _many(MAX_FACTS + 3)
    llm = ScriptedChat({"reduce_page": ["garbage"]})
    update = await reduce_page(page_state([note(0, True, facts)], text), runtime(), llm=llm)
    assert [f["claim"] for f in update["pages"][0]["facts"]] == [c for c, _ in facts[:MAX_FACTS]]
    assert update["provenance"][0]["outcome"] == "fallback"


async def test_a_chunk_too_long_for_the_window_is_summarised_in_halves() -> None:
    from deskresearch.errors import ContextLengthError

    text = (
        "First half says lithium is recovered here.\n\nSecond half says cobalt is recovered there."
    )
    llm = ScriptedChat(
        {
            "summarise_chunk": [
                ContextLengthError("too long", status=400),
                ChunkSummary(relevant=True, facts=[fact("lithium", "lithium is recovered here")]),
                ChunkSummary(relevant=False),
            ]
        }
    )
    update = await summarise_chunk(chunk_task(chunk=text), runtime(), llm=llm)
    asked = [m[-1].content for _, m in llm.calls[1:]]
    assert "lithium" in str(asked[0]) and "cobalt" not in str(asked[0])
    assert "cobalt" in str(asked[1]) and "lithium" not in str(asked[1])
    assert [f["claim"] for f in update["chunk_notes"][0]["facts"]] == ["lithium"]
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


async def test_a_piece_a_local_server_cut_silently_is_read_again_in_halves() -> None:
    """Ollama cut the prompt and answered; the count gave it away, and the halves fit."""
    from tests.support.fake_model import FakeModel, chat_over

    paragraph = "Lithium is recovered from black mass by hydrometallurgy at the Hamburg plant. "
    piece = "\n\n".join(paragraph * 6 for _ in range(40))  # ~4,800 tokens with the prompt
    model = FakeModel(context_tokens=4096)
    ollama = runtime(Context(summary_model="ollama:llama3.1"))
    update = await summarise_chunk(chunk_task(chunk=piece), ollama, llm=chat_over(model))
    assert len(model.requests) == 3, "the whole piece, then its two halves"
    assert [p["outcome"] for p in update["provenance"]] == ["fallback"]
    assert "2 parts" in update["provenance"][0]["reason"]
    assert update["chunk_notes"][0]["relevant"] is True and update["chunk_notes"][0]["facts"]
    assert sum(u["calls"] for u in update["usage"]) == 3, "the cut call's tokens count too"
