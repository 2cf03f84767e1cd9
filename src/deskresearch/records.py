"""Value types shared by nodes and services.

TypedDicts are what flows through graph state (JSON-serialisable, so checkpoints and the
server can store them); frozen dataclasses are per-run settings handed to services.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NotRequired

from typing_extensions import TypedDict

Stage = Literal[
    "start_run",
    "generate_keywords",
    "keywords_fallback",
    "search_keyword",
    "plan_queries",
    "search_query",
    "rank_urls",
    "claim_pages",
    "dedup_urls",
    "review_plan",
    "read_page",
    "summarise_chunk",
    "reduce_page",
    "reflect",
    "collect_sources",
    "weigh_evidence",
    "brief_writers",
    "write_report",
    "plan_report",
    "write_section",
    "assemble_report",
    "check_citations",
    "judge_citations",
    "repair_report",
    "recheck_citations",
    "finish_report",
    "insufficient_evidence",
]

Outcome = Literal[
    "issued",  # a search query was sent
    "used",  # a page became a numbered source
    "duplicate",  # the same page arrived under another URL or query; fetched once
    "not_relevant",  # ranked out, or no chunk bore on the queries
    "blocked",  # captcha, access denied, cookie wall, near-empty page
    "failed",  # a search or fetch failed for good
    "fallback",  # a step used its documented fallback value
    "removed",  # a citation to an unknown source was removed from the report
    "flagged",  # the result needs a reader's caution (e.g. a report without citations)
    "skipped",  # chunks left out before any model call (no query term in them)
    "cached",  # answered from the persistent cache: a search, a page, or the run's model calls
    "unverified",  # a fact whose quote is not in the page, or a report sentence its source lacks
    "followup",  # a query a later round searches, and why (the gap, the lead and its fact)
    "weighed",  # evidence weighing: copies grouped, a disagreement found, shown or dropped
    "out_of_scope",  # outside the user's scope: a domain not included or excluded, or too old
]

Status = Literal["ok", "insufficient_evidence"]


class SearchHit(TypedDict):
    """One search result as a backend returned it."""

    url: str
    title: str
    snippet: str
    raw_content: str | None  # full text when the backend has it (corpus files)
    content_type: str | None  # of raw_content: "text/html", "text/markdown", "text/plain"


class Provenance(TypedDict):
    """One line of the audit trail: what happened to a query, URL, source or citation, and why."""

    stage: Stage
    subject: str
    outcome: Outcome
    reason: str


class Usage(TypedDict):
    """Tokens and calls spent by one stage on one model."""

    stage: Stage
    model: str
    input_tokens: int
    output_tokens: int
    calls: int  # calls sent to the model
    cached_calls: NotRequired[int]  # calls answered from the cache (no tokens spent)
    counted_calls: NotRequired[int]  # calls the server reported no usage for: our o200k count


# Usage's optional counts: present when not 0, summed where rows are.
MARKED_CALLS: tuple[Literal["cached_calls", "counted_calls"], ...] = (
    "cached_calls",
    "counted_calls",
)


class Fact(TypedDict):
    """One fact taken from a page, with the words of the page that back it."""

    claim: str  # the fact, in the report's language
    quote: str  # verbatim from the page; code has checked it is there


Verdict = Literal["supported", "re-cited", "rewritten", "removed", "unchecked"]
Decider = Literal["lexical", "model", "none"]
JudgeVerdict = Literal["supported", "other_source", "unsupported"]  # as the judge answers
Settled = Literal["code", "asked_again", "unsettled"]


class Opinion(TypedDict):
    """The answer of a prompt built differently from the judge's, about a disputed verdict."""

    stage: Stage  # the step that asked: repair_report (the judge model), recheck_citations
    model: Literal["judge", "report"]  # the model role that answered
    answer: Literal["stated", "not stated"]  # whether the sources it cites state the sentence


