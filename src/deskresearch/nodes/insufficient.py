"""insufficient_evidence: end the run honestly when no usable source survived."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from deskresearch.context import Context
from deskresearch.errors import budget_reached
from deskresearch.progress import cached_calls_note, emit
from deskresearch.services.claims import PageClaims
from deskresearch.state import ResearchState

_DROPPED = ("not_relevant", "blocked", "failed", "duplicate")


def summary_of_attempts(state: ResearchState) -> str:
    """Render what was tried: queries issued and what happened to every URL considered."""
    lines = [f"# Insufficient evidence: {state['topic']}", ""]
    lines.append(
        "No usable source survived, so no report was written: deskresearch does not write "
        "from the model's memory."
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
    dropped = [p for p in state["provenance"] if p["outcome"] in _DROPPED and "://" in p["subject"]]
    lines += ["", "## Pages considered", ""]
    lines += [f"- {p['subject']}: {p['outcome']} ({p['reason']})" for p in dropped] or [
        "- no search returned a page"
    ]
    lines += [
        "",
        "Try a broader or differently worded topic, another search backend, or check the network.",
    ]
    if budget_reached(state):
        lines.append(
            "The run's token budget ran out before a page was summarised: raise token_budget."
        )
    return "\n".join(lines) + "\n"


async def insufficient_evidence(
    state: ResearchState, runtime: Runtime[Context], *, claims: PageClaims | None = None
) -> dict[str, Any]:
    """Write the insufficient-evidence result instead of a report."""
    if claims is not None:
        claims.forget(state.get("run_id", ""))
    emit(runtime, "insufficient_evidence", "finished")
    return {
        "report": summary_of_attempts(state),
        "status": "insufficient_evidence",
        "sources": [],
        "provenance": cached_calls_note("insufficient_evidence", state.get("usage", [])),
    }
