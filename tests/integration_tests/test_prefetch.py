"""A query's results are fetched while they are ranked: the pages read arrive sooner.

The whole graph against the loopback web with a latency model (a ranking call takes 200 ms):
with prefetch_pages the first page request arrives while the first ranking call is still out;
without it, only after a ranking came back. Either way each URL is fetched once.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.loopback import FakeWeb, Latency, serve
from tests.support.runs import run

pytestmark = pytest.mark.anyio


async def research(prefetch: bool) -> tuple[dict[str, Any], FakeWeb]:
    web = FakeWeb(latency=Latency(call_s=0.2, fetch_s=0.02))
    with serve(web):
        out = await run(web, prefetch_pages=prefetch, max_rounds=1)
    return out, web


def first_ranking_back(web: FakeWeb) -> float:
    return min(c.started + c.seconds for c in web.log if c.kind == "model" and c.key == "Ranking")


def first_fetch(web: FakeWeb) -> float:
    return min(c.started for c in web.log if c.kind == "fetch")


async def test_results_are_fetched_while_the_ranking_call_is_out() -> None:
    out, web = await research(prefetch=True)
    assert out["status"] == "ok"
    assert first_fetch(web) < first_ranking_back(web)
    assert max(web.fetches.values()) == 1  # results of several queries: fetched once


async def test_without_prefetch_only_ranked_pages_are_fetched_after_the_ranking() -> None:
    out, web = await research(prefetch=False)
    assert out["status"] == "ok"
    assert first_fetch(web) >= first_ranking_back(web)
    assert max(web.fetches.values()) == 1
