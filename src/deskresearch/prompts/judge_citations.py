"""Prompt for judge_citations: is each sentence stated by the source it cites?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, attr, data
from deskresearch.records import Source

SYSTEM = (
    """You check a research report's citations against its sources, strictly.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Each sentence below cites sources by number. For each sentence decide:
- supported: a source it cites states what the sentence says (a faithful paraphrase or
  translation counts; every figure must be the source's);
- other_source: it does not, but another source listed here does (give that source's number);
- unsupported: no source listed states it, or a figure differs.
For supported and other_source, give the quote: the few words (3 to 15) of that source's listed
quotes that decide it, copied exactly, in the source's language. Judge every sentence, in any
language; answer as briefly as that allows.

<sentences>
{sentences}
</sentences>

<sources>
{sources}
</sources>"""


def format_sentences(sentences: Sequence[tuple[int, str, Sequence[int]]]) -> str:
    """Render (number, sentence, cited ids) as a numbered list."""
    return "\n".join(
        f"S{n}: {data(text)}  (cites {', '.join(str(i) for i in cited)})"
        for n, text, cited in sentences
    )


def format_evidence(sources: Mapping[int, Source]) -> str:
    """Render the sources' facts: each claim with the quote that states it."""
    blocks = []
    for sid, s in sorted(sources.items()):
        facts = "\n".join(
            f'- {data(f["claim"])}\n  quote: "{data(f["quote"])}"' for f in s["facts"]
        )
        when = f"published {attr(s['published']) or 'undated'}, read {attr(s['date_read'])}"
        blocks.append(f"[{sid}] {attr(s['title'] or s['url'])} ({when})\n{facts or '- (no facts)'}")
    return "\n\n".join(blocks)


def render(
    *, sentences: Sequence[tuple[int, str, Sequence[int]]], sources: Mapping[int, Source]
) -> list[BaseMessage]:
    """Build the messages; each value is inserted exactly once."""
    return [
        SystemMessage(SYSTEM),
        HumanMessage(
            USER.format(sentences=format_sentences(sentences), sources=format_evidence(sources))
        ),
    ]