class Dispute(TypedDict):
    """A judge's verdict that code's check of the evidence contradicted, and how it was settled."""

    judge: JudgeVerdict  # what the judge answered
    judge_source: int | None  # the source it named
    judge_quote: str  # the quote of the fact it named ("" when none, or one the source lacks)
    found: str  # what code found against the verdict
    asked_again: list[Opinion]  # the differently built prompts asked since, in order
    # code: its finding is certain (a quote not in the source, a figure not in it); asked_again:
    # two of the judge, the facts and the answers since agree; unsettled: left unchecked
    settled_by: Settled
    overruled: bool  # the report went with the opposite of the judge's verdict


class Citation(TypedDict):
    """What the citation check found for one cited sentence of the report."""

    sentence: str  # as it stands in the report ("" when removed)
    original: str  # as the writer wrote it
    sources: list[int]  # the ids it cites (removed: the ids it cited)
    verdict: Verdict
    quote: str  # the source's words that decided it ("" when none did)
    quote_source: int | None  # the source the quote is from
    decided_by: Decider
    reason: str
    section: str  # the heading it sits under
    # The weight of its evidence (absent in results of versions before 0.3): the independent
    # origins among the sources it cites that state it (copies of one text count once; 0 when
    # removed), and the cited sources' dates.
    origins: NotRequired[int]
    published: NotRequired[list[str]]  # each cited source's publication date ("" undated)
    dispute: NotRequired[Dispute | None]  # since 1.3: the judge's verdict, when code disputed it


class Source(TypedDict):
    """One entry of the source ledger: a page we read and may cite as ``[id]``."""

    id: int
    url: str
    title: str
    site: str
    published: str  # as the page states it ("" when unknown)
    date_read: str  # ISO date the page was fetched
    queries: list[str]
    text_hash: str  # sha256 of the extracted text we summarised
    origin: Literal["page", "snippet", "corpus"]
    summary: str  # the facts' claims, one per line
    facts: list[Fact]
    round: int  # the research round that read it (1: the plan's queries; later: follow-ups)
    # Its independent origin (grounding.copies; absent in runs of versions before 0.3): sources
    # with the same number carry one text (a press release and its reprints, a mirror) and
    # count once as evidence. copy_of names the source of its group it copies (None: the
    # group's original), copy_reason why code grouped them.
    origin_group: NotRequired[int]
    copy_of: NotRequired[int | None]
    copy_reason: NotRequired[str]


class ValueSide(TypedDict):
    """One value that independent sources give for a thing, and who gives it."""

    value: str  # the figure, date, name or yes/no as the first source writes it
    claim: str  # the fact that states it (the report's language)
    quote: str  # the page's own words
    sources: list[int]  # every source stating it (copies of one origin included)
    cites: list[int]  # what the report's sentence for it cites: one source per origin
    origins: int  # independent origins among them
    published: list[str]  # their publication dates ("" undated), in the order of sources
    urls: list[str]
    as_of: str  # the year the value holds: the year its fact names, else its page's ("" unknown)


class Disagreement(TypedDict):
    """Independent sources that give different values for the same thing at the same time."""

    about: str  # what the values are of (the weighing model's words)
    kind: Literal["figure", "date", "name", "yes/no"]
    sides: list[ValueSide]  # two or more, each a different value
    checked: bool  # every side's sentence was supported by the citation check


class Change(TypedDict):
    """A value that changed over time: the newest source's value is the current one."""

    about: str
    current: ValueSide  # the most recently published value
    earlier: list[ValueSide]  # older values, newest first


class RoundQuery(TypedDict):
    """One query of a research round, and why it was searched."""

    query: str
    gap: str  # the part of the question it should answer ("" for the plan's queries)
    lead: str  # the name it follows (an entity, a study, a law...), "" when none
    fact: str  # the fact that names the lead ("" when none)
    source: str  # the URL of the page that states that fact ("" when none)


class RoundRecord(TypedDict):
    """One round of research: what it searched, read and spent, and what was still missing."""

    round: int
    queries: list[RoundQuery]
    pages: int  # pages read in this round
    answered: list[str]  # the parts of the question the facts answered after it
    gaps: list[str]  # what was still missing after it
    tokens: int  # model tokens (in + out) spent in it
    seconds: float  # its wall time


