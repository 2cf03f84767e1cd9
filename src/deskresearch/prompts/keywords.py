"""Prompt for generate_keywords: search keywords for the topic."""

from __future__ import annotations

from datetime import date

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import data

SYSTEM = """You plan web searches for a research report. Today is {today}."""

USER = """Research topic:
<topic>
{topic}
</topic>

Propose up to {max_keywords} search keywords or short phrases that together cover the topic.
Each must work on its own as a web search; prefer the language in which the best sources are written."""


def render(*, topic: str, max_keywords: int, today: date) -> list[BaseMessage]:
    """Build the messages; each value is inserted exactly once."""
    return [
        SystemMessage(SYSTEM.format(today=today.isoformat())),
        HumanMessage(USER.format(topic=data(topic), max_keywords=max_keywords)),
    ]
