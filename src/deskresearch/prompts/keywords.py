"""Prompt for generate_keywords: search keywords for the topic, and the answer's shape.

The texts and the schema come without langchain: the CLI's head start (``deskresearch.cli.headstart``)
sends this prompt before langchain is imported; ``render`` wraps the same texts in messages.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, data

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

SYSTEM = (
    """You plan web searches for a research report. Today is {today}.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Research topic:
<topic>
{topic}
</topic>

Propose up to {max_keywords} search keywords or short phrases that together cover the topic.
Each must work on its own as a web search; prefer the language in which the best sources are written."""


class Keywords(BaseModel):
    """The model's answer to the keywords prompt."""

    keywords: list[str] = Field(description="Search keywords, most useful first.")


def texts(*, topic: str, max_keywords: int, today: date) -> tuple[str, str]:
    """Return the (system, user) texts; each value is inserted exactly once."""
    return (
        SYSTEM.format(today=today.isoformat()),
        USER.format(topic=data(topic), max_keywords=max_keywords),
    )


def render(*, topic: str, max_keywords: int, today: date) -> list[BaseMessage]:
    """Build the messages from :func:`texts`."""
    from langchain_core.messages import HumanMessage, SystemMessage

    system, user = texts(topic=topic, max_keywords=max_keywords, today=today)
    return [SystemMessage(system), HumanMessage(user)]