@dataclass(frozen=True, kw_only=True)
class CachePolicy:
    """Where the persistent cache lives and how long a cached page is used unasked."""

    path: str  # the SQLite file
    page_ttl_s: float  # after this, a cached page is revalidated (ETag / Last-Modified)


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """Which model to call and how, for one call."""

    model: str
    base_url: str  # "" → OPENAI_BASE_URL or the OpenAI default
    method: Literal["auto", "json_schema", "function_calling", "json_mode", "text"]
    timeout_s: float
    max_concurrent: int = 16  # calls in flight to this endpoint, across all branches
    requests_per_s: float = 0.0  # requests started per second to this endpoint (0: unpaced)
    max_attempts: int = 4  # per call, for 429/5xx/timeouts
    backoff_s: float = 1.0  # first retry delay; doubles per attempt, with jitter
    run_retries: int = 40  # retries one run may spend across all its calls
    token_budget: int = 0  # tokens the run may spend on gathering calls (0: no budget)
    cache: CachePolicy | None = None  # None: answers are neither looked up nor stored


@dataclass(frozen=True, kw_only=True)
class DomainScope:
    """The sites a run may read (``include_domains`` / ``exclude_domains``): hosts or suffixes.

    Empty lists: no limit. Entries as ``safety.scope.parse_domains`` returns them.
    """

    include: tuple[str, ...] = ()  # a host must be one of these or under one
    exclude: tuple[str, ...] = ()  # a host under one of these is never read


@dataclass(frozen=True, kw_only=True)
class SearchSettings:
    """Which backend to search and where it lives, for one run."""

    backends: tuple[str, ...]  # the chain, tried in order
    tavily_base_url: str
    corpus_dir: str
    searxng_url: str
    timeout_s: float
    cache: CachePolicy | None = None  # None: results are neither looked up nor stored
    scope: DomainScope = DomainScope()  # engines that can are asked to keep to it
    since: str = ""  # YYYY-MM-DD: engines that can are asked for pages published since


@dataclass(frozen=True, kw_only=True)
class FetchLimits:
    """Bounds for reading one page."""

    timeout_s: float
    max_bytes: int
    max_redirects: int
    max_concurrent: int = 16  # pages read at once, across all branches
    max_per_host: int = 4  # pages read at once from one host
    allow_hosts: tuple[str, ...] = ()  # hosts/IPs/CIDRs readable although not public
    cache: CachePolicy | None = None  # None: pages are neither looked up nor stored
    scope: DomainScope = DomainScope()  # the user's domains: every hop must be inside


@dataclass(frozen=True, kw_only=True)
class Validators:
    """What a cached copy of a page was served with, for a conditional GET."""

    etag: str = ""
    last_modified: str = ""


@dataclass(frozen=True, kw_only=True)
class FetchedPage:
    """Raw bytes of a page, cut at the byte limit."""

    url: str  # after redirects
    content_type: str
    body: bytes
    truncated: bool
    etag: str = ""  # the server's validators, kept with a cached copy
    last_modified: str = ""
    not_modified: bool = False  # a conditional GET answered 304: body is empty
    cached: Literal["", "hit", "revalidated"] = ""  # served from the cache (revalidated: 304)
    read_on: str = ""  # ISO date the body was fetched, when it came from the cache
    chain: tuple[str, ...] = ()  # every URL requested, the first to ``url``: redirects followed


@dataclass(frozen=True, kw_only=True)
class Extracted:
    """Main content of a page as markdown, with what its metadata says."""

    text: str
    title: str
    published: str
    site: str
    language: str = ""  # two-letter code detected from the text ("" when unknown)


@dataclass
class StageClock:
    """When one node's tasks ran: first start, last end, time spent in all of them."""

    tasks: int = 0
    first: float | None = None
    last: float | None = None
    busy: float = 0.0
