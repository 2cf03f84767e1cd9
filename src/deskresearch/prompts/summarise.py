"""Prompts for summarise_chunk (map: facts with quotes) and reduce_page (choose a page's facts)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, attr, data, language_tag
from deskresearch.records import Fact

SYSTEM = (
    """You extract facts for a research report. Write in {language}.
"""
    + DATA_NOT_INSTRUCTIONS
)

CHUNK = """Research topic:
<topic>
{topic}
</topic>

Queries this page serves:
<queries>
{queries}
</queries>

<page url="{url}" title="{title}">
{chunk}
</page>

If the text does not bear on the topic or the queries, set relevant to false and give no facts.
Otherwise set relevant to true and list the facts that bear on them: every fact, number, date and
statistic, with who said it. For each fact give
- claim: the fact in {language}, one short sentence, adding nothing that is not in the text;
- quote: the shortest span of the text that states it (a clause or a phrase, not more of the
  sentence than the fact needs), copied exactly: same language, same spelling, same figures.
A fact without an exact quote is discarded."""

REDUCE = """Research topic:
<topic>
{topic}
</topic>

Queries this page serves:
<queries>
{queries}
</queries>

Facts taken from consecutive parts of the page below, each with its quote:
<page url="{url}" title="{title}">
{notes}
</page>

Keep at most {max_facts} facts: those that bear most on the queries, one per distinct fact (merge
repeats). Give each kept fact with its claim and its quote exactly as listed; add nothing."""


def _queries(queries: Sequence[str]) -> str:
    return "\n".join(f"- {data(q)}" for q in queries)


def render_chunk(
    *, topic: str, queries: Sequence[str], url: str, title: str, chunk: str, language: str
) -> list[BaseMessage]:
    """Build the messages for one chunk."""
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language))),
        HumanMessage(
            CHUNK.format(
                topic=data(topic),
                queries=_queries(queries),
                url=attr(url),
                title=attr(title),
                chunk=data(chunk),
                language=language_tag(language),
            )
        ),
    ]


def format_facts(facts: Sequence[Fact]) -> str:
    """Render facts as numbered claim/quote pairs."""
    return "\n".join(
        f'({i + 1}) claim: {data(f["claim"])}\n    quote: "{data(f["quote"])}"'
        for i, f in enumerate(facts)
    )


def render_reduce(
    *,
    topic: str,
    queries: Sequence[str],
    url: str,
    title: str,
    facts: Sequence[Fact],
    max_facts: int,
    language: str,
) -> list[BaseMessage]:
    """Build the messages that choose one page's facts among its chunks' facts."""
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language))),
        HumanMessage(
            REDUCE.format(
                topic=data(topic),
                queries=_queries(queries),
                url=attr(url),
                title=attr(title),
                notes=format_facts(facts),
                max_facts=max_facts,
            )
        ),
    ]
