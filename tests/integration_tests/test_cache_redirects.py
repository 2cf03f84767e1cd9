"""A cached page is served only to a run whose network policy admits every hop it came through.

Pages live on loopback hosts 127.0.0.1-4 (one port): a run's ``allow_hosts`` plays the public
internet (allowed) and the private network (not allowed). A page read through redirects in a
run that allowed every hop is kept with its whole chain; a later run whose policy refuses any
hop gets no cached copy: it asks the server, where its own policy stops the redirect.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from deskresearch.safety.urls import canonical_url
from tests.support.loopback import Entry, FakeWeb, serve
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio
TARGET = "/pages/heise.de.lithium.html"  # what the redirects lead to
DIRECT = "/pages/sueddeutsche.de.flixtrain.html"  # a page on an allowed host, no redirect


def redirect_chain(web: FakeWeb, *hosts: str) -> str:
    """A URL on hosts[0] that redirects through each next host to TARGET on 127.0.0.1."""
    url = f"http://127.0.0.1:{web.port}{TARGET}"
    for host in reversed(hosts):
        url = f"http://{host}:{web.port}/redirect-to?url={quote(url, safe='')}"
    return url


def catalogue(web: FakeWeb, front: str) -> list[Entry]:
    return [
        Entry("/redirect-to", "Lithium recycling", "Lithium recovery in Germany.", front),
        Entry(DIRECT, "Flixtrain", "Trains and buses.", f"http://127.0.0.2:{web.port}{DIRECT}"),
    ]


async def research(web: FakeWeb, cache: Path, allow: str) -> dict[str, Any]:
    ctx = context_for(web, allow_hosts=allow, cache=True, cache_path=str(cache), max_rounds=1,
                      url_per_query=2, decomposition_nums=1, max_keywords=1)  # fmt: skip
    out = await graph_for(web).ainvoke({"topic": "Lithium recycling"}, context=ctx)
    assert isinstance(out, dict) and out["status"] == "ok", out
    return out


def notes(out: dict[str, Any], url: str, outcome: str) -> list[dict[str, Any]]:
    return [p for p in out["provenance"]
            if p["stage"] == "read_page" and p["subject"] == url and p["outcome"] == outcome]  # fmt: skip


async def test_a_page_cached_behind_a_redirect_is_not_served_to_a_run_that_refuses_the_target(
    tmp_path: Path,
) -> None:
    """The probe's case: run 1 allows the front and the target, run 2 only the front."""
    with serve(FakeWeb(hosts=2)) as web:
        front = canonical_url(redirect_chain(web, "127.0.0.2"))
        web.catalogue = catalogue(web, front)
        cache = tmp_path / "cache.sqlite"
        first = await research(web, cache, allow="127.0.0.1/32,127.0.0.2/32")
        assert front in {s["url"] for s in first["sources"]}
        read = web.fetches[TARGET]
        second = await research(web, cache, allow="127.0.0.2/32")
    assert front not in {s["url"] for s in second["sources"]}, "cited from the cache"
    assert not notes(second, front, "cached")
    (blocked,) = notes(second, front, "blocked")
    assert "127.0.0.1, a loopback address" in blocked["reason"]  # stopped at the redirect, live
    assert web.fetches[TARGET] == read, "the refused target was never asked"
    direct = f"http://127.0.0.2:{web.port}{DIRECT}"
    assert notes(second, direct, "cached"), "a chain the policy admits is still served"


async def test_a_three_hop_chain_is_served_only_while_every_hop_is_admitted(
    tmp_path: Path,
) -> None:
    with serve(FakeWeb(hosts=4)) as web:
        front = canonical_url(redirect_chain(web, "127.0.0.2", "127.0.0.3", "127.0.0.4"))
        web.catalogue = catalogue(web, front)
        cache = tmp_path / "cache.sqlite"
        every = "127.0.0.1/32,127.0.0.2/32,127.0.0.3/32,127.0.0.4/32"
        await research(web, cache, allow=every)
        hops, reads = web.fetches["/redirect-to"], web.fetches[TARGET]
        assert hops == 3 and reads == 1
        again = await research(web, cache, allow=every)  # the same policy: from the cache
        assert notes(again, front, "cached") and front in {s["url"] for s in again["sources"]}
        assert (web.fetches["/redirect-to"], web.fetches[TARGET]) == (hops, reads)
        middle_refused = await research(web, cache, allow="127.0.0.1/32,127.0.0.2/32,127.0.0.4/32")
    assert front not in {s["url"] for s in middle_refused["sources"]}
    (blocked,) = notes(middle_refused, front, "blocked")
    assert "127.0.0.3, a loopback address" in blocked["reason"]
    # Asked live: the front answered its redirect, the refused middle hop was never connected.
    assert web.fetches["/redirect-to"] == hops + 1 and web.fetches[TARGET] == reads


async def test_a_page_kept_without_its_chain_is_fetched_again(tmp_path: Path) -> None:
    """Entries an older version kept have no chain: where they came from is unknown."""
    with serve(FakeWeb(hosts=2)) as web:
        front = canonical_url(redirect_chain(web, "127.0.0.2"))
        web.catalogue = catalogue(web, front)
        cache = tmp_path / "cache.sqlite"
        await research(web, cache, allow="127.0.0.0/8")
        with sqlite3.connect(cache) as db:
            rows = db.execute("SELECT key, meta FROM entries WHERE kind = 'page'").fetchall()
            assert rows and all(json.loads(meta).get("chain") for _, meta in rows)
            for key, meta in rows:
                old = {k: v for k, v in json.loads(meta).items() if k != "chain"}
                db.execute("UPDATE entries SET meta = ? WHERE key = ?", (json.dumps(old), key))
        reads = web.fetches[TARGET]
        out = await research(web, cache, allow="127.0.0.0/8")
    assert not [
        p for p in out["provenance"] if p["outcome"] == "cached" and p["stage"] == "read_page"
    ]
    assert web.fetches[TARGET] == reads + 1
