"""check_citations (code) and judge_citations (one model call): is each cited sentence backed?

check_citations decides by words and figures what code can decide; judge_citations asks the
model, in one batched call, about the rest, and believes an answer only when code finds the
quote it gives in the source it names, and every figure of the sentence in that quote or in the
quotes of the facts the sentence's source(s) gave the writer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.asking import ask
from deskresearch.citations import without_citations
from deskresearch.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.grounding.draft import cited_sentences, language_code, parse
from deskresearch.grounding.ledger import ledger_evidence
from deskresearch.grounding.lexical import Evidence, check_sentence, evidence_text
from deskresearch.grounding.numbers import missing_figures
from deskresearch.grounding.quotes import find_quote
from deskresearch.progress import emit
from deskresearch.prompts import judge_citations as prompt
from deskresearch.services.base import ChatService
from deskresearch.state import CheckStatus, ResearchState, SentenceCheck

_STATUS: dict[str, CheckStatus] = {
    "supported": "supported",
    "fabricated": "unsupported",
    "undecided": "pending",
}


def lexical_checks(state: ResearchState) -> list[SentenceCheck]:
    """Check every cited sentence of the draft by code (pure; runs off the event loop)."""
    units = parse(state["draft"], state["language"])
    ledger = ledger_evidence(state["sources"], state["pages"])
    language = language_code(state["language"])
    checks: list[SentenceCheck] = []
    for s in cited_sentences(units):
        found = check_sentence(s.text, s.cites, ledger, language=language)
        checks.append(
            SentenceCheck(
                unit=s.key[0],
                index=s.key[1],
                sentence=s.text,
                cites=list(s.cites),
                section=s.section,
                status=_STATUS[found.outcome],
                source=found.source,
                quote=found.quote,
                decided_by="none" if found.outcome == "undecided" else "lexical",
                reason=found.reason,
                candidates=list(found.candidates),
                replacement="",
            )
        )
    return checks


def _counts(checks: list[SentenceCheck]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in checks:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    return counts


async def check_citations(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Decide each cited sentence by code where words and figures can; leave the rest pending."""
    checks = await asyncio.to_thread(lexical_checks, state)
    emit(runtime, "check_citations", "finished", sentences=len(checks), **_counts(checks))
    return {"checks": checks}


class Judgement(BaseModel):
    """The model's verdict on one sentence."""

    sentence: int = Field(description="The sentence's number (S1 is 1).")
    verdict: Literal["supported", "other_source", "unsupported"]
    source: int | None = Field(
        default=None,
        description="The source that states it: one it cites (supported) or another (other_source).",
    )
    quote: str = Field(
        default="", description="The 3 to 15 words of that source's quotes that decide it, exactly."
    )


class Judgements(BaseModel):
    """The model's verdicts, one per sentence."""

    judgements: list[Judgement]


def verified(check: SentenceCheck, j: Judgement, ledger: Mapping[int, Evidence]) -> SentenceCheck:
    """Turn the model's verdict into a status, believing only what code can confirm."""
    if j.verdict == "unsupported":
        return {**check, "status": "unsupported", "decided_by": "model", "quote": j.quote,
                "reason": "the judge found no source stating it"}  # fmt: skip
    ev = ledger.get(j.source) if j.source is not None else None
    if ev is None:
        return {**check, "status": "unsupported", "decided_by": "model",
                "reason": f"the judge named no source in the ledger ({j.source})"}  # fmt: skip
    if not find_quote(j.quote, evidence_text(ev)):
        return {**check, "status": "unsupported", "decided_by": "model",
                "reason": f"the judge's quote is not in source [{ev.id}]"}  # fmt: skip
    moved = ev.id not in check["cites"]
    # Staying with its citations, a sentence may take its figures from any of them. The figures
    # must be in what states it (the judge's quote, the facts' quotes), not anywhere in the page
    # text: a long page holds most small numbers somewhere, so a changed figure would pass.
    backing = [ev] if moved else [ledger[i] for i in check["cites"] if i in ledger]
    said = without_citations(check["sentence"])
    stated = "\n".join([j.quote, *(q for b in backing for q in b.quotes)])
    if missing := missing_figures(said, stated, spelled=j.quote):
        return {**check, "status": "unsupported", "decided_by": "model", "quote": j.quote,
                "reason": f"figure(s) {', '.join(missing)} not in the quotes of the source(s) named"}  # fmt: skip
    return {
        **check,
        "status": "re-cited" if moved else "supported",
        "source": ev.id,
        "quote": j.quote,
        "decided_by": "model",
        "reason": f"stated by source [{ev.id}]" + (", not the one cited" if moved else ""),
    }


async def judge_citations(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Ask the model, in one call, about every sentence code left pending."""
    ctx = resolve(runtime)
    checks = state["checks"]
    pending = [i for i, c in enumerate(checks) if c["status"] == "pending"]
    shown = {sid for i in pending for sid in (*checks[i]["cites"], *checks[i]["candidates"])}
    by_id = {s["id"]: s for s in state["sources"]}
    messages = prompt.render(
        sentences=[
            (n + 1, checks[i]["sentence"], checks[i]["cites"]) for n, i in enumerate(pending)
        ],
        sources={sid: by_id[sid] for sid in shown if sid in by_id},
    )
    emit(runtime, "judge_citations", "started", sentences=len(pending))
    answer = await ask(llm, messages, Judgements, spec=ctx.judge_spec(), stage="judge_citations")
    ledger = ledger_evidence(state["sources"], state["pages"])
    out = list(checks)
    verdicts = {j.sentence: j for j in answer.value.judgements} if answer.value else {}
    for n, i in enumerate(pending):
        j = verdicts.get(n + 1)
        if j is None:
            why = answer.problem or "the judge gave no verdict for it"
            out[i] = {**checks[i], "status": "unchecked", "reason": f"not checked: {why}"}
        else:
            out[i] = verified(checks[i], j, ledger)
    emit(runtime, "judge_citations", "finished", **_counts(out))
    return {"checks": out, "usage": answer.usage}


def judge_failed(state: ResearchState, error: NodeError) -> Command[Any]:
    """The judge call failed for good: pending sentences stay in the report, marked unchecked."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    reason = f"not checked: the judge call failed ({error.error})"
    checks = [
        {**c, "status": "unchecked", "reason": reason} if c["status"] == "pending" else c
        for c in state["checks"]
    ]
    after: Literal["repair_report", "finish_report"] = (
        "repair_report" if any(c["status"] == "unsupported" for c in checks) else "finish_report"
    )
    return Command(update={"checks": checks}, goto=after)
