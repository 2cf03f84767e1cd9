"""Prompt for plan_report: the report's outline, and which sources each section draws on."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, data, language_tag
from deskresearch.prompts.write_report import format_sources
from deskresearch.records import Source

SYSTEM = (
    """You plan research reports. Write in {language}. Today is {today}.
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

Plan an objective report of about {words} words on the topic from these sources: a title and
{min_sections} to {max_sections} sections. The first section is a short overview that answers
the topic; the last one concludes; the ones between each cover one aspect. For each section give
its heading, one line saying what it covers, and the numbers of the sources it draws on. Every
source should serve at least one section; a section draws only on sources that state what it
covers."""


def render(
    *,
    topic: str,
    sources: Sequence[Source],
    words: int,
    min_sections: int,
    max_sections: int,
    language: str,
    today: date,
) -> list[BaseMessage]:
    """Build the messages; each value is inserted exactly once."""
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language), today=today.isoformat())),
        HumanMessage(
            USER.format(
                topic=data(topic),
                sources=format_sources(sources),
                words=words,
                min_sections=min_sections,
                max_sections=max_sections,
            )
        ),
    ]
