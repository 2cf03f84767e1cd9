"""claim_pages: a query branch reads its ranked pages now, each canonical URL once per run.

The first branch to claim a URL reads it (fan_out_query_pages sends it to process_page); a later
branch records that it shares the page, which collect_sources credits to every query it serves.
With review_plan on, nothing is claimed: pages wait for the reviewer (dedup_urls, review_plan).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from deskresearch.config.context import Context, resolve
from deskresearch.nodes.branch_state import QueryState
from deskresearch.progress import emit
from deskresearch.safety.urls import canonical_url
from deskresearch.services.storage.claims import PageClaims
from deskresearch.state import PageTask

PAGES_PER_QUERY = 1000  # page order = query order × this + rank: sources keep the plan's order


async def claim_pages(
    state: QueryState, runtime: Runtime[Context], *, claims: PageClaims
) -> dict[str, Any]:
    """Claim this query's ranked pages; return the ones this branch reads."""
    if resolve(runtime).review_plan:
        return {"page_tasks": []}
    query = state["query"]
    hits = [h for r in state["ranked"] if r["query"] == query for h in r["hits"]]
    seen = set(state["seen"])  # read in an earlier round (a resumed run has no claims of them)
    tasks: list[PageTask] = []
    for rank, hit in enumerate(hits):
        url = canonical_url(hit["url"])
        if url in seen or not claims.claim(state["run_id"], url):
            continue  # another query's branch reads it; dedup_urls records the duplicate
        tasks.append(
            PageTask(
                url=url,  # fetched and cited without tracking parameters or fragment
                title=hit["title"],
                snippet=hit["snippet"],
                raw_content=hit["raw_content"],
                content_type=hit["content_type"],
                # Whichever branch claims it, the page is summarised for the same questions:
                # the same prompts, so answers and the cache do not depend on who came first.
                queries=state["plan"],
                topic=state["topic"],
                language=state["language"],
                order=state["order"] * PAGES_PER_QUERY + rank,
                round=state["round"],
            )
        )
    emit(runtime, "claim_pages", "finished", query=query, pages=len(tasks))
    return {"page_tasks": tasks, "read_urls": [t["url"] for t in tasks]}
