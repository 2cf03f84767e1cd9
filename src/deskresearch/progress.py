"""Progress events, streamed in LangGraph's ``custom`` mode for the CLI, Studio and front ends.

Every event is ``{"stage": <node name>, "event": <what happened>, ...counts}``. Events and
provenance records pass through ``masking``: a secret never reaches a stream, a state or a file.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from deskresearch.records import Outcome, Provenance, Stage, Usage
from deskresearch.safety.masking import mask_secrets, masked


def emit(runtime: Runtime[Any], stage: Stage, event: str, **fields: Any) -> None:
    """Send one progress event (a no-op when nobody streams ``custom``)."""
    runtime.stream_writer({"stage": stage, "event": event, **masked(fields)})


def note(stage: Stage, subject: str, outcome: Outcome, reason: str) -> Provenance:
    """Build one provenance record; a secret in the subject or reason (a URL's password) is masked."""
    return Provenance(
        stage=stage, subject=mask_secrets(subject), outcome=outcome, reason=mask_secrets(reason)
    )


def cached_calls_note(stage: Stage, usage: list[Usage]) -> list[Provenance]:
    """One ``cached`` line saying which model calls the cache answered (none: no line)."""
    per_stage = {u["stage"]: u.get("cached_calls", 0) for u in usage if u.get("cached_calls")}
    if not per_stage:
        return []
    cached = sum(per_stage.values())
    total = cached + sum(u["calls"] for u in usage)
    stages = ", ".join(f"{name} {n}" for name, n in per_stage.items())
    reason = f"{cached} of {total} answers from the cache, no tokens spent ({stages})"
    return [note(stage, "model calls", "cached", reason)]
