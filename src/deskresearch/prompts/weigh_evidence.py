"""Prompt for weigh_evidence: are two facts that give different values about the same thing?

The model sees only the facts code paired (claims and quotes, never whole pages) and answers,
per pair, whether both state the same thing for the same scope. Whether different values are a
disagreement or a change over time is decided afterwards, by code, from the dates.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, data, language_tag

SYSTEM = (
    """You compare facts that different web pages state, carefully and literally.
"""
    + DATA_NOT_INSTRUCTIONS
)

USER = """Research topic:
<topic>
{topic}
</topic>

Facts from different sources, numbered, each with its source and the page's publication date:
<facts>
{facts}
</facts>

Pairs of these facts that give different values:
{pairs}

For each pair decide "same": do both facts state the same thing — the same quantity, date, name
or yes/no fact, about the same subject, for the same scope (place, population, unit,
definition)? Answer same even when the two were stated at different times: dates are compared
afterwards. A different subject, scope or definition is not the same (a plant's staff and the
whole company's; a share of sales and a share of profit). For each pair that is the same, say
in "about", in a few words in the report's language, what it is about. Report language:
{language}"""


Shown = tuple[int, int, str, str, str]  # a fact: its number, source, published, claim, quote


def format_fact(fact: Shown) -> str:
    """One fact as the prompt shows it."""
    number, source, published, claim, quote = fact
    when = data(published) or "undated"
    return (
        f'F{number} (source [{source}], published {when}): {data(claim)}\n   quote: "{data(quote)}"'
    )


def render(
    *, topic: str, facts: Sequence[Shown], pairs: Sequence[tuple[int, int, int]], language: str
) -> list[BaseMessage]:
    """Build the messages for one weighing call: ``pairs`` are (pair, fact, fact) numbers."""
    shown = "\n".join(format_fact(f) for f in sorted(facts))
    listed = "\n".join(f"P{n}: F{a} and F{b}" for n, a, b in pairs)
    return [
        SystemMessage(SYSTEM),
        HumanMessage(
            USER.format(
                topic=data(topic), facts=shown, pairs=listed, language=language_tag(language)
            )
        ),
    ]
