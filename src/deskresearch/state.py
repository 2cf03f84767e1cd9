"""Graph state: input/output schemas, the working state, the values between stages, reducers.

The payloads and states of the map steps' branches are in ``nodes/branch_state.py``.

Each key names its owning node module in a trailing comment. Keys written by parallel branches
have a reducer; ``start_run`` resets every reducer list so a reused thread starts clean.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from deskresearch.records import (
    MARKED_CALLS,
    Change,
    Citation,
    Decider,
    Disagreement,
    Dispute,
    Fact,
    Provenance,
    RoundQuery,
    RoundRecord,
    SearchHit,
    Source,
    Status,
    Usage,
)


def merge_usage(left: list[Usage], right: list[Usage]) -> list[Usage]:
    """Add token counts per (stage, model), so usage stays one row per pair however many calls."""
    merged: dict[tuple[str, str], Usage] = {(u["stage"], u["model"]): Usage(**u) for u in left}
    for u in right:
        key = (u["stage"], u["model"])
        if key in merged:
            row = merged[key]
            row["input_tokens"] += u["input_tokens"]
            row["output_tokens"] += u["output_tokens"]
            row["calls"] += u["calls"]
            for marked in MARKED_CALLS:
                if u.get(marked):
                    row[marked] = row.get(marked, 0) + u[marked]
        else:
            merged[key] = Usage(**u)
    return list(merged.values())


# ---- values passed between stages ----------------------------------------------------------


class KeywordHits(TypedDict):
    """Search results for one keyword."""

    keyword: str
    hits: list[SearchHit]
    error: str  # why the search failed for good ("" when it answered, with or without hits)


class RankedQuery(TypedDict):
    """The pages kept for one research query, best first."""

    query: str
    order: int  # position of the query in the plan, so merging branches keeps a stable order
    hits: list[SearchHit]
    round: int  # the research round that searched it


class ChunkNote(TypedDict):
    """What the model found in one chunk of a page."""

    index: int
    relevant: bool
    facts: list[Fact]  # each quote checked against the chunk
    error: str  # why the chunk could not be summarised ("" when it was)


class PageDigest(TypedDict):
    """A page that survived reading and summarising; becomes a Source in collect_sources."""

    url: str
    title: str
    site: str
    published: str
    date_read: str
    queries: list[str]
    text_hash: str
    origin: str
    facts: list[Fact]  # empty until reduce_page
    order: int
    text: str  # the text that was summarised: what the citation check reads
    language: str  # two-letter code of the text ("" when unknown)
    round: int  # the research round that read it


class SectionPlan(TypedDict):
    """One section of the outline: its heading, what it covers, the sources it draws on."""

    heading: str
    focus: str
    sources: list[int]


class ReportOutline(TypedDict):
    """The report's title and sections (sections mode)."""

    title: str
    sections: list[SectionPlan]


class SectionDraft(TypedDict):
    """One written section (sections mode)."""

    index: int
    heading: str
    text: str  # "" when the section could not be written
    error: str


CheckStatus = Literal[
    "supported",
    "re-cited",
    "pending",
    "unsupported",
    "disputed",  # code's check of the evidence contradicts the judge: repair_report asks again
    "rewritten",
    "removed",
    "unchecked",
]


class SentenceCheck(TypedDict):
    """One cited sentence of the draft on its way through the citation check."""

    unit: int  # where it is in the draft (grounding.draft: unit, sentence index)
    index: int
    sentence: str  # as the writer wrote it
    cites: list[int]
    section: str
    status: CheckStatus
    source: int | None  # the source that backs it (re-cited: the new one)
    quote: str
    decided_by: Decider
    reason: str
    candidates: list[int]  # uncited sources worth showing the judge
    replacement: str  # rewritten: the new sentence
    dispute: NotRequired[Dispute | None]  # the judge's verdict, when code disputed it


# ---- the graph's schemas ------------------------------------------------------------------


TOPIC_EXAMPLE = "How are lithium-ion batteries from electric cars recycled in Europe?"


class ChatMessages(TypedDict):
    """The conversation, for chat front ends (Studio's chat view, Agent Chat UI, A2A).

    A new human message is the topic of a new research (nodes/chat.py); the run answers with
    an AI message carrying the report.
    """

    messages: NotRequired[
        Annotated[
            list[AnyMessage],
            Field(
                description="A chat instead of a topic: the latest human message is the research "
                "question; the answer is an AI message carrying the report."
            ),
            add_messages,  # last: LangGraph takes the reducer from the last annotation
        ]
    ]  # the caller, nodes/start_run.py (a topic as a human message), the terminal nodes


class ResearchInput(ChatMessages):
    """What a caller passes to the graph (Studio shows the descriptions and the example)."""

    __pydantic_config__ = ConfigDict(  # type: ignore[misc]
        json_schema_extra={"examples": [{"topic": TOPIC_EXAMPLE, "language": "en-us"}]}
    )

    topic: NotRequired[
        Annotated[
            str,
            Field(
                description="The research question, in any language (at most 2000 characters); "
                "or send it as a human message in `messages`.",
                examples=[TOPIC_EXAMPLE],
            ),
        ]
    ]
    language: NotRequired[
        Annotated[
            str,
            Field(
                description="Language of the report (en-us, German, zh-cn, ...); default: the "
                "language setting (en-us).",
                examples=["German"],
            ),
        ]
    ]


class ResearchRequest(BaseModel):
    """The input as a pydantic model: ``graph.as_tool(args_schema=ResearchRequest, ...)``.

    ``as_tool`` derives a schema that marks the optional ``language`` as required; this one
    does not, and its descriptions tell a tool-calling model what to pass.
    """

    topic: str = Field(description="The research question, in any language.")
    language: str | None = Field(
        default=None, description="Language of the report (e.g. en-us, German); default: en-us."
    )


