"""Prompt for repair_report: rewrite the sentences the citation check could not back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, data, language_tag
from deskresearch.prompts.judge_citations import format_evidence
from deskresearch.records import Source

SYSTEM = (
    """You correct a research report so that it says only what its sources state. Write in
{language}.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """These sentences of the report are not backed by the sources they cite:
<sentences>
{sentences}
</sentences>

The paragraphs they stand in:
<paragraphs>
{paragraphs}
</paragraphs>

The evidence of the sources those paragraphs cite:
<sources>
{sources}
</sources>

For each sentence, give a replacement that states only what one of these sources states, with
every figure exactly as that source gives it, citing that source as [n]; give its number and
the quote that states it, copied exactly from its quotes. If no source states anything the
sentence could say, give an empty replacement: the sentence is then removed."""


def render(
    *,
    sentences: Sequence[tuple[int, str, str]],
    paragraphs: Sequence[str],
    sources: Mapping[int, Source],
    language: str,
) -> list[BaseMessage]:
    """Build the messages; ``sentences`` are (number, sentence, why it failed)."""
    listed = "\n".join(
        f"S{n}: {data(text)}\n    problem: {data(why)}" for n, text, why in sentences
    )
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language))),
        HumanMessage(
            USER.format(
                sentences=listed,
                paragraphs="\n\n".join(data(p) for p in paragraphs),
                sources=format_evidence(sources),
            )
        ),
    ]
