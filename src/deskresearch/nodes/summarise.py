"""summarise_chunk (map, one branch per chunk) and reduce_page (one summary per page)."""

from __future__ import annotations

from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.asking import Answer, ask
from deskresearch.context import Context, resolve
from deskresearch.errors import ContextLengthError, ServiceError
from deskresearch.progress import emit, note
from deskresearch.prompts import summarise as prompt
from deskresearch.services.base import ChatService
from deskresearch.state import ChunkNote, ChunkTask, PageState


class ChunkSummary(BaseModel):
    """The model's answer for one chunk."""

    relevant: bool = Field(description="Whether the text bears on the topic or the queries.")
    summary: str = Field(description="The facts, numbers and statistics that bear on them.")


class PageSummary(BaseModel):
    """The model's merged summary of one page."""

    summary: str = Field(description="One summary of the page, every fact kept.")


def _note(index: int, *, relevant: bool = False, summary: str = "", error: str = "") -> ChunkNote:
    return ChunkNote(index=index, relevant=relevant, summary=summary, error=error)


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
    except ContextLengthError:
        if depth >= MAX_HALVINGS:
            raise
    parts = [await _ask_chunk(llm, state, ctx, half, depth + 1) for half in halve(chunk)]
    answers = [a for a, _ in parts]
    found = [a.value for a in answers if a.value is not None]
    relevant = [v.summary.strip() for v in found if v.relevant and v.summary.strip()]
    merged = ChunkSummary(relevant=bool(relevant), summary="\n\n".join(relevant))
    usage = [u for a in answers for u in a.usage]
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
    summary = answer.value.summary.strip()
    relevant = answer.value.relevant and bool(summary)
    emit(
        runtime,
        "summarise_chunk",
        "finished",
        url=state["url"],
        index=state["index"],
        relevant=relevant,
    )
    return {
        "chunk_notes": [_note(state["index"], relevant=relevant, summary=summary)],
        "usage": answer.usage,
        "provenance": provenance,
    }


def summarise_failed(state: ChunkTask, error: NodeError) -> Command[Any]:
    """Record a chunk whose model call failed for good; the page keeps its other chunks."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    reason = f"chunk {state['index']}: {error.error}"
    return Command(
        update={
            "chunk_notes": [_note(state["index"], error=str(error.error))],
            "provenance": [note("summarise_chunk", state["url"], "failed", reason)],
        }
    )


def _relevant_summaries(state: PageState) -> list[str]:
    notes = sorted(state["chunk_notes"], key=lambda n: n["index"])
    return [n["summary"] for n in notes if n["relevant"]]


def _not_relevant(state: PageState) -> dict[str, Any]:
    notes = state["chunk_notes"]
    failed = sum(1 for n in notes if n["error"])
    reason = f"not relevant: no part of the page bears on the queries ({len(notes)} chunk(s) read"
    reason += f", {failed} failed)" if failed else ")"
    return {"provenance": [note("reduce_page", state["url"], "not_relevant", reason)]}


async def reduce_page(
    state: PageState, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Merge the relevant chunk notes of one page; drop the page when none is relevant."""
    ctx = resolve(runtime)
    summaries = _relevant_summaries(state)
    page = state.get("page")
    if not summaries or page is None:
        emit(runtime, "reduce_page", "dropped", url=state["url"])
        return _not_relevant(state)
    usage, provenance = [], []
    if len(summaries) == 1:
        summary = summaries[0]
    else:
        messages = prompt.render_reduce(
            topic=state["topic"],
            queries=state["queries"],
            url=state["url"],
            title=page["title"],
            notes=summaries,
            language=state["language"],
        )
        answer = await ask(llm, messages, PageSummary, spec=ctx.summary_spec(), stage="reduce_page")
        usage = answer.usage
        summary = answer.value.summary.strip() if answer.value else ""
        if not summary:
            summary = "\n\n".join(summaries)
            problem = answer.problem or "reduce_page: empty summary"
            provenance.append(
                note("reduce_page", state["url"], "fallback", f"{problem}; joining the chunk notes")
            )
    emit(runtime, "reduce_page", "finished", url=state["url"], chunks=len(summaries))
    return {"pages": [{**page, "summary": summary}], "usage": usage, "provenance": provenance}


def reduce_failed(state: PageState, error: NodeError) -> Command[Any]:
    """Join the chunk notes when the merge call failed for good."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    summaries, page = _relevant_summaries(state), state.get("page")
    if not summaries or page is None:
        return Command(update=_not_relevant(state))
    reason = f"{error.error}; joining the chunk notes"
    return Command(
        update={
            "pages": [{**page, "summary": "\n\n".join(summaries)}],
            "provenance": [note("reduce_page", state["url"], "fallback", reason)],
        }
    )
