"""reflect: after each round, what the facts answer, what is still missing, and what to search next.

One structured call reads every fact gathered so far (all rounds, compact) against the question
and the queries already run. Its follow-up queries start the next round, each tied to a gap and,
when it follows a lead, to the fact that names it. Code bounds the loop: ``max_rounds`` (1: no
call at all, today's single pass), ``followups_per_round``, the token budget (a round starts only
if what is left can pay for one like the last), and "no gaps left"; a query already run is never
asked again. The gaps left when the research stops go into the report's closing section.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.nodes.dedup_urls import ranked_pages
from deskresearch.nodes.fitting import fit_prompt, fitted_note
from deskresearch.progress import emit, note
from deskresearch.prompts import reflect as prompt
from deskresearch.records import Provenance, RoundQuery, RoundRecord, Usage
from deskresearch.services.base import ChatService, TokenCounter
from deskresearch.services.model.asking import ask
from deskresearch.services.model.tokens import served_window
from deskresearch.state import PageDigest, RankedQuery, ResearchState

OUTPUT_RESERVE = 1024  # tokens kept free for the answer on a local server's window


class Answered(BaseModel):
    """A part of the question the facts answer."""

    part: str = Field(description="The part of the question answered.")
    facts: list[int] = Field(default_factory=list, description="Numbers of the facts answering it.")


class FollowUp(BaseModel):
    """One search for the next round."""

    query: str = Field(description="The web search, at most 12 words.")
    gap: str = Field(description="The missing part it should fill.")
    lead: str = Field(default="", description="The name it follows, as the fact writes it; or ''.")
    fact: int | None = Field(default=None, description="The number of the fact naming the lead.")


class Reflection(BaseModel):
    """The model's answer to the reflection prompt."""

    answered: list[Answered] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list, description="What is still missing.")
    followups: list[FollowUp] = Field(default_factory=list, description="Next searches.")


def numbered_facts(
    pages: Sequence[PageDigest], ranked: Sequence[RankedQuery]
) -> list[tuple[str, str, int]]:
    """Every fact read so far as (claim, page URL, page number), pages in the plan's order.

    The plan's order, not the order branches claimed pages in: the same run asks the same
    question (and the cache can answer it).
    """
    place = {url: first for url, (first, _) in ranked_pages(ranked).items()}
    last = (len(place) + 1, 0, 0)
    ordered = sorted(pages, key=lambda p: (place.get(p["url"], last), p["round"], p["order"]))
    return [(f["claim"], p["url"], i) for i, p in enumerate(ordered, 1) for f in p["facts"]]


def _key(query: str) -> str:
    return " ".join(query.casefold().split())


def followups_of(
    answer: Reflection | None,
    facts: Sequence[tuple[str, str, int]],
    searched: Sequence[str],
    limit: int,
) -> tuple[list[RoundQuery], list[str]]:
    """The follow-ups worth a search (new, at most ``limit``), and why the others were dropped."""
    done = {_key(q) for q in searched}
    kept: list[RoundQuery] = []
    dropped: list[str] = []
    for f in answer.followups if answer else []:
        query = " ".join(f.query.split())[:200]
        if not query or _key(query) in done:
            dropped.append(f"{query!r}: already searched")
            continue
        if len(kept) >= limit:
            dropped.append(f"{query!r}: beyond followups_per_round={limit}")
            continue
        done.add(_key(query))
        named = facts[f.fact - 1] if f.fact and 1 <= f.fact <= len(facts) and f.lead else None
        kept.append(RoundQuery(
            query=query, gap=" ".join(f.gap.split())[:300],
            lead=" ".join(f.lead.split())[:200] if named else "",
            fact=named[0] if named else "", source=named[1] if named else "",
        ))  # fmt: skip
    return kept, dropped


def _why(q: RoundQuery, round_no: int) -> str:
    reason = f"round {round_no}: fills the gap {q['gap']!r}"
    if q["lead"]:
        reason += (
            f"; follows the lead {q['lead']!r} named by the fact {q['fact']!r} ({q['source']})"
        )
    return reason


def _tokens(usage: Sequence[Usage]) -> int:
    return sum(u["input_tokens"] + u["output_tokens"] for u in usage)


def _round_record(
    state: ResearchState, *, answered: list[str], gaps: list[str], tokens: int
) -> RoundRecord:
    """The record of the round that just ended (its queries, pages read, time taken)."""
    return RoundRecord(
        round=state["round"],
        queries=round_queries(state),
        pages=sum(1 for p in state["pages"] if p["round"] == state["round"]),
        answered=answered,
        gaps=gaps,
        tokens=tokens,
        seconds=round(time.time() - state["round_started"], 3),
    )


