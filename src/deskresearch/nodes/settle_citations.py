"""settle_citations: the join after the judge's branches, merging their verdicts into ``checks``.

Every judge_citations branch (or its error handler) adds one verdict per sentence of its batch
to ``judged``. Verdicts are matched by the sentence's place in the draft and its text, so one
that arrives twice (a resumed run) counts once and one from an earlier draft never applies. A
pending sentence no verdict reached stays in the report, marked unchecked.
"""

from __future__ import annotations

from typing import Any

from deskresearch.state import ResearchState, SentenceCheck

NO_VERDICT = "not checked: no verdict came back for it"


def settle_citations(state: ResearchState) -> dict[str, Any]:
    """Replace each pending check by its verdict from ``judged``."""
    verdicts = {(j["unit"], j["index"], j["sentence"]): j for j in state.get("judged") or []}
    checks: list[SentenceCheck] = []
    for c in state["checks"]:
        if c["status"] != "pending":
            checks.append(c)
            continue
        j = verdicts.get((c["unit"], c["index"], c["sentence"]))
        checks.append(j if j is not None else {**c, "status": "unchecked", "reason": NO_VERDICT})
    return {"checks": checks}
