"""Prompt for write_report: the cited report, from numbered sources only."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, attr, data, language_tag
from deskresearch.records import Source

SYSTEM = (
    """You are a careful research analyst. Write in {language}. Today is {today}.
Use only the numbered sources you are given; never add facts from memory.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Research topic:
<topic>
{topic}
</topic>

<sources>
{sources}
</sources>

Write an objective research report on the topic in structured markdown: a title, a short summary,
sections with headings, and comparative tables where they help. Aim for about {words} words.
Each source lists the facts it states. State only those facts, and cite each statement inline
with the number of the source that states it, in square brackets, e.g. [1] or [2][3]; a figure
must be written as the source gives it. Where sources disagree, say so. Every cited sentence is
checked against its source afterwards. Do not write a references or sources list: it is added
automatically.{retry_note}"""

RETRY_NOTE = """

Your previous draft cited no source. Every factual statement needs a citation such as [1]."""

SOURCE_HEADER = "[{id}] {title} ({site}, {published}) <{url}>"


def format_sources(sources: Sequence[Source]) -> str:
    """Render the ledger as numbered blocks: each source's header, then its facts."""
    return "\n\n".join(
        SOURCE_HEADER.format(
            id=s["id"],
            title=attr(s["title"]) or "(untitled)",
            site=attr(s["site"]) or "unknown site",
            published=attr(s["published"]) or "undated",
            url=attr(s["url"]),
        )
        + "\n"
        + "\n".join(f"- {data(f['claim'])}" for f in s["facts"])
        for s in sources
    )


def render(
    *,
    topic: str,
    sources: Sequence[Source],
    words: int,
    language: str,
    today: date,
    retry: bool,
) -> list[BaseMessage]:
    """Build the messages; ``retry`` adds a reminder after an uncited draft."""
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language), today=today.isoformat())),
        HumanMessage(
            USER.format(
                topic=data(topic),
                sources=format_sources(sources),
                words=words,
                retry_note=RETRY_NOTE if retry else "",
            )
        ),
    ]
