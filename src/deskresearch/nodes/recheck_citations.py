"""recheck_citations: the other model role's look at verdicts two prompts of the judge kept.

A verdict code disputed (grounding/weigh.py) is asked about again in the rewrite call; when that
answer sides with the judge against the facts, the judge model has said the same thing twice,
and a model that misjudges a sentence tends to misjudge it again. One call to the report model
(the other role), with a third prompt built unlike both (each claim against the passages code
found closest to it), settles it: agreeing with the judge, the verdict stands; agreeing with the
facts, two and two disagree and the sentence stays as written, marked unchecked. At most one
call a run, only when such a verdict exists.
"""

from __future__ import annotations

from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.grounding.ledger import ledger_evidence
from deskresearch.grounding.weigh import Carried, closest_facts, outvoted
from deskresearch.progress import emit
from deskresearch.prompts import recheck_citations as prompt
from deskresearch.records import Dispute, Opinion
from deskresearch.services.base import ChatService
from deskresearch.services.model.asking import ask
from deskresearch.state import ResearchState, SentenceCheck


class ClaimCheck(BaseModel):
    """Whether the passages under one claim state it."""

    sentence: int = Field(description="The sentence's number (S1 is 1).")
    claim: int = Field(description="The claim's number within it (C1 is 1).")
    stated: bool


class ClaimChecks(BaseModel):
    """One answer per claim."""

    checks: list[ClaimCheck]


def needs_recheck(state: ResearchState) -> bool:
    """Whether some disputed verdict stands on two answers of the judge model alone."""
    return any(outvoted(c) for c in state["checks"])


def rechecked(
    check: SentenceCheck,
    stated: bool | None,
    closest: Carried | None = None,
    *,
    why: str = "the third look gave no answer",
) -> SentenceCheck:
    """``check`` after the third look (``stated`` None: no usable answer, for reason ``why``).

    A sentence left unchecked shows ``closest``, the passage code found nearest to it.
    """
    d: Dispute | None = check.get("dispute")
    if d is None:  # pragma: no cover - only outvoted checks are rechecked
        return check
    if stated is None:
        return {**check, "reason": f"{check['reason']}; {why}"}
    said = Opinion(stage="recheck_citations", model="report",
                   answer="stated" if stated else "not stated")  # fmt: skip
    asked = [*d["asked_again"], said]
    if stated != (d["judge"] == "unsupported"):  # with the judge: its verdict stands
        return {**check, "dispute": {**d, "asked_again": asked}}
    if closest and closest.quotes:  # what a reader can weigh it by
        check = {**check, "source": closest.source, "quote": closest.quotes[0]}
    return {**check, "status": "unchecked", "replacement": "", "decided_by": "model",
            "dispute": {**d, "asked_again": asked, "settled_by": "unsettled", "overruled": False},
            "reason": f"not checked: the judge model said {_said(d)} twice, the facts and the "
                      f"report model say otherwise ({d['found']})"}  # fmt: skip


def _named(check: SentenceCheck) -> int | None:
    """The source the judge named for ``check`` (None when it named none)."""
    d = check.get("dispute")
    return d["judge_source"] if d else None


def _said(d: Dispute) -> str:
    return "it is not stated" if d["judge"] == "unsupported" else "it is stated"


async def recheck_citations(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Ask the report model, claim by claim, about the verdicts the facts lost (one call)."""
    ctx = resolve(runtime)
    checks = state["checks"]
    ledger = ledger_evidence(state["sources"], state["pages"])
    asked = [i for i, c in enumerate(checks) if outvoted(c)]
    claims = {
        i: closest_facts(checks[i]["sentence"], checks[i]["cites"], _named(checks[i]), ledger)
        for i in asked
    }
    messages = prompt.render(
        sentences=[(checks[i]["sentence"], [(c.claim, c.facts) for c in claims[i]]) for i in asked]
    )
    emit(runtime, "recheck_citations", "started", sentences=len(asked))
    answer = await ask(llm, messages, ClaimChecks, spec=ctx.report_spec(),
                       stage="recheck_citations")  # fmt: skip
    said = {(a.sentence, a.claim): a.stated for a in answer.value.checks} if answer.value else {}
    out = list(checks)
    for n, i in enumerate(asked, start=1):
        found = [said.get((n, k)) for k in range(1, len(claims[i]) + 1)]
        weakest = min(claims[i], key=lambda c: c.pair, default=None)
        out[i] = rechecked(checks[i], None if None in found else all(found), weakest)
    emit(runtime, "recheck_citations", "finished",
         unchecked=sum(out[i]["status"] == "unchecked" for i in asked))  # fmt: skip
    return {"checks": out, "usage": answer.usage}


def recheck_failed(state: ResearchState, error: NodeError) -> Command[Any]:
    """The third look failed for good: the verdicts stand as the two answers settled them."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    why = f"the third look failed ({error.error})"
    checks = [rechecked(c, None, why=why) if outvoted(c) else c for c in state["checks"]]
    return Command(update={"checks": checks}, goto="finish_report")
