"""collect_sources: number the pages that survived into the source ledger, grouped by origin.

The same text under two URLs is one source. Pages whose text is one origin's (a press release
and its reprints, a mirror, a page naming another as its source: grounding.copies) stay
sources of their own (a reader may know that site) but share an origin group, so they count
once as evidence.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from langgraph.runtime import Runtime

from deskresearch.config.context import Context
from deskresearch.grounding import copies
from deskresearch.nodes.dedup_urls import ranked_pages
from deskresearch.progress import emit, note
from deskresearch.records import Provenance, Source
from deskresearch.state import ResearchState


async def collect_sources(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Give each distinct page text a number; the same text under another URL is a duplicate.

    It runs as every round closes (the outline and the weighing beside the reflection need the
    ledger so far); the numbers of earlier rounds' sources stay, and a page is noted in
    provenance in the round that read it.
    """
    sources: list[Source] = []
    by_hash: dict[str, Source] = {}
    provenance: list[Provenance] = []
    # The plan's order and every query a page serves, from the rankings of all rounds: not the
    # order branches happened to claim pages in.
    ranked = ranked_pages(state.get("ranked") or [])
    seen: set[str] = set()
    last = (len(ranked) + 1, 0, 0)
    now = state.get("round", 1)
    for page in sorted(
        state["pages"], key=lambda p: (ranked.get(p["url"], (last,))[0], p["order"])
    ):
        if page["url"] in seen:  # read twice only when a resumed run re-claimed it
            continue
        seen.add(page["url"])
        new = page["round"] == now  # noted in the round that read it
        queries = ranked[page["url"]][1] if page["url"] in ranked else page["queries"]
        twin = by_hash.get(page["text_hash"])
        if twin is not None:
            twin["queries"] += [q for q in queries if q not in twin["queries"]]
            reason = f"same text as source [{twin['id']}] {twin['url']}"
            provenance += [note("collect_sources", page["url"], "duplicate", reason)] if new else []
            continue
        source = Source(
            id=len(sources) + 1,
            url=page["url"],
            title=page["title"],
            site=page["site"],
            published=page["published"],
            date_read=page["date_read"],
            queries=list(queries),
            text_hash=page["text_hash"],
            origin=cast(Literal["page", "snippet", "corpus"], page["origin"]),
            summary="\n".join(f"- {f['claim']}" for f in page["facts"]),
            facts=list(page["facts"]),
            round=page["round"],
        )
        sources.append(source)
        by_hash[page["text_hash"]] = source
        via = "the search snippet" if page["origin"] == "snippet" else "the page"
        if new:
            why = f"source [{source['id']}] from {via}"
            provenance.append(note("collect_sources", page["url"], "used", why))
    texts = {p["url"]: p["text"] for p in state["pages"]}
    # A copy is noted when it is found: in its page's round, or in a later one whose page made
    # an earlier source a copy (or another origin's).
    lines = group_origins(sources, texts)
    before = {s["url"]: s.get("copy_of") for s in state.get("sources") or []}
    changed = {s["url"] for s in sources
               if s["round"] == now or before.get(s["url"]) != s.get("copy_of")}  # fmt: skip
    provenance += [line for line in lines if line["subject"] in changed]
    origins = len({s["origin_group"] for s in sources if "origin_group" in s})
    emit(runtime, "collect_sources", "finished", sources=len(sources), origins=origins)
    return {"sources": sources, "provenance": provenance}


def group_origins(sources: list[Source], texts: dict[str, str]) -> list[Provenance]:
    """Give every source its origin group (in place); a provenance line per copy found."""
    pages = [
        copies.Page(id=s["id"], url=s["url"], text=texts.get(s["url"], ""), site=s["site"],
                    published=s["published"])
        for s in sources
    ]  # fmt: skip
    grouped = copies.group(pages)
    lines: list[Provenance] = []
    for s in sources:
        g = grouped[s["id"]]
        s["origin_group"], s["copy_of"], s["copy_reason"] = g.group, g.copy_of, g.reason
        if g.copy_of is not None:
            why = f"one origin with source [{g.copy_of}] ({g.reason}): counts once as evidence"
            lines.append(note("collect_sources", s["url"], "weighed", why))
    return lines
