"""The I/O field groups of ``deskresearch.config.context.Context``: search, pages and the cache.

See ``deskresearch.config.fields`` for the order ``Context`` puts its groups in.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator
from pydantic.dataclasses import dataclass

from deskresearch.config.fields import CACHE, DEPLOYMENT, PAGES, SEARCH, SEARCH_CHAIN
from deskresearch.safety.scope import check_since, covers, parse_domains


@dataclass(kw_only=True, frozen=True)
class SearchFields:
    """Which search backends, in which order, and where they live."""

    search: Annotated[
        str,
        Field(
            title="Search backends, in order",
            json_schema_extra=SEARCH,
            pattern=SEARCH_CHAIN,
            description="Search backends in the order tried, comma-separated: tavily (TAVILY_API_KEY), duckduckgo (no key), searxng (searxng_url), corpus (corpus_dir). The next is tried when one fails or finds nothing. auto: tavily,duckduckgo with a Tavily key, else duckduckgo.",
        ),
    ] = "auto"
    include_domains: Annotated[
        str,
        Field(
            title="Only these sites",
            json_schema_extra=SEARCH,
            max_length=2000,
            description="Comma-separated hosts or suffixes the research keeps to (who.int,.gov,europa.eu): a page is read only if its host, and every host it redirects through, is one of them or under one. Searches ask for them where the engine can (Tavily's include_domains, site: for DuckDuckGo and SearxNG); every result is checked after. The corpus ignores it. Empty: every site. A research choice, not the network policy (allow_hosts).",
        ),
    ] = ""
    exclude_domains: Annotated[
        str,
        Field(
            title="Never these sites",
            json_schema_extra=SEARCH,
            max_length=2000,
            description="Comma-separated hosts or suffixes never read (pinterest.com,.example), as include_domains: a result or redirect under one is dropped, recorded in provenance. Empty: none excluded.",
        ),
    ] = ""
    since: Annotated[
        str,
        Field(
            title="Published since (YYYY-MM-DD)",
            json_schema_extra=SEARCH,
            description="Keep pages published on or after this date (YYYY-MM-DD): a page dated earlier (its metadata, a dateline, its URL) is dropped before its chunks are summarised; a page with no date is kept and recorded as undated. Tavily is asked for it too (start_date). Empty: no limit.",
        ),
    ] = ""
    tavily_base_url: Annotated[
        str,
        Field(
            title="Tavily API URL",
            json_schema_extra=SEARCH,
            min_length=1,
            description="Tavily API base URL (a self-hosted proxy or a test server)." + DEPLOYMENT,
        ),
    ] = "https://api.tavily.com"
    corpus_dir: Annotated[
        str,
        Field(
            title="Corpus folder",
            json_schema_extra=SEARCH,
            description="Folder of .md/.txt/.html/.pdf files searched when search=corpus."
            + DEPLOYMENT,
        ),
    ] = ""
    searxng_url: Annotated[
        str,
        Field(
            title="SearxNG URL",
            json_schema_extra=SEARCH,
            max_length=2000,
            description="Base URL of a SearxNG instance with its JSON API on (e.g. http://localhost:8888). Empty: SEARXNG_URL."
            + DEPLOYMENT,
        ),
    ] = ""
    search_timeout_s: Annotated[
        float,
        Field(
            title="Search timeout (seconds)",
            json_schema_extra=SEARCH,
            gt=0,
            le=300,
            description="Seconds one search request may take.",
        ),
    ] = 30.0

    @field_validator("since")
    @classmethod
    def _since_date(cls, value: str) -> str:
        """A real date, not after today: a mistyped one would silently filter nothing or all."""
        return check_since(value, date.today())

    @field_validator("include_domains", "exclude_domains")
    @classmethod
    def _domain_list(cls, value: str, info: ValidationInfo) -> str:
        """Hosts or suffixes only; no included site may lie inside an excluded one."""
        entries = parse_domains(value)
        if info.field_name == "exclude_domains":
            for kept in parse_domains(str(info.data.get("include_domains") or "")):
                if dropped := next((e for e in entries if covers(e, kept.lstrip("."))), None):
                    same = dropped.lstrip(".") == kept.lstrip(".")
                    where = (
                        "is in include_domains too" if same else f"covers {kept} of include_domains"
                    )
                    raise ValueError(
                        f"{dropped} {where}: nothing there could be read; remove it from one of "
                        "the two lists"
                    )
        return ",".join(entries)


@dataclass(kw_only=True, frozen=True)
class PageFields:
    """How pages are read and cut into chunks."""

    max_fetches: Annotated[
        int,
        Field(
            title="Pages read at once",
            json_schema_extra=PAGES,
            ge=1,
            le=256,
            description="Pages read at once, across all branches of a run.",
        ),
    ] = 16
    max_fetches_per_host: Annotated[
        int,
        Field(
            title="Pages read at once per site",
            json_schema_extra=PAGES,
            ge=1,
            le=64,
            description="Pages read at once from one host (politeness).",
        ),
    ] = 4
    prefetch_pages: Annotated[
        bool,
        Field(
            title="Fetch results while they are ranked",
            json_schema_extra=PAGES,
            description="Start fetching a query's results as soon as its search answers, while the ranking call decides which are read: the chosen pages are read sooner; the others are fetched and dropped unread (bytes, never tokens). The network policy, the domain scope and the fetch limits apply as to every read. Off with review_plan (nothing is fetched before the review). false: only the ranked pages are fetched.",
        ),
    ] = True
    allow_hosts: Annotated[
        str,
        Field(
            title="Private hosts the fetcher may read",
            json_schema_extra=PAGES,
            max_length=2000,
            description="Comma-separated hosts, IPs or CIDR ranges the fetcher may read although they are loopback or private (e.g. intranet.example,10.0.0.0/8). Empty: public addresses only."
            + DEPLOYMENT,
        ),
    ] = ""
    page_timeout_s: Annotated[
        float,
        Field(
            title="Page timeout (seconds)",
            json_schema_extra=PAGES,
            gt=0,
            le=300,
            description="Seconds to read one page, redirects included.",
        ),
    ] = 20.0
    max_page_bytes: Annotated[
        int,
        Field(
            title="Bytes read per page",
            json_schema_extra=PAGES,
            ge=10_000,
            le=100_000_000,
            description="Bytes read per page; longer pages are cut here.",
        ),
    ] = 5_000_000
    max_redirects: Annotated[
        int,
        Field(
            title="Redirects per page",
            json_schema_extra=PAGES,
            ge=0,
            le=20,
            description="Redirects followed per page.",
        ),
    ] = 5
    min_page_chars: Annotated[
        int,
        Field(
            title="Shortest usable page (characters)",
            json_schema_extra=PAGES,
            ge=0,
            le=10_000,
            description="Pages whose main text is shorter are rejected as empty.",
        ),
    ] = 200
    max_chunk_tokens: Annotated[
        int,
        Field(
            title="Tokens per chunk",
            json_schema_extra=PAGES,
            ge=200,
            le=200_000,
            description="Upper bound on tokens per summarised chunk; the summary model's window may lower it.",
        ),
    ] = 6000
    max_page_chunks: Annotated[
        int,
        Field(
            title="Chunks summarised per page",
            json_schema_extra=PAGES,
            ge=1,
            le=100,
            description="Chunks of one page summarised at most (one model call each). A longer page keeps the chunks that share most words with the queries, chosen before any model call; the cut is recorded in provenance.",
        ),
    ] = 4
    skip_unrelated_chunks: Annotated[
        bool,
        Field(
            title="Skip chunks unrelated to the queries",
            json_schema_extra=PAGES,
            description="Skip a page's chunks that share no word with the queries while its other chunks do (no model call; recorded in provenance).",
        ),
    ] = True
    summary_context_window: Annotated[
        int,
        Field(
            title="Context window of the summary model (tokens)",
            json_schema_extra=PAGES,
            ge=0,
            le=10_000_000,
            description="Context window of the summary model in tokens, which sizes the page pieces it reads. 0: its name's (else 8192); on a local server (Ollama, llama.cpp, LM Studio), the context the server says it loaded the model with (asked before a new run), else at most 4096, which such servers give unless started with more (OLLAMA_CONTEXT_LENGTH): then set it to what your server gives the model. On a local server it is taken for the report and judge models on the same server too, whose prompts keep the facts that fit it (each cut said in provenance).",
        ),
    ] = 0


@dataclass(kw_only=True, frozen=True)
class CacheFields:
    """The persistent cache."""

    cache: Annotated[
        bool,
        Field(
            title="Use the cache",
            json_schema_extra=CACHE,
            description="Keep model answers, searches (per day) and pages in a persistent SQLite cache, so re-running a research costs no tokens and no fetches. false (--no-cache): neither read nor write it.",
        ),
    ] = True
    cache_path: Annotated[
        str,
        Field(
            title="Cache file",
            json_schema_extra=CACHE,
            max_length=4096,
            description="The cache's SQLite file. Empty: cache.sqlite in your user cache folder."
            + DEPLOYMENT,
        ),
    ] = ""
    cache_page_hours: Annotated[
        float,
        Field(
            title="Hours a cached page is used unasked",
            json_schema_extra=CACHE,
            ge=0,
            le=24 * 365,
            description="Hours a cached page is used without asking its server; older copies are revalidated (ETag / Last-Modified) and re-read only when changed.",
        ),
    ] = 24.0
