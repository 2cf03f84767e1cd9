"""The research graph: every node, edge, retry and fallback of a run, on one screen.

    start_run → generate_keywords ⟲ (malformed: retry, then keywords_fallback)
      → search_keyword* → plan_queries (every search failed: → insufficient_evidence)
      → research_query* [search_query → rank_urls → claim_pages → process_page*]
      → dedup_urls → review_plan (interrupt, if asked) → process_page* (what no branch read)
      process_page = [read_page → summarise_chunk* → reduce_page]
      → collect_sources (the ledger so far; copies grouped by origin)
      → reflect ∥ weigh_evidence ∥ plan_report (the outline: sections mode)
      → brief_writers (the join) ⟲ research_query* (follow-ups: the next round; the outline and
                                   the weighing are set aside and done again after it)
                                 | write_section* → assemble_report
                                 | write_report ⟲ (single mode; sections' fallback; uncited: once)
                                 | insufficient_evidence (no source)
      → check_citations → judge_citations* (undecided sentences, in batches) → settle_citations
      → repair_report (unsupported ones; verdicts the facts dispute: asked again)
      → recheck_citations (a verdict only the judge model's two answers keep) → finish_report

``*`` marks a Send fan-out. A query's pages are read as soon as its own ranking is done (each
canonical URL once per run: the first branch to claim it reads it); with review_plan on, pages
wait for the review instead. Research goes in rounds: reflect reads the facts so far and sends
follow-up queries (the leads the pages named, the gaps left) back to research_query, bounded by
max_rounds, followups_per_round and the token budget. The outline and the weighing of the ledger
run beside every reflection: when it follows no lead (the last round), the report is not kept
waiting for one more call; when it does, they cost tokens, never time. Per-page work runs as one branch (a subgraph), so a page is
summarised as soon as its own fetch finishes. Transient I/O errors retry with backoff
(TRANSIENT); what still fails in a search, a page, a ranking, the reflection, the weighing,
the outline, a section or the citation check lands in an error handler that records it and
falls back; in the keywords, the plan or the one-call report it ends the run (with nothing to
fall back on).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from langgraph.cache.base import BaseCache
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.types import Checkpointer, RetryPolicy, Send

from deskresearch import nodes, resume_fix
from deskresearch.config.context import Context, settings_of
from deskresearch.config.deployment import Deployment, served_context
from deskresearch.errors import is_transient
from deskresearch.nodes.branch_state import (
    ChunkTask,
    JudgeTask,
    KeywordTask,
    PageOutput,
    PageState,
    QueryOutput,
    QueryState,
    QueryTask,
    SectionTask,
)
from deskresearch.records import SearchHit
from deskresearch.services.base import (
    ChatService,
    ContentExtractor,
    PageFetcher,
    RankFunc,
    SearchBackend,
    TokenCounter,
)
from deskresearch.services.defaults import default_services
from deskresearch.services.model.limits import Limiter
from deskresearch.services.search.router import SearchRouter
from deskresearch.state import PageTask, ResearchInput, ResearchOutput, ResearchState
from deskresearch.tool import ResearchGraph, as_research_graph

resume_fix.install()  # a cancelled step is redone on resume, not taken for finished
TRANSIENT = RetryPolicy(
    max_attempts=3, initial_interval=1.0, backoff_factor=2.0, retry_on=is_transient
)
MAX_CONCURRENCY = 32  # tasks per step; calls to providers are bounded by Context limits


# ---- routers and fan-outs (pure) -----------------------------------------------------------


def fan_out_keywords(state: ResearchState) -> list[Send]:
    """One search branch per keyword."""
    return [Send("search_keyword", KeywordTask(keyword=k)) for k in state["keywords"]]


def route_after_keywords(
    state: ResearchState,
) -> Literal["generate_keywords", "keywords_fallback"] | list[Send]:
    """Search the keywords; retry malformed ones a bounded number of times, then the topic."""
    if state["keywords"]:
        return fan_out_keywords(state)
    if state["keyword_attempts"] <= settings_of(state).max_output_retries:
        return "generate_keywords"
    return "keywords_fallback"


def _research(
    state: ResearchState,
    query: str,
    order: int,
    *,
    round: int,
    seen: list[str],
    known: list[SearchHit] | None = None,
) -> Send:
    """One research_query branch: search, rank and read ``query``'s pages."""
    return Send("research_query", QueryTask(topic=state["topic"], query=query, order=order,
                                            known_hits=known, run_id=state["run_id"],
                                            language=state["language"], plan=state["queries"],
                                            round=round, seen=seen))  # fmt: skip


