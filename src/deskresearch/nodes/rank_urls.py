"""rank_urls: the model keeps and orders one query's hits; code checks the order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ModelOutputError, ServiceError, budget_update
from deskresearch.nodes.branch_state import QueryState
from deskresearch.progress import emit, note
from deskresearch.prompts import rank_urls as prompt
from deskresearch.records import Provenance, SearchHit
from deskresearch.services.base import ChatService, RankFunc
from deskresearch.services.model.asking import ask


class Ranking(BaseModel):
    """The model's answer to the ranking prompt."""

    indices: list[int] = Field(description="Indices of the kept results, best first.")


def checked_order(indices: Sequence[int], n: int) -> list[int]:
    """Return ``indices`` if non-empty, unique and within range(n); raise ModelOutputError otherwise."""
    if not indices:
        raise ModelOutputError("rank_urls: the model kept no result")
    if len(set(indices)) != len(indices) or any(not 0 <= i < n for i in indices):
        raise ModelOutputError(f"rank_urls: indices invalid for {n} results: {list(indices)}")
    return list(indices)


def keep(
    state: QueryState, order: Sequence[int], limit: int, rank_func: RankFunc | None, why: str
) -> dict[str, Any]:
    """Keep the first ``limit`` hits in ``order`` and record why every other hit was dropped."""
    hits, query = state["hits"], state["query"]
    by_model = [hits[i] for i in order]
    ordered = by_model
    if rank_func is not None:
        ordered = [h for h in rank_func(by_model) if h in by_model]
    kept = ordered[:limit]
    kept_urls = {h["url"] for h in kept}
    considered = {h["url"] for h in ordered}
    model_kept = {h["url"] for h in by_model}

    def reason(url: str) -> str:
        if url in considered:
            return f"ranked below the top {limit}"
        return "removed by the custom rank function" if url in model_kept else why

    dropped: list[Provenance] = [
        note("rank_urls", h["url"], "not_relevant", f"{reason(h['url'])} for query {query!r}")
        for h in hits
        if h["url"] not in kept_urls
    ]
    ranked = {"query": query, "order": state["order"], "hits": kept, "round": state["round"]}
    return {"ranked": [ranked], "provenance": dropped}


async def rank_urls(
    state: QueryState,
    runtime: Runtime[Context],
    *,
    llm: ChatService,
    rank_func: RankFunc | None = None,
) -> dict[str, Any]:
    """Keep the best ``url_per_query`` hits of one query, best first."""
    ctx = resolve(runtime)
    hits: list[SearchHit] = state["hits"]
    if not hits:
        empty = {
            "query": state["query"],
            "order": state["order"],
            "hits": [],
            "round": state["round"],
        }
        return {"ranked": [empty]}
    messages = prompt.render(
        topic=state["topic"], query=state["query"], hits=hits, today=date.today()
    )
    answer = await ask(llm, messages, Ranking, spec=ctx.summary_spec(), stage="rank_urls")
    notes = []
    try:
        if answer.value is None:
            raise ModelOutputError(answer.problem)
        order = checked_order(answer.value.indices, len(hits))
    except ModelOutputError as exc:
        # The engine's order is a fair ranking; dropping the query would lose its sources.
        order = list(range(len(hits)))
        notes.append(
            note("rank_urls", state["query"], "fallback", f"{exc}; using the engine's order")
        )
    update = keep(state, order, ctx.url_per_query, rank_func, "dropped by the model's ranking")
    emit(
        runtime,
        "rank_urls",
        "finished",
        query=state["query"],
        kept=len(update["ranked"][0]["hits"]),
    )
    return {**update, "usage": answer.usage, "provenance": notes + update["provenance"]}


def rank_failed(state: QueryState, error: NodeError, runtime: Runtime[Context]) -> Command[Any]:
    """Keep the engine's order when the ranking call failed for good (after retries)."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    ctx = resolve(runtime)
    update = keep(state, range(len(state["hits"])), ctx.url_per_query, None, "not reached")
    fallback = note(
        "rank_urls", state["query"], "fallback", f"{error.error}; using the engine's order"
    )
    update |= budget_update(error.error)
    return Command(
        update={**update, "provenance": [fallback, *update["provenance"]]}, goto="claim_pages"
    )
