"""repair_report: one rewrite call for the sentences no source backs; what it cannot fix goes.

The model sees only the affected paragraphs and the evidence of the sources they cite. A
replacement counts only when code confirms it: its quote is in the source it cites, every figure
is in that quote or the source's other quotes, and (in the source's own language) its words are
the source's. Table rows are not rewritten: an unsupported row is removed.

The same call is the second look at the verdicts code disputed (grounding/weigh.py): such a
sentence is marked "check first", and may be kept as written when the answer names a source it
cites and a quote code finds in it, with every figure of the sentence in that quote or in the
quotes of the facts it stands on (as the judge's named fact is weighed). Two answers against
code's finding settle it their way; an answer that settles nothing leaves the sentence in the
report, unchecked.
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
from deskresearch.grounding.weigh import unbacked
from deskresearch.nodes.fitting import RELEVANT, fit_relevant, fitted_note
from deskresearch.progress import emit
from deskresearch.prompts import repair_report as prompt
from deskresearch.records import Dispute, Opinion, Provenance, Usage
from deskresearch.services.base import ChatService, TokenCounter
from deskresearch.services.model.asking import ask
from deskresearch.state import ResearchState, SentenceCheck

REPAIR_RESERVE = 1024  # tokens kept free for the rewrites on a local server's window, at least
REWRITE_TOKENS = 80  # and this much a flagged sentence (its replacement, source and quote)


class Fix(BaseModel):
    """A replacement for one flagged sentence."""

    sentence: int = Field(description="The sentence's number (S1 is 1).")
    replacement: str = Field(
        description="The sentence restated from one source, citing it as [n]; empty: remove it."
    )
    source: int | None = Field(default=None, description="The number of the source it states.")
    quote: str = Field(default="", description="That source's words stating it, copied exactly.")
    keep: bool = Field(
        default=False,
        description="Only for a sentence marked 'check first': true when a source it cites "
        "states it as written (give that source and quote, no replacement).",
    )


class Fixes(BaseModel):
    """The model's replacements."""

    fixes: list[Fix]


def _removed(check: SentenceCheck, why: str) -> SentenceCheck:
    return {**check, "status": "removed", "reason": f"{check['reason']}; {why}"}


def _settled(check: SentenceCheck, stated: bool | None) -> Dispute | None:
    """The dispute of ``check`` as the second look left it (``stated`` None: no usable answer).

    An answer sides with the judge or with the facts: either way two of the three agree, and
    the report goes their way (recheck_citations may still be asked when the facts lose).
    """
    d = check.get("dispute")
    if d is None:
        return None
    if stated is None:
        return {**d, "settled_by": "unsettled", "overruled": False}
    said = Opinion(
        stage="repair_report", model="judge", answer="stated" if stated else "not stated"
    )
    return {**d, "asked_again": [*d["asked_again"], said], "settled_by": "asked_again",
            "overruled": stated == (d["judge"] == "unsupported")}  # fmt: skip


