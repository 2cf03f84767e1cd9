"""dedup_urls: one page task per canonical URL, remembering every query it serves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from deskresearch.config.context import Context
from deskresearch.progress import emit, note
from deskresearch.records import Provenance
from deskresearch.safety.urls import canonical_url
from deskresearch.state import PageTask, RankedQuery, ResearchState


def ranked_pages(
    ranked: Sequence[RankedQuery],
) -> dict[str, tuple[tuple[int, int, int], list[str]]]:
    """Each ranked page's place in the plan and the queries that ranked it, in the plan's order.

    The place is (round, query order, rank) of its first query: it does not depend on which
    branch happened to claim the page first, so sources and prompts keep one order run to run.
    """
    pages: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
    for r in sorted(ranked, key=lambda r: (r["round"], r["order"])):
        for rank, hit in enumerate(r["hits"]):
            url = canonical_url(hit["url"])
            place, queries = pages.setdefault(url, ((r["round"], r["order"], rank), []))
            if r["query"] not in queries:
                queries.append(r["query"])
    return pages


async def dedup_urls(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Merge this round's ranked pages of all queries so each page is fetched and summarised once.

    Earlier rounds' pages are not listed again (their queries never rank them: search_query
    drops what was read).
    """
    tasks: dict[str, PageTask] = {}
    provenance: list[Provenance] = []
    this_round = [r for r in state["ranked"] if r["round"] == state["round"]]
    for ranked in sorted(this_round, key=lambda r: r["order"]):
        query = ranked["query"]
        for hit in ranked["hits"]:
            key = canonical_url(hit["url"])
            task = tasks.get(key)
            if task is None:
                tasks[key] = PageTask(
                    url=key,  # fetched and cited without tracking parameters or fragment
                    title=hit["title"],
                    snippet=hit["snippet"],
                    raw_content=hit["raw_content"],
                    content_type=hit["content_type"],
                    queries=[query],
                    topic=state["topic"],
                    language=state["language"],
                    order=len(tasks),
                    round=state["round"],
                )
                continue
            if query not in task["queries"]:
                task["queries"].append(query)
            provenance.append(
                note(
                    "dedup_urls",
                    hit["url"],
                    "duplicate",
                    f"same page as {task['url']} (first found for {task['queries'][0]!r}); "
                    f"read once, serves {query!r} too",
                )
            )
    emit(runtime, "dedup_urls", "finished", pages=len(tasks), duplicates=len(provenance))
    return {"page_tasks": list(tasks.values()), "provenance": provenance}
