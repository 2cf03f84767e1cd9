"""The chat side of a run: the question from the latest human message, the report as an answer.

Chat front ends (Studio's chat view, Agent Chat UI, A2A) send ``messages`` instead of a
``topic``. The question is the newest human message that no run has researched yet: never the
first message of the thread, so a follow-up on the same thread starts a new research on the
follow-up's text (earlier questions and reports stay in the conversation). A run started with a
``topic`` adds it as a human message, so the thread reads as a conversation either way, and
every run ends with an AI message carrying its report (or the reason there is none).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage


def new_question(messages: Sequence[BaseMessage], asked: str) -> HumanMessage | None:
    """The newest human message, unless it is ``asked`` (the one the last run researched).

    A human message that is not the newest one is never a question: the conversation moved on.
    """
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return None if message.id and message.id == asked else message
    return None


def question_of(state: Mapping[str, Any]) -> tuple[object, HumanMessage | None]:
    """The run's raw topic, and the human message it came from (None: from ``topic``).

    A new human message wins over ``topic``: a chat front end sends only messages, and
    ``topic`` may still hold the previous run's.
    """
    asked = new_question(state.get("messages") or [], str(state.get("asked") or ""))
    return (asked.text, asked) if asked is not None else (state.get("topic"), None)


def as_question(topic: str, message: HumanMessage | None) -> tuple[str, list[HumanMessage]]:
    """The id of the question's human message, and the message to add when it came as a topic."""
    if message is not None and message.id:
        return message.id, []
    added = HumanMessage(topic, id=uuid.uuid4().hex)
    return str(added.id), [added]


def answered(result: dict[str, Any]) -> dict[str, Any]:
    """Add the AI message a chat front end shows: the report (or why there is none)."""
    return {**result, "messages": [AIMessage(str(result["report"]), name="deskresearch")]}