OUTPUT_DESCRIPTIONS = {
    "report": "The report as markdown, its references from the source ledger; or, when no "
    "usable source survived, what was tried.",
    "status": "ok (a report that cites at least one page the run read) or "
    "insufficient_evidence (no usable source, or every search failed: see reason); empty while "
    "the run has not finished.",
    "reason": "Why the run ended insufficient_evidence, in one line; empty when ok.",
    "sources": "The source ledger: every page the report may cite as [n], with its URL, "
    "title, dates, content hash and summary.",
    "queries": "The research queries the run searched.",
    "citations": "The verdict on every cited sentence of the report, with the quote that "
    "decided it.",
    "usage": "Tokens and calls per stage and model.",
    "provenance": "The audit trail: what happened to each query, page and citation, and why.",
    "budget_stopped": "True when the token budget ran out and the run stopped gathering.",
    "messages": "The conversation: each question as a human message, each answer as an AI "
    "message carrying the report.",
    "disagreements": "Where independent sources give different values for the same thing at "
    "the same time: what it is about and each value with the sources stating it; only those "
    "whose every side the citation check supported (they close the report too).",
    "changes": "Values that changed over time: the most recently published is the current one, "
    "with the earlier ones and their dates.",
    "rounds": "The research rounds: per round its queries (each with the gap it fills and the "
    "lead it follows, with the fact that names it), pages read, what was answered and still "
    "missing, tokens and seconds.",
}


def _describe_output(schema: dict[str, Any]) -> None:
    """Give every output field its description in the JSON schema (Studio, the SDK)."""
    for name, prop in schema.get("properties", {}).items():
        if name in OUTPUT_DESCRIPTIONS:
            prop.setdefault("description", OUTPUT_DESCRIPTIONS[name])


class ResearchOutput(ChatMessages):
    """What the graph returns."""

    __pydantic_config__ = ConfigDict(json_schema_extra=_describe_output)  # type: ignore[misc]

    report: str  # nodes/finish_report.py, nodes/insufficient.py
    # nodes/finish_report.py, nodes/insufficient.py ("" until then: outcome.py has the rule)
    status: Status | Literal[""]
    reason: str  # nodes/finish_report.py, nodes/insufficient.py: why not ok ("" when ok)
    sources: list[Source]  # nodes/collect_sources.py
    queries: list[str]  # nodes/plan_queries.py (round 1), nodes/reflect.py (later rounds)
    citations: list[Citation]  # nodes/finish_report.py: the verdict on every cited sentence
    usage: Annotated[list[Usage], merge_usage]  # every model-calling node
    provenance: Annotated[list[Provenance], operator.add]  # every node
    budget_stopped: Annotated[bool, operator.or_]  # error handlers of budgeted stages
    rounds: list[RoundRecord]  # nodes/reflect.py: one record as each round ends
    disagreements: list[Disagreement]  # nodes/finish_report.py: those the check supported
    changes: list[Change]  # nodes/weigh_evidence.py


class ResearchState(ResearchInput, ResearchOutput):
    """The working state of one run."""

    settings: dict[str, Any]  # nodes/start_run.py: the run's Context, so a resume can reuse it
    run_id: str  # nodes/start_run.py: names this run's page claims (services.claims)
    asked: str  # nodes/start_run.py: id of the human message researched (never taken twice)
    keywords: list[str]  # nodes/keywords.py
    keyword_attempts: int  # nodes/keywords.py
    keyword_hits: Annotated[list[KeywordHits], operator.add]  # nodes/search.py (search_keyword)
    # nodes/reflect.py (start_run sets 1): the research round under way, the time it started,
    # the queries that start the next one, and the gaps left when the research stops
    round: int
    round_started: float
    followups: list[RoundQuery]
    open_gaps: list[str]
    ranked: Annotated[list[RankedQuery], operator.add]  # nodes/rank_urls.py, one per query branch
    page_tasks: list[PageTask]  # nodes/dedup_urls.py: this round's pages
    read_urls: Annotated[list[str], operator.add]  # nodes/claim_pages.py: read as ranked
    dropped_urls: list[str]  # nodes/review_plan.py: pages a reviewer left out (every round)
    pages: Annotated[list[PageDigest], operator.add]  # nodes/summarise.py (reduce_page)
    report_attempts: int  # nodes/write_report.py
    report_cited: bool  # nodes/write_report.py
    disagreements_found: list[
        Disagreement
    ]  # nodes/weigh_evidence.py: found, before the citation check
    outline: ReportOutline | None  # nodes/plan_report.py (None: single mode, or no usable outline)
    sections: Annotated[list[SectionDraft], operator.add]  # nodes/write_sections.py
    # nodes/write_report.py, nodes/write_sections.py (assemble_report): the report body,
    # before the citation check and the references
    draft: str
    # nodes/check_citations.py (check_citations), nodes/settle_citations.py,
    # nodes/repair_report.py: each node hands the whole list on (sequential, no reducer)
    checks: list[SentenceCheck]
    # nodes/check_citations.py: the judge's verdicts, one per pending sentence, from every
    # judge_citations branch; check_citations resets it, settle_citations merges it into checks
    judged: Annotated[list[SentenceCheck], operator.add]


# ---- the payload of a page branch (the other branches' payloads: nodes/branch_state.py) ----


class PageTask(TypedDict):
    """Payload of one process_page branch: one canonical URL, every query it serves."""

    url: str
    title: str
    snippet: str
    raw_content: str | None
    content_type: str | None
    queries: list[str]
    topic: str
    language: str
    order: int
    round: int  # the research round that reads it
