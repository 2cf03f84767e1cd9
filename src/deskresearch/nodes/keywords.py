"""generate_keywords and keywords_fallback: what to search first."""

from __future__ import annotations

from datetime import date
from typing import Any

from langgraph.runtime import Runtime

from deskresearch.config.context import Context, resolve
from deskresearch.progress import emit, note
from deskresearch.prompts import keywords as prompt
from deskresearch.prompts.keywords import Keywords
from deskresearch.services.base import ChatService
from deskresearch.services.model.asking import ask
from deskresearch.state import ResearchState
from deskresearch.text.clean import unique_phrases

__all__ = ["Keywords", "generate_keywords", "keywords_fallback"]


async def generate_keywords(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Ask the model for up to ``max_keywords`` keywords; empty keywords mean 'try again'."""
    ctx = resolve(runtime)
    attempt = state["keyword_attempts"] + 1
    messages = prompt.render(
        topic=state["topic"], max_keywords=ctx.max_keywords, today=date.today()
    )
    answer = await ask(llm, messages, Keywords, spec=ctx.summary_spec(), stage="generate_keywords")
    keywords = unique_phrases(answer.value.keywords, ctx.max_keywords) if answer.value else []
    problem = answer.problem or ("" if keywords else "the model proposed no usable keyword")
    provenance = []
    if problem:
        provenance.append(
            note("generate_keywords", state["topic"], "failed", f"attempt {attempt}: {problem}")
        )
    emit(runtime, "generate_keywords", "finished", keywords=keywords, attempt=attempt)
    return {
        "keywords": keywords,
        "keyword_attempts": attempt,
        "usage": answer.usage,
        "provenance": provenance,
    }


async def keywords_fallback(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Search the topic itself after the model failed to propose keywords."""
    reason = (
        f"no usable keywords after {state['keyword_attempts']} attempt(s); "
        "searching the topic itself"
    )
    emit(runtime, "keywords_fallback", "finished", keywords=[state["topic"]])
    return {
        "keywords": [state["topic"]],
        "provenance": [note("keywords_fallback", state["topic"], "fallback", reason)],
    }
