"""Prompt for plan_queries: research queries decomposed from the topic and keyword results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, data

SYSTEM = (
    """You decompose a research topic into search queries. Today is {today}.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Research topic:
<topic>
{topic}
</topic>

Search results for the first keywords:
<results>
{results}
</results>

Propose up to {max_queries} research queries that together answer the topic: each a self-contained
web search, none repeating another, covering different aspects (facts, numbers, comparisons, recent
developments)."""


def format_results(groups: Sequence[tuple[str, Sequence[str]]]) -> str:
    """Render (keyword, result lines) groups as the results block."""
    parts = []
    for keyword, lines in groups:
        body = "\n".join(f"- {data(line)}" for line in lines) or "- (no results)"
        parts.append(f"## {data(keyword)}\n{body}")
    return "\n\n".join(parts)


def render(*, topic: str, results: str, max_queries: int, today: date) -> list[BaseMessage]:
    """Build the messages; ``results`` comes from format_results."""
    return [
        SystemMessage(SYSTEM.format(today=today.isoformat())),
        HumanMessage(USER.format(topic=data(topic), results=results, max_queries=max_queries)),
    ]