def round_queries(state: ResearchState) -> list[RoundQuery]:
    """The queries of the round that just ended: the plan in round 1, else the follow-ups."""
    if state["round"] > 1:
        return list(state["followups"])
    return [RoundQuery(query=q, gap="", lead="", fact="", source="") for q in state["queries"]]


def _stop_for_budget(ctx: Context, state: ResearchState, *, tokens: int, spent: int, n: int) -> str:
    """Why the budget cannot pay for another round of ``n`` queries ("" when it can).

    A round is estimated from this one (``tokens``), per query; ``spent``: the run so far.
    """
    if not ctx.token_budget:
        return ""
    queries = max(len(round_queries(state)), 1)
    estimate = tokens * n // queries
    left = ctx.token_budget - spent
    if estimate > left:
        return f"a round of {n} queries costs about {estimate} tokens; the budget has {left} left"
    return ""


async def reflect(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService, tokens: TokenCounter
) -> dict[str, Any]:
    """Close the round: record it, find the gaps, and plan the next round's searches (if any)."""
    ctx = resolve(runtime)
    round_no, last = state["round"], state["round"] >= ctx.max_rounds
    facts = numbered_facts(state["pages"], state["ranked"])
    searched = [*state["keywords"], *state["queries"]]
    answer, usage = None, []
    provenance: list[Provenance] = []
    if ctx.max_rounds > 1 and not state.get("budget_stopped"):
        spec = ctx.report_spec()

        def render(pages: list[list[tuple[str, str, int]]]) -> list[BaseMessage]:
            return prompt.render(
                topic=state["topic"],
                queries=searched,
                facts=[(claim, page) for listed in pages for claim, _, page in listed],
                allowed=0 if last else ctx.followups_per_round,
                language=state["language"],
            )

        by_page = [list(g) for _, g in groupby(facts, key=lambda f: f[2])]
        messages, fitted = await fit_prompt(
            by_page, render, window=served_window(ctx, spec), reserve=OUTPUT_RESERVE, tokens=tokens
        )
        facts = [f for page in fitted.groups for f in page]  # the numbers the model sees
        provenance = fitted_note("reflect", state["topic"], fitted, ctx, spec, group="page")
        asked = await ask(llm, messages, Reflection, spec=spec, stage="reflect")
        answer, usage = asked.value, asked.usage
    gaps = [" ".join(g.split())[:300] for g in (answer.gaps if answer else []) if g.strip()]
    spent = _tokens(state.get("usage") or []) + _tokens(usage)
    this_round = spent - sum(r["tokens"] for r in state["rounds"])
    answered = [" ".join(a.part.split())[:300] for a in answer.answered] if answer else []
    record = _round_record(state, answered=answered, gaps=gaps, tokens=this_round)
    followups, dropped = ([], []) if last else followups_of(
        answer, facts, searched, ctx.followups_per_round
    )  # fmt: skip
    provenance += [note("reflect", state["topic"], "skipped", d) for d in dropped]
    if followups and (why := _stop_for_budget(ctx, state, tokens=this_round, spent=spent,
                                              n=len(followups))):  # fmt: skip
        provenance.append(
            note("reflect", state["topic"], "skipped", f"no round {round_no + 1}: {why}")
        )
        followups = []
    emit(runtime, "reflect", "finished", round=round_no, rounds=ctx.max_rounds, gaps=len(gaps),
         followups=[q["query"] for q in followups])  # fmt: skip
    update: dict[str, Any] = {"rounds": [*state["rounds"], record], "usage": usage}
    if not followups:
        return {**update, "followups": [], "open_gaps": gaps, "provenance": provenance}
    provenance += [
        note("reflect", q["query"], "followup", _why(q, round_no + 1)) for q in followups
    ]
    return {
        **update,
        "round": round_no + 1,
        "round_started": time.time(),
        "followups": followups,
        "queries": [*state["queries"], *(q["query"] for q in followups)],
        "open_gaps": [],
        "provenance": provenance,
    }


def reflect_failed(state: ResearchState, error: NodeError) -> Command[Any]:
    """The reflection call failed for good: no further round; the report is written from what is read."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    reason = f"no further round: the reflection call failed ({error.error})"
    record = _round_record(state, answered=[], gaps=[], tokens=0)
    return Command(
        update={
            "rounds": [*state["rounds"], record],
            "followups": [],
            "open_gaps": [],
            "provenance": [note("reflect", state["topic"], "failed", reason)],
        },
        goto="brief_writers",
    )
