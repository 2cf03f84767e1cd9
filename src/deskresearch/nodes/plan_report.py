"""plan_report: the report's outline, so its sections can be written at the same time.

Code keeps the outline honest: sections name only sources in the ledger, every source serves
some section (an unused one joins the middle section that shares most words with it), and the
number of sections stays within bounds. An outline that cannot be used sends the run to
write_report (one call for the whole report).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ContextLengthError, ServiceError
from deskresearch.nodes.fitting import fit_sources, fitted_note
from deskresearch.progress import emit, note
from deskresearch.prompts import plan_report as prompt
from deskresearch.records import Source
from deskresearch.services.base import ChatService, TokenCounter
from deskresearch.services.model.asking import ask
from deskresearch.state import ReportOutline, ResearchState, SectionPlan
from deskresearch.text.relevance import stems

MIN_SECTIONS, MAX_SECTIONS = 3, 6  # overview, at least one aspect, conclusion
OUTPUT_RESERVE = 1024  # tokens kept free for the outline on a local server's window


class SectionItem(BaseModel):
    """One planned section."""

    heading: str = Field(description="The section's heading.")
    focus: str = Field(description="One line: what the section covers.")
    sources: list[int] = Field(description="Numbers of the sources it draws on.")


class Outline(BaseModel):
    """The model's plan of the report."""

    title: str = Field(description="The report's title.")
    sections: list[SectionItem] = Field(description="The sections, in reading order.")


def sections_for(sources: int) -> tuple[int, int]:
    """How many sections a ledger of ``sources`` sources is worth (at least 3, at most 6)."""
    return MIN_SECTIONS, max(MIN_SECTIONS, min(MAX_SECTIONS, 2 + sources // 2))


def checked_outline(outline: Outline, sources: Sequence[Source]) -> ReportOutline | None:
    """Return a usable outline, or None (too few sections, or no source in any of them)."""
    known = {s["id"] for s in sources}
    plans: list[SectionPlan] = []
    for item in outline.sections[:MAX_SECTIONS]:
        heading = " ".join(item.heading.lstrip("#").split())
        ids = list(dict.fromkeys(i for i in item.sources if i in known))
        if heading:
            plans.append(
                SectionPlan(heading=heading, focus=" ".join(item.focus.split()), sources=ids)
            )
    if len(plans) < MIN_SECTIONS or not any(p["sources"] for p in plans):
        return None
    used = {i for p in plans for i in p["sources"]}
    middle = plans[1:-1]
    for s in sources:
        if s["id"] not in used:
            words = stems(f"{s['title']} {s['summary']}")
            best = max(middle, key=lambda p: len(words & stems(f"{p['heading']} {p['focus']}")))
            best["sources"].append(s["id"])
    title = " ".join(outline.title.lstrip("#").split()) or plans[0]["heading"]
    return ReportOutline(title=title, sections=plans)


async def plan_report(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService, tokens: TokenCounter
) -> dict[str, Any]:
    """Plan the sections; None as outline sends the run to write_report."""
    ctx = resolve(runtime)
    spec, sources = ctx.report_spec(), state["sources"]
    low, high = sections_for(len(sources))
    messages, fitted = await fit_sources(
        sources,
        lambda shown: prompt.render(topic=state["topic"], sources=shown, words=ctx.report_words,
                                    min_sections=low, max_sections=high,
                                    language=state["language"], today=date.today()),
        ctx=ctx, spec=spec, reserve=OUTPUT_RESERVE, tokens=tokens,
    )  # fmt: skip
    trimmed = fitted_note("plan_report", state["topic"], fitted, ctx, spec)
    answer = await ask(llm, messages, Outline, spec=spec, stage="plan_report")
    outline = checked_outline(answer.value, sources) if answer.value else None
    if outline is None:
        why = answer.problem or f"fewer than {MIN_SECTIONS} usable sections"
        reason = f"no usable outline ({why}); writing the report in one call"
        emit(runtime, "plan_report", "fallback", reason=reason)
        return {"outline": None, "usage": answer.usage,
                "provenance": [*trimmed, note("plan_report", state["topic"], "fallback", reason)]}  # fmt: skip
    emit(runtime, "plan_report", "finished", sections=len(outline["sections"]))
    return {"outline": outline, "usage": answer.usage, "provenance": trimmed}


def plan_failed(state: ResearchState, error: NodeError) -> Command[Any]:
    """The outline call failed for good: the report is written in one call, saying why.

    Not when its prompt was too long for the model: the one call's prompt holds the whole
    ledger, more than the outline's, and would meet the same end after one more call. The run
    stops with the fix; resumed after it, it asks for the outline again.
    """
    if not isinstance(error.error, ServiceError) or isinstance(error.error, ContextLengthError):
        raise error.error
    reason = f"no outline (the call failed: {error.error}); writing the report in one call"
    return Command(
        update={"outline": None,
                "provenance": [note("plan_report", state["topic"], "fallback", reason)]},
        goto="brief_writers",
    )  # fmt: skip
