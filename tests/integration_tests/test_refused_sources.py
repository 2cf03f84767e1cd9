"""URLs the network policy refuses never become sources, through the whole graph."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.support.loopback import FakeWeb, serve
from tests.support.runs import run

pytestmark = pytest.mark.anyio


async def test_results_on_refused_hosts_are_dropped_not_cited_from_their_snippets() -> None:
    """Pages are spread over 127.0.0.1 and 127.0.0.2; only .1 is allowed, like a public host."""
    with serve(FakeWeb(hosts=2)) as web:
        out = await run(web, allow_hosts="127.0.0.1/32", url_per_query=4)
    hosts = {urlsplit(s["url"]).hostname for s in out["sources"]}
    assert "127.0.0.2" not in hosts and out["sources"], hosts
    refused = [p for p in out["provenance"]
               if urlsplit(p["subject"]).hostname == "127.0.0.2" and p["stage"] == "read_page"]  # fmt: skip
    assert refused and all(p["outcome"] == "blocked" for p in refused)
    assert "127.0.0.2" not in out["report"]
    assert web.fetches, "the allowed host was read"
