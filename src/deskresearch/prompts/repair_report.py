"""Prompt for repair_report: rewrite the sentences the citation check could not back.

Sentences whose verdict the check disputes are asked about here a second time, and differently
from the judge's prompt: one by one, in their paragraph, with only the evidence of the sources
that paragraph cites, and without the judge's verdict or the check's reasons (the answer must
not lean on the first one).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

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

USER = """These sentences of the report may not be backed by the sources they cite:
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
sentence could say, give an empty replacement: the sentence is then removed.{check}"""

CHECK = """

A sentence marked "check first" may be right as written: if a source it cites states what it
says (a faithful paraphrase or translation counts; every figure must be the source's), answer
keep with that source's number and the quote that states it, copied exactly, and no
replacement. Otherwise treat it like the others."""

CHECK_FIRST = "the check could not settle whether the sources it cites state it"


def render(
    *,
    sentences: Sequence[tuple[int, str, str]],
    paragraphs: Sequence[str],
    sources: Mapping[int, Source],
    language: str,
    check_first: Collection[int] = (),
    shown: Mapping[int, Collection[int]] | None = None,
) -> list[BaseMessage]:
    """Build the messages; ``sentences`` are (number, sentence, why it failed).

    The sentences numbered in ``check_first`` are marked to be checked before they are
    rewritten; their own problem is not shown (CHECK_FIRST stands for it). ``shown``: the
    facts listed per source (format_evidence's; default all).
    """
    listed = "\n".join(
        f"S{n} (check first): {data(text)}\n    problem: {CHECK_FIRST}"
        if n in check_first
        else f"S{n}: {data(text)}\n    problem: {data(why)}"
        for n, text, why in sentences
    )
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language))),
        HumanMessage(
            USER.format(
                sentences=listed,
                paragraphs="\n\n".join(data(p) for p in paragraphs),
                sources=format_evidence(sources, shown=shown),
                check=CHECK if check_first else "",
            )
        ),
    ]