def fan_out_queries(state: ResearchState) -> Literal["insufficient_evidence"] | list[Send]:
    """One search-and-rank branch per research query, handing over results already searched.

    No query (every keyword search failed): nothing to read, the run ends saying why.
    """
    if not state["queries"]:
        return "insufficient_evidence"
    known = {kh["keyword"].casefold(): kh["hits"] for kh in state["keyword_hits"] if kh["hits"]}
    return [
        _research(state, q, i, round=1, seen=[], known=known.get(q.casefold()))
        for i, q in enumerate(state["queries"])
    ]


def next_round(state: ResearchState) -> list[Send]:
    """The next round's searches: the follow-ups the reflection planned (none: the last round).

    reflect plans follow-ups only while rounds (max_rounds) and the token budget remain; each
    is a new query (never one already run), and earlier rounds' pages are not read again.
    """
    new = {f["query"] for f in state["followups"]}
    if not new:
        return []
    seen = sorted({*state["read_urls"], *(p["url"] for p in state["pages"])})
    return [
        _research(state, q, i, round=state["round"], seen=seen)
        for i, q in enumerate(state["queries"])
        if q in new
    ]


def fan_out_query_pages(state: QueryState) -> Literal["__end__"] | list[Send]:
    """Read the pages this query's branch claimed, each in its own branch."""
    return [Send("process_page", t) for t in state.get("page_tasks") or []] or "__end__"


def route_after_dedup(state: ResearchState) -> Literal["collect_sources"] | list[Send]:
    """Read what no query branch read yet (all, after a review); then the round is closed."""
    dropped = set(state.get("dropped_urls") or [])
    read = set(state.get("read_urls") or [])
    todo = [t for t in state["page_tasks"] if t["url"] not in dropped and t["url"] not in read]
    return [Send("process_page", t) for t in todo] or "collect_sources"


def fan_out_chunks(state: PageState) -> Literal["__end__"] | list[Send]:
    """One summary branch per chunk; a rejected page (no chunks) ends its branch."""
    if not state["chunks"]:
        return "__end__"
    return [
        Send(
            "summarise_chunk",
            ChunkTask(
                url=state["url"],
                title=state.get("page", {}).get("title") or state["title"],
                queries=state["queries"],
                topic=state["topic"],
                language=state["language"],
                index=i,
                chunk=chunk,
            ),
        )
        for i, chunk in enumerate(state["chunks"])
    ]


def close_round(state: ResearchState) -> list[str]:
    """The reflection, and beside it what the report needs of the ledger so far.

    The weighing and (sections mode) the outline run at the same time as the reflection, the
    slowest of them setting the pace; brief_writers joins them. With no source yet there is
    nothing to outline or weigh, only to reflect on.
    """
    if not state["sources"]:
        return ["reflect"]
    if settings_of(state).report_mode == "sections":
        return ["reflect", "weigh_evidence", "plan_report"]
    return ["reflect", "weigh_evidence"]


def route_after_brief(
    state: ResearchState,
) -> Literal["write_report", "insufficient_evidence"] | list[Send]:
    """After a round: the next one, or the report.

    Follow-ups planned: the next round. Else every section at the same time (no usable
    outline: the report in one call), or, with no source read, no report.
    """
    if follow := next_round(state):
        return follow
    if not state["sources"]:
        return "insufficient_evidence"
    tasks = nodes.section_tasks(state, settings_of(state).report_words)
    return [Send("write_section", t) for t in tasks] or "write_report"


def route_after_report(
    state: ResearchState,
) -> Literal["write_report", "check_citations", "finish_report"]:
    """An uncited first draft is written once more; a draft goes to the citation check (if on)."""
    if not state["draft"]:
        return "write_report"
    return "check_citations" if settings_of(state).check_citations else "finish_report"


def route_after_settle(state: ResearchState) -> Literal["repair_report", "finish_report"]:
    """Unsupported sentences get one rewrite, disputed verdicts a second look (the same call)."""
    flagged = any(c["status"] in ("unsupported", "disputed") for c in state["checks"])
    return "repair_report" if flagged else "finish_report"


def route_after_repair(state: ResearchState) -> Literal["recheck_citations", "finish_report"]:
    """A disputed verdict that only the judge model's two answers keep gets a third look."""
    return "recheck_citations" if nodes.needs_recheck(state) else "finish_report"


def route_after_check(
    state: ResearchState,
) -> Literal["repair_report", "finish_report"] | list[Send]:
    """Sentences code could not decide go to the judge, a batch per branch, all at once.

    The Limiter (max_model_calls) bounds how many of those calls are in flight. Nothing
    pending: unsupported sentences go to the repair, else the report is done.
    """
    tasks = nodes.judge_tasks(state, settings_of(state).judge_batch)
    return [Send("judge_citations", t) for t in tasks] or route_after_settle(state)


