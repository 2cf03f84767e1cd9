"""Prompt for rank_urls: keep and order one query's search results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, attr, data
from deskresearch.records import SearchHit

SYSTEM = (
    """You select sources for a research report. Today is {today}.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Research topic:
<topic>
{topic}
</topic>

Query:
<queries>
{query}
</queries>

<results>
{results}
</results>

Drop the results that do not bear on the query. Order the rest by relevance to the query, then
credibility of the source (official, scientific, established publishers first), then recency
(today is {today}). Answer with the indices of the kept results, best first."""


def format_hits(hits: Sequence[SearchHit]) -> str:
    """Render hits as an indexed list."""
    return "\n".join(
        f"[{i}] {attr(h['title']) or '(untitled)'} <{attr(h['url'])}>\n    {data(h['snippet'][:500])}"
        for i, h in enumerate(hits)
    )


def render(*, topic: str, query: str, hits: Sequence[SearchHit], today: date) -> list[BaseMessage]:
    """Build the messages; each value is inserted exactly once."""
    return [
        SystemMessage(SYSTEM.format(today=today.isoformat())),
        HumanMessage(
            USER.format(
                topic=data(topic),
                query=data(query),
                results=format_hits(hits),
                today=today.isoformat(),
            )
        ),
    ]
