"""Prompts for summarise_chunk (map) and reduce_page (one call per page with several chunks)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS

SYSTEM = (
    """You extract facts for a research report. Write in {language}.
"""
    + DATA_NOT_INSTRUCTIONS
)

CHUNK = """Research topic: {topic}
Queries this page serves:
{queries}

<page url="{url}" title="{title}">
{chunk}
</page>

If the text does not bear on the topic or the queries, set relevant to false and leave the summary
empty. Otherwise set relevant to true and summarise what bears on them: keep every fact, number,
date and statistic, with who said it; add nothing that is not in the text."""

REDUCE = """Research topic: {topic}
Queries this page serves:
{queries}

Notes taken from consecutive parts of the page {url} ("{title}"):
<page url="{url}">
{notes}
</page>

Merge the notes into one summary of the page: keep every fact, number, date and statistic, remove
repetition, add nothing that is not in the notes."""


def _queries(queries: Sequence[str]) -> str:
    return "\n".join(f"- {q}" for q in queries)


def render_chunk(
    *, topic: str, queries: Sequence[str], url: str, title: str, chunk: str, language: str
) -> list[BaseMessage]:
    """Build the messages for one chunk."""
    return [
        SystemMessage(SYSTEM.format(language=language)),
        HumanMessage(
            CHUNK.format(topic=topic, queries=_queries(queries), url=url, title=title, chunk=chunk)
        ),
    ]


def render_reduce(
    *, topic: str, queries: Sequence[str], url: str, title: str, notes: Sequence[str], language: str
) -> list[BaseMessage]:
    """Build the messages that merge one page's chunk notes."""
    joined = "\n\n".join(f"({i + 1}) {n}" for i, n in enumerate(notes))
    return [
        SystemMessage(SYSTEM.format(language=language)),
        HumanMessage(
            REDUCE.format(
                topic=topic, queries=_queries(queries), url=url, title=title, notes=joined
            )
        ),
    ]