# ---- assembly ------------------------------------------------------------------------------


def build_graph(
    *,
    llm: ChatService | None = None,
    search: SearchRouter | SearchBackend | None = None,
    fetcher: PageFetcher | None = None,
    extractor: ContentExtractor | None = None,
    tokens: TokenCounter | None = None,
    rank_func: RankFunc | None = None,
    checkpointer: Checkpointer = None,
    cache: BaseCache[Any] | None = None,
    store: BaseStore | None = None,
    max_concurrency: int = MAX_CONCURRENCY,
    limiter: Limiter | None = None,
    deployment: Deployment | None = None,
) -> ResearchGraph:
    """Assemble the research graph with the given services; real ones for the rest.

    With a ``deployment`` the graph is fit to serve: a caller's context dict may not change the
    deployment's endpoints, files or network policy (``deskresearch.config.deployment``).
    """
    svc = default_services(llm=llm, search=search, fetcher=fetcher, extractor=extractor,
                           tokens=tokens, rank_func=rank_func, limiter=limiter)  # fmt: skip
    # Error handlers take (state, error): LangGraph's node Protocols match parameters by name and
    # have no `error`, hence the targeted ignores.
    # fmt: off
    p = StateGraph(PageState, context_schema=Context, input_schema=PageTask, output_schema=PageOutput)
    p.add_node("read_page", partial(nodes.read_page, fetcher=svc.fetcher, extractor=svc.extractor, tokens=svc.tokens),
               retry_policy=TRANSIENT, error_handler=nodes.read_failed)  # type: ignore[call-overload]
    p.add_node("summarise_chunk", partial(nodes.summarise_chunk, llm=svc.llm), input_schema=ChunkTask,
               retry_policy=TRANSIENT, error_handler=nodes.summarise_failed)  # type: ignore[call-overload]
    p.add_node("reduce_page", partial(nodes.reduce_page, llm=svc.llm),
               retry_policy=TRANSIENT, error_handler=nodes.reduce_failed)  # type: ignore[call-overload]
    p.add_edge(START, "read_page")
    p.add_conditional_edges("read_page", fan_out_chunks, ["summarise_chunk", END])
    p.add_edge("summarise_chunk", "reduce_page")
    p.add_edge("reduce_page", END)

    process_page = p.compile(name="process_page")

    q = StateGraph(QueryState, context_schema=Context, input_schema=QueryTask, output_schema=QueryOutput)
    q.add_node("search_query", partial(nodes.search_query, search=svc.search, pages=svc.fetcher),
               retry_policy=TRANSIENT, error_handler=nodes.search_failed)  # type: ignore[call-overload]
    q.add_node("rank_urls", partial(nodes.rank_urls, llm=svc.llm, rank_func=svc.rank_func),
               retry_policy=TRANSIENT, error_handler=nodes.rank_failed)  # type: ignore[call-overload]
    q.add_node("claim_pages", partial(nodes.claim_pages, claims=svc.claims))
    q.add_node("process_page", process_page, input_schema=PageTask)
    q.add_edge(START, "search_query")
    q.add_edge("search_query", "rank_urls")
    q.add_edge("rank_urls", "claim_pages")  # a failed ranking keeps the engine's order, then too
    q.add_conditional_edges("claim_pages", fan_out_query_pages, ["process_page", END])
    q.add_edge("process_page", END)

    context = served_context(deployment) if deployment else Context  # served: locked settings
    g = StateGraph(ResearchState, context_schema=context, input_schema=ResearchInput, output_schema=ResearchOutput)
    g.add_node("start_run", partial(nodes.start_run, llm=svc.llm, search=svc.search,
                                    extractor=svc.extractor, tokens=svc.tokens))
    g.add_node("generate_keywords", partial(nodes.generate_keywords, llm=svc.llm), retry_policy=TRANSIENT)
    g.add_node("keywords_fallback", nodes.keywords_fallback)
    g.add_node("search_keyword", partial(nodes.search_keyword, search=svc.search), input_schema=KeywordTask,
               retry_policy=TRANSIENT, error_handler=nodes.search_failed)
    g.add_node("plan_queries", partial(nodes.plan_queries, llm=svc.llm, tokens=svc.tokens), retry_policy=TRANSIENT)
    g.add_node("research_query", q.compile(name="research_query"), input_schema=QueryTask)
    g.add_node("dedup_urls", nodes.dedup_urls)
    g.add_node("review_plan", nodes.review_plan)
    g.add_node("process_page", process_page, input_schema=PageTask)
    g.add_node("reflect", partial(nodes.reflect, llm=svc.llm, tokens=svc.tokens), retry_policy=TRANSIENT,
               error_handler=nodes.reflect_failed)  # a failed reflection: no next round
    g.add_node("collect_sources", nodes.collect_sources)
    g.add_node("weigh_evidence", partial(nodes.weigh_evidence, llm=svc.llm), retry_policy=TRANSIENT,
               error_handler=nodes.weigh_failed)  # a failed weighing: nothing weighed, → brief
    g.add_node("plan_report", partial(nodes.plan_report, llm=svc.llm, tokens=svc.tokens), retry_policy=TRANSIENT,
               error_handler=nodes.plan_failed)  # a failed outline: one-call report, → brief
    g.add_node("brief_writers", nodes.brief_writers)  # the join of reflect and the two above
    g.add_node("write_section", partial(nodes.write_section, llm=svc.llm, tokens=svc.tokens), input_schema=SectionTask,
               retry_policy=TRANSIENT, error_handler=nodes.section_failed)
    g.add_node("assemble_report", nodes.assemble_report)
    g.add_node("write_report", partial(nodes.write_report, llm=svc.llm, tokens=svc.tokens), retry_policy=TRANSIENT)
    g.add_node("check_citations", nodes.check_citations)
    g.add_node("judge_citations", partial(nodes.judge_citations, llm=svc.llm, tokens=svc.tokens), input_schema=JudgeTask,
               retry_policy=TRANSIENT, error_handler=nodes.judge_failed)  # a failed batch: → unchecked
    g.add_node("settle_citations", nodes.settle_citations)  # the join: verdicts → checks
    g.add_node("repair_report", partial(nodes.repair_report, llm=svc.llm, tokens=svc.tokens), retry_policy=TRANSIENT,
               error_handler=nodes.repair_failed)  # a failed rewrite: → removed
    g.add_node("recheck_citations", partial(nodes.recheck_citations, llm=svc.llm), retry_policy=TRANSIENT,
               error_handler=nodes.recheck_failed)  # a failed third look: the two answers stand
    g.add_node("finish_report", partial(nodes.finish_report, claims=svc.claims))
    g.add_node("insufficient_evidence", partial(nodes.insufficient_evidence, claims=svc.claims))

    g.add_edge(START, "start_run")
    g.add_edge("start_run", "generate_keywords")
    g.add_conditional_edges("generate_keywords", route_after_keywords,
                            ["generate_keywords", "keywords_fallback", "search_keyword"])
    g.add_conditional_edges("keywords_fallback", fan_out_keywords, ["search_keyword"])
    g.add_edge("search_keyword", "plan_queries")
    g.add_conditional_edges("plan_queries", fan_out_queries, ["research_query", "insufficient_evidence"])
    g.add_edge("research_query", "dedup_urls")
    g.add_edge("dedup_urls", "review_plan")
    g.add_conditional_edges("review_plan", route_after_dedup, ["process_page", "collect_sources"])
    g.add_edge("process_page", "collect_sources")
    g.add_conditional_edges("collect_sources", close_round,
                            ["reflect", "weigh_evidence", "plan_report"])
    g.add_edge("reflect", "brief_writers")
    g.add_edge("weigh_evidence", "brief_writers")
    g.add_edge("plan_report", "brief_writers")
    g.add_conditional_edges("brief_writers", route_after_brief,
                            ["research_query", "write_section", "write_report", "insufficient_evidence"])
    g.add_edge("write_section", "assemble_report")
    g.add_conditional_edges("assemble_report", route_after_report,
                            ["write_report", "check_citations", "finish_report"])
    g.add_conditional_edges("write_report", route_after_report,
                            ["write_report", "check_citations", "finish_report"])
    g.add_conditional_edges("check_citations", route_after_check,
                            ["judge_citations", "repair_report", "finish_report"])
    g.add_edge("judge_citations", "settle_citations")
    g.add_conditional_edges("settle_citations", route_after_settle, ["repair_report", "finish_report"])
    g.add_conditional_edges("repair_report", route_after_repair, ["recheck_citations", "finish_report"])
    g.add_edge("recheck_citations", "finish_report")
    g.add_edge("finish_report", END)
    g.add_edge("insufficient_evidence", END)
    # fmt: on

    # A ResearchGraph: each invocation gets its own meter (tokens, retries, budget: runscope),
    # and as_tool gives a calling model a compact result (tool).
    compiled = as_research_graph(
        g.compile(checkpointer=checkpointer, cache=cache, store=store, name="deskresearch")
    )
    return compiled.with_config(max_concurrency=max_concurrency)
