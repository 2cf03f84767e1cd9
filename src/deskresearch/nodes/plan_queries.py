"""plan_queries: decompose the topic into research queries, with a prompt that fits the model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.progress import emit, note
from deskresearch.prompts import plan_queries as prompt
from deskresearch.services.base import ChatService, TokenCounter
from deskresearch.services.model.asking import ask
from deskresearch.services.model.tokens import summary_window
from deskresearch.state import KeywordHits, ResearchState
from deskresearch.text.clean import unique_phrases

OUTPUT_RESERVE = 1024  # tokens kept free for the answer
MIN_RESULTS_BUDGET = 256  # even a tiny or unknown window gets some results


class QueryPlan(BaseModel):
    """The model's answer to the planning prompt."""

    queries: list[str] = Field(description="Research queries, most important first.")


def result_groups(keyword_hits: Sequence[KeywordHits]) -> list[tuple[str, list[str]]]:
    """Turn keyword results into (keyword, one line per hit) groups."""
    return [
        (
            kh["keyword"],
            [
                f"{h['title']} — {' '.join(h['snippet'].split())[:300]} <{h['url']}>"
                for h in kh["hits"]
            ],
        )
        for kh in keyword_hits
    ]


def fit_results(groups: Sequence[tuple[str, Sequence[str]]], fits: Callable[[str], bool]) -> str:
    """Drop the last item of the longest result list until the rendered block fits (MetaGPT's rule)."""
    work = [(k, list(lines)) for k, lines in groups]
    while True:
        block = prompt.format_results(work)
        if fits(block) or not any(lines for _, lines in work):
            return block
        longest = max(work, key=lambda g: len(g[1]))
        longest[1].pop()


def results_budget(ctx: Context, topic: str) -> int:
    """Tokens the results block may use: the window minus the rest of the prompt and the answer."""
    window = summary_window(ctx)
    frame = prompt.render(
        topic=topic, results="", max_queries=ctx.decomposition_nums, today=date.today()
    )
    # A UTF-8 byte count bounds the token count from above: no tokenizer load needed here.
    used = sum(len(str(m.content).encode("utf-8")) for m in frame)
    return max(window - OUTPUT_RESERVE - used, MIN_RESULTS_BUDGET)


def search_failures(keyword_hits: Sequence[KeywordHits]) -> list[str]:
    """Why each keyword search failed, when every one did (else [], nothing to report)."""
    errors = [kh["error"] for kh in keyword_hits]
    return errors if errors and all(errors) else []


async def plan_queries(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService, tokens: TokenCounter
) -> dict[str, Any]:
    """Ask for up to ``decomposition_nums`` queries; fall back to the keywords.

    When every keyword search failed, no query is planned (and no call made): the searches
    of the plan would fail the same way, and the run ends insufficient_evidence saying why.
    """
    ctx = resolve(runtime)
    topic = state["topic"]
    if failures := search_failures(state["keyword_hits"]):
        reason = f"every keyword search failed ({failures[0]}): no query planned"
        emit(runtime, "plan_queries", "finished", queries=[])
        return {"queries": [], "provenance": [note("plan_queries", topic, "failed", reason)]}
    budget = results_budget(ctx, topic)
    block = fit_results(result_groups(state["keyword_hits"]), lambda b: tokens.fits(b, budget))
    messages = prompt.render(
        topic=topic, results=block, max_queries=ctx.decomposition_nums, today=date.today()
    )
    answer = await ask(llm, messages, QueryPlan, spec=ctx.summary_spec(), stage="plan_queries")
    queries = unique_phrases(answer.value.queries, ctx.decomposition_nums) if answer.value else []
    problem = answer.problem or ("" if queries else "the model proposed no usable query")
    provenance = []
    if problem:
        queries = unique_phrases(state["keywords"], ctx.decomposition_nums)
        provenance.append(note("plan_queries", topic, "fallback", f"{problem}; using the keywords"))
    emit(runtime, "plan_queries", "finished", queries=queries)
    return {"queries": queries, "usage": answer.usage, "provenance": provenance}
