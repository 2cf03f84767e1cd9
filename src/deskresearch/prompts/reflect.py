"""Prompt for reflect: the facts gathered so far against the question; what is missing, what next."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, data, language_tag

SYSTEM = (
    """You review research in progress. Write in {language}.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Research question:
<topic>
{topic}
</topic>

Searches already run (never propose one of these again):
<queries>
{queries}
</queries>

Facts gathered so far, numbered, each with the page it comes from:
<facts>
{facts}
</facts>

Follow-up queries allowed: <followups_allowed>{allowed}</followups_allowed>

1. answered: the parts of the question these facts answer, each with the numbers of the facts
   that answer it.
2. gaps: what the question still needs that no fact gives, one short line each, in {language}.
   Only what the question asks for; none when the facts answer it.
3. followups: at most the number allowed above (none when it is 0), each a web search that could
   fill one gap: its query, the gap it fills, and, when it follows a lead, the lead and the
   number of the fact that names it. A lead is a name a fact mentions that the question does not:
   the company that built something, the study an article quotes, the law a post cites, the
   dataset behind a figure. Search a lead by its own name, written exactly as the fact writes it
   (names are not translated; add at most two words of the gap, in the language of the page
   that names it), not the question again. No follow-up when nothing is missing."""


def format_facts(facts: Sequence[tuple[str, int]]) -> str:
    """Render (claim, page number) pairs as numbered lines: ``[3] claim (page 2)``."""
    lines = [f"[{i}] {data(' '.join(claim.split()))} (page {page})"
             for i, (claim, page) in enumerate(facts, 1)]  # fmt: skip
    return "\n".join(lines) or "(no facts yet)"


def render(
    *,
    topic: str,
    queries: Sequence[str],
    facts: Sequence[tuple[str, int]],
    allowed: int,
    language: str,
) -> list[BaseMessage]:
    """Build the messages: every caller- and page-derived text inside a data block."""
    searched = "\n".join(f"- {data(' '.join(q.split()))}" for q in queries) or "(none)"
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language))),
        HumanMessage(
            USER.format(
                topic=data(topic),
                queries=searched,
                facts=format_facts(facts),
                allowed=allowed,
                language=language_tag(language),
            )
        ),
    ]
