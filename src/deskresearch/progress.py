"""Progress events, streamed in LangGraph's ``custom`` mode for the CLI, Studio and front ends.

Every event is ``{"stage": <node name>, "event": <what happened>, ...counts}``.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from deskresearch.records import Outcome, Provenance, Stage


def emit(runtime: Runtime[Any], stage: Stage, event: str, **fields: Any) -> None:
    """Send one progress event (a no-op when nobody streams ``custom``)."""
    runtime.stream_writer({"stage": stage, "event": event, **fields})


def note(stage: Stage, subject: str, outcome: Outcome, reason: str) -> Provenance:
    """Build one provenance record."""
    return Provenance(stage=stage, subject=subject, outcome=outcome, reason=reason)
