"""Prompt for recheck_citations: claim by claim, do the passages code found state it?

The third way of asking about a disputed verdict, built unlike the judge's prompt (whole
sentences against every source's facts) and the rewrite's (sentences in their paragraphs): each
sentence is split into its claims, and each claim is shown with the passages of its sources that
come closest to it, so the question is one claim against two passages.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, data

SYSTEM = (
    """You check, claim by claim, whether passages quoted from a report's sources state what
the report says, strictly.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Each sentence of a report below is split into its claims; under each claim are the
passages of its sources that come closest to it: the source's number, the quote copied from it,
and what the quote says in the report's language. For each claim, say whether those passages
state it: a faithful paraphrase or translation counts; a figure they do not give, or a claim
they only touch on, does not. Answer for every claim.

<sentences>
{sentences}
</sentences>"""

Passage = tuple[int, str, str]  # source id, quote, what it says (the fact's claim)


def format_claims(sentences: Sequence[tuple[str, Sequence[tuple[str, Sequence[Passage]]]]]) -> str:
    """Render each sentence, its claims and the passages under each claim."""
    lines = []
    for n, (sentence, claims) in enumerate(sentences, start=1):
        lines.append(f"S{n}: {data(sentence)}")
        for k, (claim, passages) in enumerate(claims, start=1):
            lines.append(f"  C{k}: {data(claim)}")
            lines += [f'    [{sid}] quote: "{data(q)}" — says: {data(c)}' for sid, q, c in passages]
            if not passages:
                lines.append("    (no passage)")
    return "\n".join(lines)


def render(
    *, sentences: Sequence[tuple[str, Sequence[tuple[str, Sequence[Passage]]]]]
) -> list[BaseMessage]:
    """Build the messages; ``sentences`` are (sentence, [(claim, passages)])."""
    return [
        SystemMessage(SYSTEM),
        HumanMessage(USER.format(sentences=format_claims(sentences))),
    ]
