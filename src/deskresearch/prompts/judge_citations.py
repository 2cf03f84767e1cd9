"""Prompt for judge_citations: is each sentence stated by the source it cites?"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

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
For supported and other_source, give that source's number and the number of its fact that
decides it (the fact listed as (2) is 2). Judge every sentence, in any language; answer as
briefly as that allows.

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


def format_evidence(
    sources: Mapping[int, Source],
    *,
    numbered: bool = False,
    shown: Mapping[int, Collection[int]] | None = None,
) -> str:
    """Render the sources' facts: each claim with the quote that states it.

    ``numbered``: each fact carries its number, ``(1)`` first, for the judge to name (a number
    is a few tokens of output where a copied quote is dozens). ``shown``: the numbers in its
    source of the facts to list (default all), the others said to be left out; the listed ones
    are numbered from 1 as listed, gaps closed, so a model that counts them names the same
    number as one that reads it (``check_citations.verified`` maps it back).
    """
    blocks = []
    for sid, s in sorted(sources.items()):
        listed = [
            f for n, f in enumerate(s["facts"], 1) if shown is None or n in shown.get(sid, ())
        ]
        facts = "\n".join(
            f'- {f"({n}) " * numbered}{data(f["claim"])}\n  quote: "{data(f["quote"])}"'
            for n, f in enumerate(listed, 1)
        )
        if left := len(s["facts"]) - len(listed):
            facts += f"\n- ({left} other facts of this source left out to fit the window)"
        when = f"published {attr(s['published']) or 'undated'}, read {attr(s['date_read'])}"
        blocks.append(f"[{sid}] {attr(s['title'] or s['url'])} ({when})\n{facts or '- (no facts)'}")
    return "\n\n".join(blocks)


def render(
    *,
    sentences: Sequence[tuple[int, str, Sequence[int]]],
    sources: Mapping[int, Source],
    shown: Mapping[int, Collection[int]] | None = None,
) -> list[BaseMessage]:
    """Build the messages; each value is inserted exactly once (``shown``: format_evidence's)."""
    return [
        SystemMessage(SYSTEM),
        HumanMessage(
            USER.format(
                sentences=format_sentences(sentences),
                sources=format_evidence(sources, numbered=True, shown=shown),
            )
        ),
    ]
