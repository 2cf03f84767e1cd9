"""Prompt for write_section: one section of the report, written while the others are."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import attr, data, language_tag
from deskresearch.prompts.write_report import (
    SYSTEM,
    format_sources,
    format_weighing,
    weigh_rules,
)
from deskresearch.records import Change, Disagreement, Source

USER = """Research topic:
<topic>
{topic}
</topic>

The report's title and its sections, numbered:
<outline title="{title}">
{outline}
</outline>

Write section {number} and nothing else: no title, no heading of its own (it is added), no
references list. What it covers:
<section number="{number}" heading="{heading}">
{focus}
</section>

Aim for about {words} words of structured markdown (paragraphs, lists, a comparative table where
it helps; sub-headings start with ###). {position}

<sources>
{sources}
</sources>
{weighing}
Each source lists the facts it states. State only those facts, and cite each statement inline
with the number of the source that states it, in square brackets, e.g. [1] or [2][3]; a figure
must be written as the source gives it. {weigh_rules}Every cited sentence is checked against its
source afterwards."""

POSITIONS = {
    "first": "It opens the report: answer the topic in brief.",
    "last": "It closes the report: conclude from what the sections before it found.",
    "middle": "Cover this aspect only; the other sections cover theirs.",
}


def render(
    *,
    topic: str,
    title: str,
    headings: Sequence[str],
    heading: str,
    focus: str,
    position: str,
    sources: Sequence[Source],
    words: int,
    language: str,
    today: date,
    disagreements: Sequence[Disagreement] = (),
    changes: Sequence[Change] = (),
) -> list[BaseMessage]:
    """Build the messages for one section; ``position`` is first, middle or last.

    The section is named by its number in the outline: its heading and focus (the model's
    words, from page text) stay inside the data blocks.
    """
    outline = "\n".join(f"{i + 1}. {data(h)}" for i, h in enumerate(headings))
    number = headings.index(heading) + 1 if heading in headings else len(headings) + 1
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language), today=today.isoformat())),
        HumanMessage(
            USER.format(
                topic=data(topic),
                title=attr(title),
                outline=outline,
                number=number,
                heading=attr(heading),
                focus=data(focus),
                position=POSITIONS[position],
                sources=format_sources(sources),
                weighing=format_weighing(disagreements, changes),
                weigh_rules=weigh_rules(sources, disagreements, changes),
                words=words,
            )
        ),
    ]
