"""repair_report: one rewrite call for the sentences no source backs; what it cannot fix goes.

The model sees only the affected paragraphs and the evidence of the sources they cite. A
replacement counts only when code confirms it: its quote is in the source it cites, every figure
is in that quote or the source's other quotes, and (in the source's own language) its words are
the source's. Table rows are not rewritten: an unsupported row is removed.
"""

from __future__ import annotations

from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.grounding.citations import ids_in, recite, without_citations
from deskresearch.grounding.draft import language_code, parse
from deskresearch.grounding.ledger import ledger_evidence
from deskresearch.grounding.lexical import Evidence, check_sentence, evidence_text
from deskresearch.grounding.numbers import missing_figures
from deskresearch.grounding.quotes import find_quote
from deskresearch.progress import emit
from deskresearch.prompts import repair_report as prompt
from deskresearch.services.base import ChatService
from deskresearch.services.model.asking import ask
from deskresearch.state import ResearchState, SentenceCheck


class Fix(BaseModel):
    """A replacement for one flagged sentence."""

    sentence: int = Field(description="The sentence's number (S1 is 1).")
    replacement: str = Field(
        description="The sentence restated from one source, citing it as [n]; empty: remove it."
    )
    source: int | None = Field(default=None, description="The number of the source it states.")
    quote: str = Field(default="", description="That source's words stating it, copied exactly.")


class Fixes(BaseModel):
    """The model's replacements."""

    fixes: list[Fix]


def _removed(check: SentenceCheck, why: str) -> SentenceCheck:
    return {**check, "status": "removed", "reason": f"{check['reason']}; {why}"}


def confirmed(
    check: SentenceCheck,
    fix: Fix,
    allowed: set[int],
    ledger: dict[int, Evidence],
    *,
    language: str,
) -> SentenceCheck:
    """Accept ``fix`` for ``check`` only when code can confirm it (see the module docstring)."""
    text = " ".join(fix.replacement.split())
    if not text:
        return _removed(check, "the rewrite found nothing to state")
    if fix.source not in allowed or fix.source not in ledger:
        return _removed(check, f"the rewrite cited a source not given to it ({fix.source})")
    ev = ledger[fix.source]
    if ids_in(text) != [ev.id]:
        text = recite(text, [ev.id]) if ids_in(text) else f"{text.rstrip()} [{ev.id}]"
    if not find_quote(fix.quote, evidence_text(ev)):
        return _removed(check, f"the rewrite's quote is not in source [{ev.id}]")
    stated = "\n".join([fix.quote, *ev.quotes])  # as for the judge: figures from what states it
    if missing := missing_figures(without_citations(text), stated, spelled=fix.quote):
        return _removed(check, f"the rewrite's figure(s) {', '.join(missing)} are not the source's")
    if (
        ev.language == language
        and check_sentence(text, [ev.id], ledger, language=language).outcome != "supported"
    ):
        return _removed(check, f"the rewrite's words are not those of source [{ev.id}]")
    return {**check, "status": "rewritten", "replacement": text, "source": ev.id,
            "quote": fix.quote, "decided_by": "model",
            "reason": f"{check['reason']}; rewritten from source [{ev.id}]"}  # fmt: skip


async def repair_report(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Rewrite the unsupported sentences in one call; remove what the rewrite cannot back."""
    ctx = resolve(runtime)
    checks = state["checks"]
    units = parse(state["draft"], state["language"])
    flagged = [i for i, c in enumerate(checks) if c["status"] == "unsupported"]
    rows = {i for i in flagged if units[checks[i]["unit"]].kind == "row"}
    out = list(checks)
    for i in rows:
        out[i] = _removed(checks[i], "a table row is not rewritten")
    asked = [i for i in flagged if i not in rows]
    usage = []
    if asked:
        unit_ids = sorted({checks[i]["unit"] for i in asked})
        allowed = {sid for u in unit_ids for c in checks if c["unit"] == u for sid in c["cites"]}
        by_id = {s["id"]: s for s in state["sources"]}
        messages = prompt.render(
            sentences=[
                (n + 1, checks[i]["sentence"], checks[i]["reason"]) for n, i in enumerate(asked)
            ],
            paragraphs=[units[u].render() for u in unit_ids],
            sources={sid: by_id[sid] for sid in allowed if sid in by_id},
            language=state["language"],
        )
        emit(runtime, "repair_report", "started", sentences=len(asked))
        answer = await ask(llm, messages, Fixes, spec=ctx.judge_spec(), stage="repair_report")
        usage = answer.usage
        fixes = {f.sentence: f for f in answer.value.fixes} if answer.value else {}
        ledger = ledger_evidence(state["sources"], state["pages"])
        language = language_code(state["language"])
        for n, i in enumerate(asked):
            fix = fixes.get(n + 1)
            out[i] = (
                confirmed(checks[i], fix, allowed, ledger, language=language)
                if fix is not None
                else _removed(checks[i], answer.problem or "the rewrite left it out")
            )
    emit(runtime, "repair_report", "finished",
         rewritten=sum(c["status"] == "rewritten" for c in out),
         removed=sum(c["status"] == "removed" for c in out))  # fmt: skip
    return {"checks": out, "usage": usage}


def repair_failed(state: ResearchState, error: NodeError) -> Command[Any]:
    """The rewrite call failed for good: the unsupported sentences are removed."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    checks = [
        _removed(c, f"the rewrite call failed ({error.error})")
        if c["status"] == "unsupported"
        else c
        for c in state["checks"]
    ]
    return Command(update={"checks": checks}, goto="finish_report")