def second_look(
    check: SentenceCheck,
    fix: Fix | None,
    allowed: set[int],
    ledger: dict[int, Evidence],
    *,
    language: str,
    row: bool = False,
) -> SentenceCheck:
    """Settle a disputed verdict with the rewrite call's answer (see the module docstring)."""
    if fix is None:
        return {**check, "status": "unchecked", "dispute": _settled(check, None),
                "reason": f"not checked: {check['reason']}; the second look gave no answer"}  # fmt: skip
    if not fix.keep:
        done = _removed(check, "a table row is not rewritten") if row else confirmed(
            check, fix, allowed, ledger, language=language)  # fmt: skip
        return {**done, "dispute": _settled(check, False)}
    problem = (
        unbacked(check, fix.source, fix.quote, ledger)
        if fix.source in check["cites"]
        else f"the second look named a source it does not cite ({fix.source})"
    )
    if problem:
        return {**check, "status": "unchecked", "dispute": _settled(check, None),
                "reason": f"not checked: {check['reason']}; asked again, stated, but {problem}"}  # fmt: skip
    return {**check, "status": "supported", "source": fix.source, "quote": fix.quote,
            "decided_by": "model", "dispute": _settled(check, True),
            "reason": f"{check['reason']}; asked again: stated by source [{fix.source}]"}  # fmt: skip


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
    stated = "\n".join([fix.quote, *ev.statements])  # as for the judge: figures from what states it
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
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService, tokens: TokenCounter
) -> dict[str, Any]:
    """Rewrite the unsupported sentences in one call; remove what the rewrite cannot back."""
    ctx = resolve(runtime)
    checks = state["checks"]
    units = parse(state["draft"], state["language"])
    flagged = [i for i, c in enumerate(checks) if c["status"] in ("unsupported", "disputed")]
    rows = {i for i in flagged if units[checks[i]["unit"]].kind == "row"}
    disputed = {i for i in flagged if checks[i]["status"] == "disputed"}
    out = list(checks)
    for i in rows - disputed:
        out[i] = _removed(checks[i], "a table row is not rewritten")
    asked = [i for i in flagged if i not in rows or i in disputed]
    usage: list[Usage] = []
    provenance: list[Provenance] = []
    if asked:
        unit_ids = sorted({checks[i]["unit"] for i in asked})
        allowed = {sid for u in unit_ids for c in checks if c["unit"] == u for sid in c["cites"]}
        by_id = {s["id"]: s for s in state["sources"]}
        cited = {sid: by_id[sid] for sid in sorted(allowed) if sid in by_id}
        spec, said = ctx.judge_spec(), [checks[i]["sentence"] for i in asked]
        messages, fitted = await fit_relevant(
            cited, said,
            lambda shown: prompt.render(
                sentences=[(n + 1, said[n], checks[i]["reason"]) for n, i in enumerate(asked)],
                paragraphs=[units[u].render() for u in unit_ids],
                sources=cited,
                language=state["language"],
                check_first={n + 1 for n, i in enumerate(asked) if i in disputed},
                shown=shown,
            ),
            ctx=ctx, spec=spec, reserve=max(REPAIR_RESERVE, REWRITE_TOKENS * len(asked)), tokens=tokens,
        )  # fmt: skip
        provenance = fitted_note("repair_report", state["topic"], fitted, ctx, spec, which=RELEVANT)
        emit(runtime, "repair_report", "started", sentences=len(asked), disputed=len(disputed))
        answer = await ask(llm, messages, Fixes, spec=spec, stage="repair_report")
        usage = answer.usage
        fixes = {f.sentence: f for f in answer.value.fixes} if answer.value else {}
        ledger = ledger_evidence(state["sources"], state["pages"])
        language = language_code(state["language"])
        for n, i in enumerate(asked):
            fix = fixes.get(n + 1)
            if i in disputed:
                out[i] = second_look(checks[i], fix, allowed, ledger, language=language,
                                     row=i in rows)  # fmt: skip
            elif fix is not None:  # "keep" is not an answer here: the facts agree it is not stated
                out[i] = confirmed(checks[i], fix, allowed, ledger, language=language)
            else:
                out[i] = _removed(checks[i], answer.problem or "the rewrite left it out")
    emit(runtime, "repair_report", "finished",
         rewritten=sum(c["status"] == "rewritten" for c in out),
         removed=sum(c["status"] == "removed" for c in out))  # fmt: skip
    return {"checks": out, "usage": usage, "provenance": provenance}


def repair_failed(state: ResearchState, error: NodeError) -> Command[Any]:
    """The rewrite call failed for good: the unsupported sentences are removed.

    The disputed ones, never removed on the judge's word alone, stay in the report, unchecked.
    """
    if not isinstance(error.error, ServiceError):
        raise error.error
    why = f"the rewrite call failed ({error.error})"
    checks = [
        _removed(c, why)
        if c["status"] == "unsupported"
        else {
            **c,
            "status": "unchecked",
            "dispute": _settled(c, None),
            "reason": f"not checked: {c['reason']}; {why}",
        }  # fmt: skip
        if c["status"] == "disputed"
        else c
        for c in state["checks"]
    ]
    return Command(update={"checks": checks}, goto="finish_report")
