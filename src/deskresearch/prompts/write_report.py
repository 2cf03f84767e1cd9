"""Prompt for write_report: the cited report, from numbered sources only."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deskresearch.prompts.common import DATA_NOT_INSTRUCTIONS, attr, data, language_tag
from deskresearch.records import Change, Disagreement, Source

SYSTEM = (
    """You are a careful research analyst. Write in {language}. Today is {today}.
Use only the numbered sources you are given; never add facts from memory.
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
{weighing}
Write an objective research report on the topic in structured markdown: a title, a short summary,
sections with headings, and comparative tables where they help. Aim for about {words} words.
Each source lists the facts it states. State only those facts, and cite each statement inline
with the number of the source that states it, in square brackets, e.g. [1] or [2][3]; a figure
must be written as the source gives it. {weigh_rules}Every cited sentence is checked against its
source afterwards. Do not write a references or sources list: it is added
automatically.{retry_note}"""

RETRY_NOTE = """

Your previous draft cited no source. Every factual statement needs a citation such as [1]."""

SOURCE_HEADER = "[{id}] {title} ({site}, published {published}, read {read}) <{url}>"
COPY_NOTE = "\n  (a copy of source [{of}]'s text: one origin with it, not a second confirmation)"
COPY_RULE = (
    "Sources marked as a copy carry another source's text: they are one origin, never "
    "independent confirmation (never write that several sources confirm what one origin says)."
)
DISAGREE_RULE = (
    "Where <weighing> says independent sources disagree, state each value with its own "
    "citation and never one of them as settled."
)
CHANGE_RULE = (
    "Where <weighing> says a value changed over time, present the current one as current "
    '("as of <year>") and date each older one ("in <year>").'
)
BASE_RULE = "Where sources disagree, say so."


def weigh_rules(
    sources: Sequence[Source], disagreements: Sequence[Disagreement], changes: Sequence[Change]
) -> str:
    """The writing rules the weighing calls for (only those that apply: each costs tokens)."""
    rules = [BASE_RULE]
    rules += [COPY_RULE] if any(s.get("copy_of") is not None for s in sources) else []
    rules += [DISAGREE_RULE] if disagreements else []
    rules += [CHANGE_RULE] if changes else []
    return " ".join(rules) + " "


def _facts(s: Source, shown: set[str]) -> str:
    """A source's facts; a copy lists only the facts its original does not already give."""
    own = [f for f in s["facts"] if " ".join(f["quote"].casefold().split()) not in shown]
    if not own:
        return f"  (the same facts as source [{s.get('copy_of')}]: cite that source for them)"
    return "\n".join(f"- {data(f['claim'])}" for f in own)


def format_sources(sources: Sequence[Source]) -> str:
    """Render the ledger as numbered blocks: each source's header, then its facts."""
    quotes = {
        s["id"]: {" ".join(f["quote"].casefold().split()) for f in s["facts"]} for s in sources
    }
    blocks = []
    for s in sources:
        of = s.get("copy_of")
        header = SOURCE_HEADER.format(
            id=s["id"],
            title=attr(s["title"]) or "(untitled)",
            site=attr(s["site"]) or "unknown site",
            published=attr(s["published"]) or "undated",
            read=attr(s["date_read"]) or "unknown",
            url=attr(s["url"]),
        )
        if of is not None:
            header += COPY_NOTE.format(of=of)
        shown = quotes.get(of, set()) if of is not None else set()
        blocks.append(header + "\n" + _facts(s, shown))
    return "\n\n".join(blocks)


def _cites(ids: Sequence[int]) -> str:
    return "".join(f"[{i}]" for i in ids)


def format_weighing(disagreements: Sequence[Disagreement], changes: Sequence[Change]) -> str:
    """The weighing's findings as a data block ("" when there are none)."""
    lines: list[str] = []
    if changes:
        lines.append("Changed over time (the first value is the current one):")
        for c in changes:
            now = c["current"]
            was = "; ".join(
                f"in {data(s['as_of']) or 'an earlier year'}: {data(s['claim'])} {_cites(s['cites'])}"
                for s in c["earlier"]
            )
            lines.append(f"- {data(c['about'])}: as of {data(now['as_of'])}: {data(now['claim'])} "
                         f"{_cites(now['cites'])}; {was}")  # fmt: skip
    if disagreements:
        lines.append("Independent sources disagree (state each value with its citation):")
        for d in disagreements:
            sides = "; ".join(f"{data(s['claim'])} {_cites(s['cites'])}" for s in d["sides"])
            lines.append(f"- {data(d['about'])}: {sides}")
    return "\n<weighing>\n" + "\n".join(lines) + "\n</weighing>\n" if lines else ""


def render(
    *,
    topic: str,
    sources: Sequence[Source],
    words: int,
    language: str,
    today: date,
    retry: bool,
    disagreements: Sequence[Disagreement] = (),
    changes: Sequence[Change] = (),
) -> list[BaseMessage]:
    """Build the messages; ``retry`` adds a reminder after an uncited draft."""
    return [
        SystemMessage(SYSTEM.format(language=language_tag(language), today=today.isoformat())),
        HumanMessage(
            USER.format(
                topic=data(topic),
                sources=format_sources(sources),
                weighing=format_weighing(disagreements, changes),
                weigh_rules=weigh_rules(sources, disagreements, changes),
                words=words,
                retry_note=RETRY_NOTE if retry else "",
            )
        ),
    ]
