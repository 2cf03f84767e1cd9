"""insufficient_evidence: end the run honestly when no usable source survived."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from deskresearch.config.context import Context, resolve
from deskresearch.errors import budget_reached
from deskresearch.nodes.chat import answered
from deskresearch.nodes.plan_queries import search_failures
from deskresearch.progress import cached_calls_note, emit
from deskresearch.records import Provenance
from deskresearch.safety.scope import describe
from deskresearch.services.storage.claims import PageClaims
from deskresearch.state import ResearchState
from deskresearch.text.plural import plural

_DROPPED = ("not_relevant", "blocked", "failed", "duplicate", "out_of_scope")


def _dropped_pages(state: ResearchState) -> list[Provenance]:
    """Provenance lines of pages considered and not used."""
    return [p for p in state["provenance"] if "://" in p["subject"] and p["outcome"] in _DROPPED]


def reason_of(state: ResearchState, scope: str = "") -> str:
    """Why no report could be written, in one line: what failed, or that nothing was usable.

    ``scope``: the user's scope in words (``safety.scope.describe``), named when it dropped pages.
    """
    if failures := search_failures(state.get("keyword_hits") or []):
        return f"every search failed ({failures[0]}): check the search engine and the network"
    if budget_reached(state):
        return "the token budget ran out before a page was summarised: raise token_budget"
    pages = _dropped_pages(state)
    considered = {p["subject"] for p in pages}
    outside = {p["subject"] for p in pages if p["outcome"] == "out_of_scope"}
    if outside and outside == considered:
        return (
            f"no usable source: every page found ({plural(len(outside), 'page')}) is outside the "
            f"scope you set ({scope}): widen it, or leave it out"
        )
    if outside:
        return (
            f"no usable source: {plural(len(considered), 'page')} considered, {len(outside)} "
            f"outside the scope you set ({scope}), none of the others relevant and readable"
        )
    return (
        f"no usable source: {plural(len(considered), 'page')} considered, "
        "none relevant and readable"
        if pages
        else "no usable source: no search returned a page"
    )


def summary_of_attempts(state: ResearchState, reason: str) -> str:
    """Render why, and what was tried: queries issued and what happened to every URL considered."""
    lines = [f"# Insufficient evidence: {state['topic']}", ""]
    lines.append(
        "No report was written: deskresearch does not write from the model's memory. "
        f"Reason: {reason}."
    )
    issued = [
        p
        for p in state["provenance"]
        if p["outcome"] == "issued" or p["outcome"] == "cached" and p["stage"].startswith("search")
    ]
    lines += ["", "## Searches", ""]
    lines += [f"- {p['subject']} ({p['reason']})" for p in issued] or ["- none succeeded"]
    failed_searches = [
        p
        for p in state["provenance"]
        if p["stage"].startswith("search") and p["outcome"] == "failed"
    ]
    lines += [f"- {p['subject']}: failed ({p['reason']})" for p in failed_searches]
    dropped = _dropped_pages(state)
    lines += ["", "## Pages considered", ""]
    lines += [f"- {p['subject']}: {p['outcome']} ({p['reason']})" for p in dropped] or [
        "- no search returned a page"
    ]
    lines += [
        "",
        "Try a broader or differently worded topic, another search backend, or check the network.",
    ]
    return "\n".join(lines) + "\n"


def insufficient_result(state: ResearchState, reason: str) -> dict[str, Any]:
    """The state update of a run that ends without a report: the reason and what was tried."""
    return {
        "report": summary_of_attempts(state, reason),
        "status": "insufficient_evidence",
        "reason": reason,
        "sources": [],
    }


async def insufficient_evidence(
    state: ResearchState, runtime: Runtime[Context], *, claims: PageClaims | None = None
) -> dict[str, Any]:
    """Write the insufficient-evidence result instead of a report."""
    if claims is not None:
        claims.forget(state.get("run_id", ""))
    ctx = resolve(runtime)
    reason = reason_of(state, describe(ctx.domain_scope(), ctx.since))
    emit(runtime, "insufficient_evidence", "finished", reason=reason)
    return answered({
        **insufficient_result(state, reason),
        "provenance": cached_calls_note("insufficient_evidence", state.get("usage", [])),
    })  # fmt: skip
