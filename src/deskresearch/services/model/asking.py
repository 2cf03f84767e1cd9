"""One structured question to the model, with malformed answers turned into a value, not a raise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic

from langchain_core.messages import BaseMessage

from deskresearch.errors import ModelOutputError
from deskresearch.records import ModelSpec, Stage, Usage
from deskresearch.services.base import ChatService, M


@dataclass(frozen=True)
class Answer(Generic[M]):
    """The parsed answer (None when malformed), what it cost, and what was wrong with it."""

    value: M | None
    usage: list[Usage]
    problem: str


async def ask(
    llm: ChatService,
    messages: Sequence[BaseMessage],
    schema: type[M],
    *,
    spec: ModelSpec,
    stage: Stage,
) -> Answer[M]:
    """Ask for ``schema``; a malformed answer comes back as ``problem``, its tokens still counted."""
    try:
        reply = await llm.structured(messages, schema, spec=spec, stage=stage)
    except ModelOutputError as exc:
        return Answer(None, [exc.usage] if exc.usage else [], str(exc))
    return Answer(reply.value, [reply.usage], "")
