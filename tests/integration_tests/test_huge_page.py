"""One huge page among the results, under model faults: bounded calls, and the run ends ok.

Before the per-page bound, a 20 MB page (cut at 5 MB, ~160 chunks) sent 160 chunk summaries
under 20% injected model faults, spent the run's retry budget on them and failed the run.
"""

from __future__ import annotations

import json

import pytest

from deskresearch.config.context import Context
from tests.support.fake_model import page_text, stage_of
from tests.support.loopback import Entry, FakeWeb, serve
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio
HUGE = "/huge-article"
METHODS = 4  # json_schema, function_calling, json_mode, text: tried in turn on malformed answers


def per_page_bound(ctx: Context) -> int:
    """The documented bound: (max_page_chunks + 1) calls, each tried model_attempts times over
    at most METHODS structured-output methods."""
    return (ctx.max_page_chunks + 1) * ctx.model_attempts * METHODS


async def test_a_20mb_page_under_model_faults_costs_a_bounded_number_of_calls() -> None:
    web = FakeWeb(catalogue=[
        Entry(HUGE, "EV battery recycling: the complete report", "Everything on recycling."),
        Entry("/pages/heise.de.lithium.html", "Lithium", "Lithium recycling in Germany."),
    ])  # fmt: skip
    web.model.chaos_rate, web.model.chaos_seed = 0.2, 7
    with serve(web):
        ctx = context_for(web, max_keywords=1, decomposition_nums=2, url_per_query=2,
                          model_timeout_s=20, page_timeout_s=60)  # fmt: skip
        out = await graph_for(web).ainvoke({"topic": "EV battery recycling"}, context=ctx)
    assert out["status"] == "ok", out["report"][:500]
    huge_calls = [r for r in web.model.requests if HUGE in json.dumps(r["messages"])]
    # A chunk is the text inside <page>: the same chunk asked again (a retry, or the next
    # structured-output method after a broken answer) is still one chunk.
    chunks = {page_text(r) for r in huge_calls if stage_of(r) == "ChunkSummary"}
    assert web.fetches[HUGE] == 1
    assert 1 <= len(chunks) <= ctx.max_page_chunks, "at most max_page_chunks chunks asked"
    assert len(huge_calls) <= per_page_bound(ctx), len(huge_calls)
    [cut] = [p for p in out["provenance"] if HUGE in p["subject"] and "long page" in p["reason"]]
    assert "max_page_chunks=4" in cut["reason"]
