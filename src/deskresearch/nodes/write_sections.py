"""write_section (map: every section at the same time) and assemble_report (the draft).

Sections cite the ledger's own numbers, so stitching them keeps one global numbering. A section
that cannot be written is left out and recorded; a draft that cites nothing goes to
write_report, which writes the whole report in one call.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.grounding.citations import clean_citations, strip_model_references
from deskresearch.nodes.branch_state import SectionTask
from deskresearch.nodes.fitting import answer_reserve, fit_sources, fitted_note
from deskresearch.progress import emit, note
from deskresearch.prompts import write_section as prompt
from deskresearch.records import ValueSide
from deskresearch.report.disagreements import with_section
from deskresearch.services.base import ChatService, TokenCounter
from deskresearch.state import ResearchState, SectionDraft

_OWN_HEADING = re.compile(r"\A\s*#{1,2}\s[^\n]*\n")  # a heading the model added anyway


def section_tasks(state: ResearchState, words: int) -> list[SectionTask]:
    """One task per planned section, each with only the sources it draws on."""
    outline = state["outline"]
    if outline is None:
        return []
    by_id = {s["id"]: s for s in state["sources"]}
    found, changes = state.get("disagreements_found") or [], state.get("changes") or []
    plans = outline["sections"]
    headings = [p["heading"] for p in plans]
    last = len(plans) - 1
    return [
        SectionTask(
            index=i,
            topic=state["topic"],
            language=state["language"],
            title=outline["title"],
            headings=headings,
            plan=plan,
            position="first" if i == 0 else "last" if i == last else "middle",
            sources=[by_id[sid] for sid in plan["sources"] if sid in by_id],
            words=max(80, words // len(plans)),
            disagreements=[d for d in found if _touches(d["sides"], plan["sources"])],
            changes=[
                c for c in changes if _touches([c["current"], *c["earlier"]], plan["sources"])
            ],
        )
        for i, plan in enumerate(plans)
    ]


def _touches(sides: list[ValueSide], sources: list[int]) -> bool:
    """Whether a finding concerns a section: a side cites one of the section's sources."""
    return any(set(side["cites"]) & set(sources) for side in sides)


async def write_section(
    state: SectionTask, runtime: Runtime[Context], *, llm: ChatService, tokens: TokenCounter
) -> dict[str, Any]:
    """Write one section from its sources' facts."""
    ctx = resolve(runtime)
    plan, spec = state["plan"], ctx.report_spec()
    messages, fitted = await fit_sources(
        state["sources"],
        lambda shown: prompt.render(
            topic=state["topic"],
            title=state["title"],
            headings=state["headings"],
            heading=plan["heading"],
            focus=plan["focus"],
            position=state["position"],
            sources=shown,
            words=state["words"],
            language=state["language"],
            today=date.today(),
            disagreements=state.get("disagreements") or [],
            changes=state.get("changes") or [],
        ),
        ctx=ctx, spec=spec, reserve=answer_reserve(state["words"]), tokens=tokens,
    )  # fmt: skip
    reply = await llm.text(messages, spec=spec, stage="write_section")
    text = _OWN_HEADING.sub("", strip_model_references(reply.value), count=1).strip()
    provenance = fitted_note("write_section", plan["heading"], fitted, ctx, spec)
    if reply.truncated:
        reason = f"section {plan['heading']!r}: the model stopped at its output limit"
        provenance.append(note("write_section", plan["heading"], "flagged", reason))
    emit(runtime, "write_section", "finished", section=plan["heading"], index=state["index"])
    draft = SectionDraft(index=state["index"], heading=plan["heading"], text=text, error="")
    return {"sections": [draft], "usage": [reply.usage], "provenance": provenance}


def section_failed(state: SectionTask, error: NodeError) -> Command[Any]:
    """A section whose call failed for good is left out; the others still make the report.

    The branch goes on to assemble_report as a finished one would: with every section failed,
    assemble_report falls back to the report in one call instead of the run stopping there.
    """
    if not isinstance(error.error, ServiceError):
        raise error.error
    heading = state["plan"]["heading"]
    draft = SectionDraft(index=state["index"], heading=heading, text="", error=str(error.error))
    reason = f"section left out: {error.error}"
    return Command(
        update={
            "sections": [draft],
            "provenance": [note("write_section", heading, "failed", reason)],
        },
        goto="assemble_report",
    )


async def assemble_report(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Stitch the sections under the title; citations must point at the ledger."""
    outline = state["outline"]
    title = outline["title"] if outline else state["topic"]
    parts = [f"# {title}"]
    parts += [
        f"## {s['heading']}\n\n{s['text']}"
        for s in sorted(state["sections"], key=lambda s: s["index"])
        if s["text"]
    ]
    cleaned = clean_citations("\n\n".join(parts), {s["id"] for s in state["sources"]})
    draft = cleaned.text
    if found := state.get("disagreements_found"):  # they close the report, checked with it
        draft = with_section(draft, found, state["language"])
    provenance = [
        note("assemble_report", f"[{i}]", "removed",
             f"cites no source in the ledger (it has {len(state['sources'])})")
        for i in sorted(set(cleaned.removed))
    ]  # fmt: skip
    emit(runtime, "assemble_report", "finished", sections=len(parts) - 1, cited=len(cleaned.cited))
    if not cleaned.cited:  # the whole report in one call instead (write_report's retry)
        reason = "the sections cite no source; writing the report in one call"
        provenance.append(note("assemble_report", state["topic"], "fallback", reason))
        return {"draft": "", "report_attempts": 1, "provenance": provenance}
    return {"draft": draft, "report_cited": True, "provenance": provenance}
