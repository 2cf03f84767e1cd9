"""search_keyword and search_query: one search per Send branch, and what happens when one fails."""

from __future__ import annotations

from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.nodes.branch_state import KeywordTask, QueryState
from deskresearch.progress import emit, note
from deskresearch.records import DomainScope, Provenance, SearchHit, Stage
from deskresearch.safety.injection import clean_line
from deskresearch.safety.scope import describe, outside
from deskresearch.safety.urls import canonical_url, shown, url_problem
from deskresearch.services.base import PagePrefetcher, SearchService
from deskresearch.state import KeywordHits
from deskresearch.text.plural import plural


def checked_hits(
    hits: list[SearchHit], stage: Stage, scope: DomainScope
) -> tuple[list[SearchHit], list[Provenance]]:
    """Drop hits whose URL is malformed or outside the scope; remove instructions to a model.

    Search results are written by whoever wrote the pages: a bad URL (``url_problem``: control
    or bidi characters, an empty or overlong host label, a zone id, a port out of range, ...)
    must cost its hit, with the reason, never the run; a title or snippet must not talk to the
    ranking model. A hit outside the user's domain scope is dropped here, whatever the engine
    was asked, so it is never ranked or read. The provenance line shows a dropped URL's
    invisible characters escaped. Corpus files (read by the backend) have no host to check.
    """
    kept: list[SearchHit] = []
    notes: list[Provenance] = []
    for h in hits:
        web = h["raw_content"] is None
        if web and (problem := url_problem(h["url"])):
            notes.append(
                note(stage, shown(h["url"]), "blocked", f"search result dropped: {problem}")
            )
            continue
        if web and (away := outside(h["url"], scope)):
            notes.append(note(stage, h["url"], "out_of_scope", f"search result dropped: {away}"))
            continue
        title, bad_title = clean_line(h["title"])
        snippet, bad_snippet = clean_line(h["snippet"])
        if bad_title or bad_snippet:
            where = " and ".join(
                w for w, bad in (("title", bad_title), ("snippet", bad_snippet)) if bad
            )
            notes.append(note(stage, h["url"], "flagged",
                              f"the result's {where} addressed the model; those sentences removed"))  # fmt: skip
        kept.append(SearchHit(**{**h, "title": title, "snippet": snippet}))
    return kept, notes


def results_per_query(ctx: Context) -> int:
    """Hits requested per search: twice what ranking keeps, at least 6, so it has a choice."""
    return max(2 * ctx.url_per_query, 6)


async def _search(
    query: str, stage: Stage, runtime: Runtime[Context], search: SearchService
) -> tuple[list[SearchHit], list[Provenance]]:
    ctx = resolve(runtime)
    result = await search.search(
        query, max_results=results_per_query(ctx), settings=ctx.search_settings()
    )
    emit(
        runtime,
        stage,
        "finished",
        query=query,
        hits=len(result.hits),
        backend=result.backend,
        cached=result.cached,
    )
    hits, provenance = checked_hits(result.hits, stage, ctx.domain_scope())
    provenance += [
        note(stage, query, "fallback", f"passed over {why}") for why in result.passed_over
    ]
    found = f"{result.backend}: {plural(len(result.hits), 'result')}"
    # What the engine was asked to keep to (Tavily alone takes a date; the corpus ignores both).
    asked = describe(ctx.domain_scope(), ctx.since if result.backend == "tavily" else "")
    if asked and result.backend != "corpus":
        found += f", asked within {asked}"
    if result.cached:
        provenance.append(note(stage, query, "cached", f"{found}, from today's cache (not sent)"))
    else:
        provenance.append(note(stage, query, "issued", found))
    return hits, provenance


async def search_keyword(
    state: KeywordTask, runtime: Runtime[Context], *, search: SearchService
) -> dict[str, Any]:
    """Search one keyword; its hits feed plan_queries."""
    hits, provenance = await _search(state["keyword"], "search_keyword", runtime, search)
    found = [KeywordHits(keyword=state["keyword"], hits=hits, error="")]
    return {"keyword_hits": found, "provenance": provenance}


def _prefetch(hits: list[SearchHit], ctx: Context, pages: PagePrefetcher | None) -> None:
    """Start fetching the results while rank_urls decides which are read (prefetch_pages)."""
    if pages is None or not ctx.prefetch_pages or ctx.review_plan:
        return  # with a review, nothing is fetched before the reviewer saw the plan
    urls = [canonical_url(h["url"]) for h in hits if h["raw_content"] is None]
    pages.prefetch(urls, ctx.fetch_limits())


async def search_query(
    state: QueryState,
    runtime: Runtime[Context],
    *,
    search: SearchService,
    pages: PagePrefetcher | None = None,
) -> dict[str, Any]:
    """Search one research query (unless the keyword stage already did); rank_urls orders its hits.

    Its results start being fetched at once (``pages``), while they are ranked.
    """
    ctx = resolve(runtime)
    known = state.get("known_hits")
    if known is not None:
        reason = f"same search as the keyword stage: its {plural(len(known), 'result')} reused"
        _prefetch(known, ctx, pages)
        return {
            "hits": known,
            "provenance": [note("search_query", state["query"], "duplicate", reason)],
        }
    hits, provenance = await _search(state["query"], "search_query", runtime, search)
    seen = set(state.get("seen") or [])  # read in an earlier round: not ranked, not read again
    earlier = [h for h in hits if canonical_url(h["url"]) in seen]
    if earlier:
        reason = f"read in an earlier round; not read again for {state['query']!r}"
        provenance += [note("search_query", h["url"], "duplicate", reason) for h in earlier]
        hits = [h for h in hits if h not in earlier]
    _prefetch(hits, ctx, pages)
    return {"hits": hits, "provenance": provenance}


def search_failed(state: dict[str, Any], error: NodeError) -> Command[Any]:
    """Record a search that failed for good (after retries) and go on without its results.

    Only service failures are absorbed; a bad key or setting still stops the run. A keyword's
    branch goes on to plan_queries as a finished one would: an error handler's branch has no
    edges of its own, so without the ``goto`` a run whose every keyword search failed would
    stop right there, with no report and no reason.
    """
    exc = error.error
    if not isinstance(exc, ServiceError):
        raise exc
    query = state.get("query") or state.get("keyword") or "?"
    stage: Stage = "search_query" if "query" in state else "search_keyword"
    update: dict[str, Any] = {"provenance": [note(stage, query, "failed", str(exc))]}
    if stage == "search_query":
        return Command(update={**update, "hits": []})  # the query's branch ends: no pages
    update["keyword_hits"] = [KeywordHits(keyword=query, hits=[], error=str(exc))]
    return Command(update=update, goto="plan_queries")
