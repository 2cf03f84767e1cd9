"""Payloads and states of the map steps' branches (what each ``Send`` carries, what it hands back).

The main graph's state is ``deskresearch.state``; a page branch's payload (``PageTask``) lives
there too, as the main state keeps a round's page tasks. Each key names its owning node module.
"""

from __future__ import annotations

import operator
from typing import Annotated, Literal, NotRequired

from typing_extensions import TypedDict

from deskresearch.records import Change, Disagreement, Provenance, SearchHit, Source, Usage
from deskresearch.state import (
    ChunkNote,
    PageDigest,
    PageTask,
    RankedQuery,
    SectionPlan,
    SentenceCheck,
    merge_usage,
)


class KeywordTask(TypedDict):
    """Payload of one search_keyword branch."""

    keyword: str


class QueryTask(TypedDict):
    """Payload of one research_query branch (search_query → rank_urls)."""

    topic: str
    query: str
    order: int
    known_hits: list[SearchHit] | None  # the keyword stage's results when query == a keyword
    run_id: str  # whose page claims these are (services.claims)
    language: str
    plan: list[str]  # every query so far: what a page read here is summarised for
    round: int  # the research round it belongs to
    seen: list[str]  # canonical URLs earlier rounds read: never read again


class QueryOutput(TypedDict):
    """What a research_query branch hands back to the main graph."""

    ranked: Annotated[list[RankedQuery], operator.add]  # nodes/rank_urls.py
    read_urls: Annotated[list[str], operator.add]  # nodes/claim_pages.py: pages read here
    pages: Annotated[list[PageDigest], operator.add]  # nodes/summarise.py (reduce_page)
    usage: Annotated[list[Usage], merge_usage]
    provenance: Annotated[list[Provenance], operator.add]
    budget_stopped: Annotated[bool, operator.or_]


class QueryState(QueryTask, QueryOutput):
    """State inside one research_query branch.

    search_query → rank_urls → claim_pages → process_page*.
    """

    hits: list[SearchHit]  # nodes/search.py (search_query)
    page_tasks: list[PageTask]  # nodes/claim_pages.py: the pages this branch reads


class PageOutput(TypedDict):
    """What a process_page branch hands back to the main graph."""

    pages: Annotated[list[PageDigest], operator.add]  # nodes/summarise.py (reduce_page)
    usage: Annotated[list[Usage], merge_usage]
    provenance: Annotated[list[Provenance], operator.add]
    budget_stopped: Annotated[bool, operator.or_]


class PageState(PageTask, PageOutput):
    """State inside one process_page branch (read_page → summarise_chunk* → reduce_page)."""

    chunks: list[str]  # nodes/read_page.py; empty when the page was rejected
    page: NotRequired[PageDigest]  # nodes/read_page.py, without its facts yet
    chunk_notes: Annotated[list[ChunkNote], operator.add]  # nodes/summarise.py (summarise_chunk)


class SectionTask(TypedDict):
    """Payload of one write_section branch."""

    index: int
    topic: str
    language: str
    title: str
    headings: list[str]
    plan: SectionPlan
    position: Literal["first", "middle", "last"]
    sources: list[Source]
    words: int
    disagreements: list[Disagreement]  # those a side of which cites one of its sources
    changes: list[Change]  # likewise


class JudgeTask(TypedDict):
    """Payload of one judge_citations branch: a batch of the sentences code left pending.

    A branch sees only its task, so it carries the sources its prompt shows (those the batch
    cites, and the candidates code found) and what was read of them (to confirm quotes).
    """

    batch: int  # 1-based, of ``batches``
    batches: int  # judge calls for this draft
    pending: int  # sentences pending across all batches (progress)
    checks: list[SentenceCheck]  # the batch, in draft order, all pending
    sources: list[Source]
    pages: list[PageDigest]


class ChunkTask(TypedDict):
    """Payload of one summarise_chunk branch."""

    url: str
    title: str
    queries: list[str]
    topic: str
    language: str
    index: int
    chunk: str
