"""summarise_chunk (map: a chunk's facts, each with its quote) and reduce_page (a page's facts).

A fact is kept only when code finds its quote in the text it was taken from
(grounding.quotes): the writer later cites facts, so every citation rests on words we read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ContextLengthError, ServiceError, budget_update
from deskresearch.grounding.quotes import find_quote, normalise
from deskresearch.nodes.branch_state import ChunkTask, PageState
from deskresearch.progress import emit, note
from deskresearch.prompts import summarise as prompt
from deskresearch.records import Fact, Provenance
from deskresearch.services.base import ChatService
from deskresearch.services.model.asking import Answer, ask
from deskresearch.state import ChunkNote, PageDigest


class FactItem(BaseModel):
    """One fact and the words of the text that state it."""

    claim: str = Field(description="The fact, in the report's language, one sentence.")
    quote: str = Field(description="The words of the text that state it, copied exactly.")


class ChunkSummary(BaseModel):
    """The model's answer for one chunk."""

    relevant: bool = Field(description="Whether the text bears on the topic or the queries.")
    facts: list[FactItem] = Field(
        default_factory=list, description="The facts that bear on them, each with its quote."
    )


class PageFacts(BaseModel):
    """The facts the model keeps for one page."""

    facts: list[FactItem] = Field(description="The kept facts, each with its quote as given.")


MAX_FACTS = 12  # facts one source carries into the report prompt; more are chosen by the model


def _note(
    index: int, *, relevant: bool = False, facts: list[Fact] | None = None, error: str = ""
) -> ChunkNote:
    return ChunkNote(index=index, relevant=relevant, facts=facts or [], error=error)


def checked_facts(items: Sequence[FactItem], text: str) -> tuple[list[Fact], list[str]]:
    """Split the model's facts into those whose quote is in ``text`` and the quotes that are not.

    A fact with no claim, or a repeat of a quote already kept, is dropped silently.
    """
    kept: list[Fact] = []
    missing: list[str] = []
    seen: set[str] = set()
    for item in items:
        claim, quote = " ".join(item.claim.split()), " ".join(item.quote.split())
        if not claim or normalise(quote) in seen:
            continue
        if find_quote(quote, text):
            seen.add(normalise(quote))
            kept.append(Fact(claim=claim, quote=quote))
        else:
            missing.append(quote)
    return kept, missing


def _unverified(url: str, where: str, missing: Sequence[str]) -> list[Provenance]:
    if not missing:
        return []
    sample = "; ".join(repr(q[:80]) for q in missing[:3])
    reason = f"{len(missing)} fact(s) dropped from {where}: quote not in the page text ({sample})"
    return [note("summarise_chunk", url, "unverified", reason)]


MAX_HALVINGS = 2  # a chunk too long for the model is split in halves at most twice (4 parts)


def halve(text: str) -> list[str]:
    """Split ``text`` in two at the paragraph, line or sentence break nearest its middle."""
    middle = len(text) // 2
    for sep in ("\n\n", "\n", ". ", " "):
        left, right = text.rfind(sep, 0, middle), text.find(sep, middle)
        cuts = [c for c in (left, right) if c > 0]
        if cuts:
            cut = min(cuts, key=lambda c: abs(c - middle)) + len(sep)
            return [text[:cut], text[cut:]]
    return [text[:middle], text[middle:]]


async def _ask_chunk(
    llm: ChatService, state: ChunkTask, ctx: Context, chunk: str, depth: int = 0
) -> tuple[Answer[ChunkSummary], int]:
    """Ask for one chunk's summary; a chunk too long for the window is asked in halves.

    Returns the (merged) answer and how many parts the chunk was asked in.
    """
    messages = prompt.render_chunk(
        topic=state["topic"],
        queries=state["queries"],
        url=state["url"],
        title=state["title"],
        chunk=chunk,
        language=state["language"],
    )
    try:
        answer = await ask(
            llm, messages, ChunkSummary, spec=ctx.summary_spec(), stage="summarise_chunk"
        )
        return answer, 1
    except ContextLengthError as exc:
        if depth >= MAX_HALVINGS:
            raise
        cut = [exc.usage] if exc.usage else []  # a server that cut the prompt still answered
    parts = [await _ask_chunk(llm, state, ctx, half, depth + 1) for half in halve(chunk)]
    answers = [a for a, _ in parts]
    found = [a.value for a in answers if a.value is not None]
    facts = [f for v in found if v.relevant for f in v.facts]
    merged = ChunkSummary(relevant=bool(facts), facts=facts)
    usage = cut + [u for a in answers for u in a.usage]
    problem = "; ".join(a.problem for a in answers if a.problem)
    return Answer(merged if found else None, usage, problem), sum(n for _, n in parts)


