"""write_report: the report's draft from numbered sources' facts; citations must point at the ledger.

The draft goes on to the citation check; finish_report adds the references from the ledger.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from langgraph.runtime import Runtime

from deskresearch.config.context import Context, resolve
from deskresearch.grounding.citations import clean_citations, strip_model_references
from deskresearch.nodes.fitting import answer_reserve, fit_sources, fitted_note
from deskresearch.progress import emit, note
from deskresearch.prompts import write_report as prompt
from deskresearch.report.disagreements import with_section
from deskresearch.services.base import ChatService, TokenCounter
from deskresearch.state import ResearchState

REPORT_ATTEMPTS = 2  # an uncited draft is retried once, then flagged
TRUNCATED_NOTE = (
    "> **Note:** the model stopped at its output limit: the report above ends early. A model "
    "with a larger output limit, or a lower report_words, gives a complete one."
)
UNCITED_WARNING = (
    "> **Warning:** this report cites none of the sources below. Treat its statements as "
    "unverified."
)


async def write_report(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService, tokens: TokenCounter
) -> dict[str, Any]:
    """Write the draft; remove citations that point nowhere; retry once when none remain."""
    ctx = resolve(runtime)
    sources = state["sources"]
    attempt = state["report_attempts"] + 1
    spec = ctx.report_spec()
    messages, fitted = await fit_sources(
        sources,
        lambda shown: prompt.render(
            topic=state["topic"],
            sources=shown,
            words=ctx.report_words,
            language=state["language"],
            today=date.today(),
            retry=attempt > 1,
            disagreements=state.get("disagreements_found") or [],
            changes=state.get("changes") or [],
        ),
        ctx=ctx, spec=spec, reserve=answer_reserve(ctx.report_words), tokens=tokens,
    )  # fmt: skip
    emit(runtime, "write_report", "started", sources=len(sources), attempt=attempt)
    reply = await llm.text(messages, spec=spec, stage="write_report")
    cleaned = clean_citations(strip_model_references(reply.value), {s["id"] for s in sources})
    provenance = fitted_note("write_report", state["topic"], fitted, ctx, spec) + [
        note(
            "write_report",
            f"[{i}]",
            "removed",
            f"cites no source in the ledger (it has {len(sources)})",
        )
        for i in sorted(set(cleaned.removed))
    ]
    update: dict[str, Any] = {
        "report_attempts": attempt,
        "report_cited": bool(cleaned.cited),
        "usage": [reply.usage],
    }
    if not cleaned.cited and attempt < REPORT_ATTEMPTS:
        provenance.append(
            note(
                "write_report",
                state["topic"],
                "fallback",
                f"draft {attempt} cites no source; retrying",
            )
        )
        return {**update, "provenance": provenance}
    body = cleaned.text
    if cleaned.cited and (
        found := state.get("disagreements_found")
    ):  # they close it, checked with it
        body = with_section(body, found, state["language"])
    if not cleaned.cited:
        body = f"{UNCITED_WARNING}\n\n{body}"
        provenance.append(
            note("write_report", state["topic"], "flagged", f"no draft in {attempt} cited a source")
        )
    if reply.truncated:
        body = f"{body}\n\n{TRUNCATED_NOTE}"
        provenance.append(
            note("write_report", state["topic"], "flagged", "the model stopped at its output limit")
        )
    emit(
        runtime, "write_report", "finished", cited=len(cleaned.cited), removed=len(cleaned.removed)
    )
    return {**update, "draft": body, "provenance": provenance}
