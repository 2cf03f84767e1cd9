"""The fault-injection suite: the whole graph against a loopback web that misbehaves at random.

Each seed decides, reproducibly: 30% of pages fail in one of the PAGE_FAULTS ways, 20% of model
calls answer 429/500/garbage/refusals/prose/reasoning, and Tavily is down for half of the runs
(the chain falls over to SearxNG). Every run must end in time, with status ok or
insufficient_evidence, cite only pages really read, and give a reason for every URL it dropped.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from deskresearch.safety.urls import canonical_url
from tests.conftest import FAULT_SUMMARY
from tests.support.fake_model import PWNED
from tests.support.loopback import Entry, FakeWeb, serve
from tests.support.runs import context_for, graph_for

# One worker runs every seed (under pytest-xdist), so the suite's summary line counts them all.
pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("faults")]
SEEDS = range(20)
TIME_BOUND_S = 60.0
SUMMARY: list[dict[str, Any]] = []


@pytest.fixture(scope="module", autouse=True)
def summary_line(request: pytest.FixtureRequest) -> Iterator[None]:
    """Leave one line for the whole suite; tests/conftest.py prints it in the terminal summary."""
    yield
    if not SUMMARY:
        return
    faults: Counter[str] = Counter()
    for run in SUMMARY:
        faults.update(run["faults"])
    outcomes = Counter(run["status"] for run in SUMMARY)
    kinds = ", ".join(f"{k} {n}" for k, n in faults.most_common())
    line = (
        f"fault suite: {len(SUMMARY)} runs, {sum(faults.values())} faults injected ({kinds}); "
        f"outcomes: {dict(outcomes)}; slowest run {max(r['seconds'] for r in SUMMARY):.1f} s, "
        f"{sum(r['sources'] for r in SUMMARY)} sources cited in all"
    )
    request.config.stash[FAULT_SUMMARY] = line
    if hasattr(request.config, "workeroutput"):  # a pytest-xdist worker: the controller prints it
        request.config.workeroutput["fault_summary"] = line


def chaos_web(seed: int) -> FakeWeb:
    rng = random.Random(seed)
    web = FakeWeb(hosts=2, page_fault_rate=0.3, page_chaos_seed=seed + 1000)
    web.model.chaos_rate, web.model.chaos_seed = 0.2, seed + 2000
    if rng.random() < 0.5:
        web.engines_down["tavily"] = rng.choice([429, 500, 503])
    return web


def faults_of(web: FakeWeb) -> Counter[str]:
    faults: Counter[str] = Counter({f"model {k}": n for k, n in web.model.injected.items()})
    faults.update(f"page {kind}" for kind in web.page_faults.values() if kind)
    failed = sum(1 for s in web.searches if s.get("engine", "tavily") in web.engines_down)
    if failed:
        faults["search down"] = failed
    return faults


@pytest.mark.parametrize("seed", SEEDS)
async def test_a_run_under_random_faults_ends_well(seed: int) -> None:
    with serve(chaos_web(seed)) as web:
        ctx = context_for(
            web, search="tavily,searxng", searxng_url=web.url("/searxng"), max_keywords=1,
            decomposition_nums=2, url_per_query=3, page_timeout_s=1.5, max_page_bytes=300_000,
            model_timeout_s=10, retry_backoff_s=0.02,
        )  # fmt: skip
        started = time.monotonic()
        out = await asyncio.wait_for(
            graph_for(web).ainvoke({"topic": "EV battery recycling"}, context=ctx),
            timeout=TIME_BOUND_S,
        )
        seconds = time.monotonic() - started
        assert out["status"] in ("ok", "insufficient_evidence")

        # Every cited source is a page we read (a huge one cut at the byte limit counts: we read
        # its first max_page_bytes), or a search result's snippet.
        ids = {s["id"] for s in out["sources"]}
        cited = {int(n) for n in re.findall(r"\[(\d+)\]", out["report"].split("## References")[0])}
        assert cited <= ids
        returned = {canonical_url(u) for u in web.returned}
        for s in out["sources"]:
            path = urlsplit(s["url"]).path
            if s["origin"] == "page":
                assert web.fetches[path] >= 1, s["url"]
                assert web.page_faults.get(path) in ("", "huge"), (s["url"], web.page_faults[path])
            else:
                assert s["origin"] == "snippet" and canonical_url(s["url"]) in returned

        # Every page it asked for and did not cite has a recorded reason.
        used = {urlsplit(s["url"]).path for s in out["sources"] if s["origin"] == "page"}
        reasons: dict[str, list[str]] = {}
        for p in out["provenance"]:
            assert p["reason"].strip(), p
            if "://" in p["subject"]:
                reasons.setdefault(urlsplit(p["subject"]).path, []).append(p["outcome"])
        for path in web.fetches:
            if path.startswith("/pages/") and path not in used:
                assert reasons.get(path), f"{path} was fetched, dropped, and nobody said why"
        SUMMARY.append({"faults": faults_of(web), "status": out["status"],
                        "seconds": seconds, "sources": len(out["sources"])})  # fmt: skip


async def test_a_page_that_instructs_the_model_changes_neither_format_nor_citations() -> None:
    """The fake model obeys any "ignore all previous instructions" it sees; it never sees it."""
    web = FakeWeb(catalogue=[
        Entry("/pages/injected.html", "Recycling", "Lithium aus dem Schredder."),
        Entry("/pages/heise.de.lithium.html", "Lithium", "Lithium recycling."),
    ])  # fmt: skip
    with serve(web):
        out = await graph_for(web).ainvoke(
            {"topic": "Lithium recycling"}, context=context_for(web, url_per_query=2)
        )
    assert out["status"] == "ok"
    assert PWNED not in out["report"] and out["report"].startswith("# Research report")
    assert re.search(r"\[\d+\]", out["report"]), "the report still cites its sources"
    flagged = [p for p in out["provenance"] if p["outcome"] == "flagged"]
    assert any("injected.html" in p["subject"] and "removed" in p["reason"] for p in flagged)
    injected = [s for s in out["sources"] if s["url"].endswith("/pages/injected.html")]
    assert injected and injected[0]["summary"] and PWNED not in injected[0]["summary"]


async def test_a_provider_answering_30_percent_429s_still_completes() -> None:
    web = FakeWeb()
    web.model.chaos_rate, web.model.chaos_faults = 0.3, ("http_429",)
    web.model.retry_after = "0.05"
    with serve(web):
        # 8 attempts: with 4 (the default), a call meets four 429s in a row 0.8 % of the time
        # (0.3 ** 4), and which call does is the content's hash: a change of chunk boundaries
        # made one do. At 8 that is 0.007 %: a 429 that still costs a result is a bug here.
        out = await graph_for(web).ainvoke(
            {"topic": "EV battery recycling"},
            context=context_for(web, retry_backoff_s=0.02, model_attempts=8),
        )
    assert out["status"] == "ok" and out["sources"]
    calls = len(web.model.requests)
    assert web.model.injected["http_429"] >= 3 and calls >= 15, (calls, web.model.injected)
    refused = [p for p in out["provenance"] if "HTTP 429" in p["reason"]]
    assert refused == [], "every 429 was retried away; none cost a result"