async def summarise_chunk(
    state: ChunkTask, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Summarise one chunk, or mark it not relevant."""
    ctx = resolve(runtime)
    answer, parts = await _ask_chunk(llm, state, ctx, state["chunk"])
    provenance = []
    if parts > 1:
        reason = (
            f"chunk {state['index']} exceeded the model's context window: asked in {parts} parts"
        )
        provenance.append(note("summarise_chunk", state["url"], "fallback", reason))
    if answer.value is None:
        reason = f"chunk {state['index']}: {answer.problem}"
        return {
            "chunk_notes": [_note(state["index"], error=answer.problem)],
            "provenance": [*provenance, note("summarise_chunk", state["url"], "failed", reason)],
            "usage": answer.usage,
        }
    facts, missing = checked_facts(
        answer.value.facts if answer.value.relevant else [], state["chunk"]
    )
    provenance += _unverified(state["url"], f"chunk {state['index']}", missing)
    relevant = answer.value.relevant and bool(facts)
    emit(
        runtime,
        "summarise_chunk",
        "finished",
        url=state["url"],
        index=state["index"],
        relevant=relevant,
        facts=len(facts),
        dropped=len(missing),
    )
    return {
        "chunk_notes": [_note(state["index"], relevant=relevant, facts=facts)],
        "usage": answer.usage,
        "provenance": provenance,
    }


def summarise_failed(state: ChunkTask, error: NodeError) -> Command[Any]:
    """Record a chunk whose model call failed for good; the page keeps its other chunks.

    The branch goes on to reduce_page as a finished one would, so a page whose every chunk
    failed is still accounted for (an error handler's branch has no edges of its own).
    """
    if not isinstance(error.error, ServiceError):
        raise error.error
    reason = f"chunk {state['index']}: {error.error}"
    return Command(
        update={
            "chunk_notes": [_note(state["index"], error=str(error.error))],
            "provenance": [note("summarise_chunk", state["url"], "failed", reason)],
            **budget_update(error.error),
        },
        goto="reduce_page",
    )


def _chunk_facts(state: PageState) -> list[Fact]:
    """The facts of the relevant chunks, in page order, each quote once."""
    notes = sorted(state["chunk_notes"], key=lambda n: n["index"])
    facts: dict[str, Fact] = {}
    for n in notes:
        if n["relevant"]:
            for f in n["facts"]:
                facts.setdefault(normalise(f["quote"]), f)
    return list(facts.values())


def _not_relevant(state: PageState) -> dict[str, Any]:
    notes = state["chunk_notes"]
    failed = sum(1 for n in notes if n["error"])
    if notes and failed == len(notes):
        reason = f"not summarised: every chunk's model call failed ({notes[0]['error']})"
        return {"provenance": [note("reduce_page", state["url"], "failed", reason)]}
    reason = f"not relevant: no part of the page bears on the queries ({len(notes)} chunk(s) read"
    reason += f", {failed} failed)" if failed else ")"
    return {"provenance": [note("reduce_page", state["url"], "not_relevant", reason)]}


def _with_facts(page: PageDigest, facts: list[Fact]) -> PageDigest:
    return {**page, "facts": facts}


async def reduce_page(
    state: PageState, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Keep a page's facts; drop the page when no chunk had one.

    Up to MAX_FACTS facts are kept as they are (no call); beyond that the model chooses, and
    code checks that every quote it keeps is still one of the page's.
    """
    ctx = resolve(runtime)
    facts = _chunk_facts(state)
    page = state.get("page")
    if not facts or page is None:
        emit(runtime, "reduce_page", "dropped", url=state["url"])
        return _not_relevant(state)
    usage, provenance = [], []
    if len(facts) > MAX_FACTS:
        messages = prompt.render_reduce(
            topic=state["topic"],
            queries=state["queries"],
            url=state["url"],
            title=page["title"],
            facts=facts,
            max_facts=MAX_FACTS,
            language=state["language"],
        )
        answer = await ask(llm, messages, PageFacts, spec=ctx.summary_spec(), stage="reduce_page")
        usage = answer.usage
        chosen, missing = checked_facts(answer.value.facts if answer.value else [], page["text"])
        provenance += _unverified(state["url"], "the page's merged facts", missing)
        if chosen:
            facts = chosen[:MAX_FACTS]
        else:
            problem = answer.problem or "reduce_page: no fact kept"
            reason = f"{problem}; keeping the first {MAX_FACTS} facts"
            provenance.append(note("reduce_page", state["url"], "fallback", reason))
            facts = facts[:MAX_FACTS]
    emit(runtime, "reduce_page", "finished", url=state["url"], facts=len(facts))
    return {"pages": [_with_facts(page, facts)], "usage": usage, "provenance": provenance}


def reduce_failed(state: PageState, error: NodeError) -> Command[Any]:
    """Keep the page's first facts when the choosing call failed for good."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    facts, page = _chunk_facts(state), state.get("page")
    if not facts or page is None:
        return Command(update=_not_relevant(state))
    reason = f"{error.error}; keeping the first {MAX_FACTS} facts"
    return Command(
        update={
            "pages": [_with_facts(page, facts[:MAX_FACTS])],
            "provenance": [note("reduce_page", state["url"], "fallback", reason)],
            **budget_update(error.error),
        }
    )
