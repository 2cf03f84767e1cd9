"""Dates and the user's scope through the whole graph, against the loopback web.

Pages state their dates as sites do (a meta tag, JSON-LD, a dateline, the URL, nothing); named
hosts (www.who.int, data.cdc.gov, ...) resolve to the loopback web through the fetcher's
resolver, so a scope reads like a user's. The fake Tavily ignores the domains it is sent (as a
leaky engine would): what keeps the scope is the check after the search and at every redirect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from deskresearch.services.web.fetch import HttpFetcher
from tests.support.dated import article
from tests.support.fake_model import page_text, stage_of
from tests.support.loopback import Entry, FakeWeb, serve
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio
SMALL = {"max_rounds": 1, "max_keywords": 1, "decomposition_nums": 1, "url_per_query": 6}
SNIPPET = "Lithium recycling plants recovered tonnes of lithium from car batteries."


def dated_web() -> FakeWeb:
    """Five lithium pages: two in the window, two older, one undated."""
    web = FakeWeb()
    pages = {
        "/dated/meta.html": article("meta", "2025-03-01", marker="Alpha"),
        "/dated/dateline.html": article("dateline", "2025-02-03", marker="Delta"),
        "/dated/old.html": article("jsonld", "2019-05-08", marker="Bravo"),
        "/news/2018/04/02/plants.html": article("none", marker="Charlie"),
        "/dated/undated.html": article("none", marker="Echo"),
    }
    web.written.update(pages)
    web.catalogue = [Entry(path, f"Lithium recycling {i}", SNIPPET) for i, path in enumerate(pages)]
    return web


def lines(out: dict[str, Any], outcome: str) -> dict[str, str]:
    return {p["subject"].split("?")[0]: p["reason"] for p in out["provenance"]
            if p["outcome"] == outcome and "://" in p["subject"]}  # fmt: skip


def summarised(web: FakeWeb) -> str:
    """Every page text the model was asked to summarise."""
    return " ".join(page_text(b) for b in web.model.requests if stage_of(b) == "ChunkSummary")


async def test_since_keeps_dated_pages_in_the_window_and_undated_ones_and_drops_older_unread() -> (
    None
):
    with serve(dated_web()) as web:
        ctx = context_for(web, since="2024-06-01", **SMALL)
        out = await graph_for(web).ainvoke({"topic": "Lithium recycling"}, context=ctx)
    assert out["status"] == "ok", out["reason"]
    published = {s["url"].removeprefix(web.base): s["published"] for s in out["sources"]}
    assert published == {"/dated/meta.html": "2025-03-01", "/dated/dateline.html": "2025-02-03",
                         "/dated/undated.html": ""}  # fmt: skip
    assert all(s["date_read"] for s in out["sources"])
    dropped = lines(out, "out_of_scope")
    assert dropped == {
        web.url("/dated/old.html"):
            "published 2019-05-08, before since=2024-06-01: dropped before summarising",
        web.url("/news/2018/04/02/plants.html"):
            "published 2018-04-02, before since=2024-06-01: dropped before summarising",
    }  # fmt: skip
    assert lines(out, "flagged")[web.url("/dated/undated.html")].startswith("undated:")
    text = summarised(web)
    assert "Alpha" in text and "Echo" in text
    assert "Bravo" not in text and "Charlie" not in text, "no model call for a page out of window"
    assert {s.get("start_date") for s in web.searches} == {"2024-06-01"}, "Tavily was asked too"


async def test_without_since_every_page_keeps_its_date_and_none_is_dropped() -> None:
    with serve(dated_web()) as web:
        out = await graph_for(web).ainvoke({"topic": "Lithium recycling"},
                                           context=context_for(web, **SMALL))  # fmt: skip
    published = {s["url"].removeprefix(web.base): s["published"] for s in out["sources"]}
    assert published["/dated/old.html"] == "2019-05-08"
    assert published["/news/2018/04/02/plants.html"] == "2018-04-02"
    assert not lines(out, "out_of_scope") and not lines(out, "flagged")


async def loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def scoped_web() -> FakeWeb:
    web = FakeWeb()
    for i, marker in enumerate(("Who", "Cdc", "News", "Stats", "Tracker")):
        web.written[f"/s/{i}.html"] = article("meta", "2025-01-0" + str(i + 1), marker=marker)
    return web


def scoped_catalogue(web: FakeWeb) -> list[Entry]:
    at = f":{web.port}"
    hop = quote(f"http://tracker.example{at}/s/4.html", safe="")
    return [
        Entry("/s/0.html", "WHO on lithium", SNIPPET, f"http://www.who.int{at}/s/0.html"),
        Entry("/s/1.html", "CDC on lithium", SNIPPET, f"http://data.cdc.gov{at}/s/1.html"),
        Entry("/s/2.html", "News on lithium", SNIPPET, f"http://news.example{at}/s/2.html"),
        Entry("/s/3.html", "Stats on lithium", SNIPPET, f"http://stats.who.int{at}/s/3.html"),
        Entry("/redirect-to", "WHO short link", SNIPPET,
              f"http://go.who.int{at}/redirect-to?url={hop}"),
    ]  # fmt: skip


async def test_the_scope_is_asked_of_tavily_and_kept_after_it_and_at_every_redirect() -> None:
    with serve(scoped_web()) as web:
        web.catalogue = scoped_catalogue(web)
        ctx = context_for(web, include_domains="who.int,.gov", exclude_domains="stats.who.int",
                          **SMALL)  # fmt: skip
        graph = graph_for(web, fetcher=HttpFetcher(resolver=loopback))
        out = await graph.ainvoke({"topic": "Lithium recycling"}, context=ctx)
    assert out["status"] == "ok", out["reason"]
    sent = web.searches[0]
    assert sent["include_domains"] == ["who.int", "gov"]
    assert sent["exclude_domains"] == ["stats.who.int"] and "start_date" not in sent
    at = f":{web.port}"
    assert {s["url"] for s in out["sources"]} == {f"http://www.who.int{at}/s/0.html",
                                                  f"http://data.cdc.gov{at}/s/1.html"}  # fmt: skip
    dropped = lines(out, "out_of_scope")
    assert dropped[f"http://news.example{at}/s/2.html"] == (
        "search result dropped: news.example is outside include_domains (who.int, .gov)"
    )
    assert dropped[f"http://stats.who.int{at}/s/3.html"] == (
        "search result dropped: stats.who.int is excluded (exclude_domains: stats.who.int)"
    )
    assert dropped[f"http://go.who.int{at}/redirect-to"] == (
        f"out of scope: it redirects to http://tracker.example{at}/s/4.html: "
        "tracker.example is outside include_domains (who.int, .gov)"
    )
    assert web.fetches["/redirect-to"] == 1, "the in-scope front was asked"
    for path in ("/s/2.html", "/s/3.html", "/s/4.html"):
        assert web.fetches[path] == 0, f"{path} outside the scope was requested"
    text = summarised(web)
    assert "Who" in text and not {"News", "Stats", "Tracker"} & set(text.split())


@pytest.mark.parametrize("engine", ["tavily", "searxng"])
async def test_a_scope_that_excludes_every_result_ends_insufficient_naming_the_scope(
    engine: str,
) -> None:
    with serve(FakeWeb()) as web:  # the real fixture pages, all on 127.0.0.1
        ctx = context_for(web, include_domains="who.int", since="2024-01-01", search=engine,
                          searxng_url=web.url("/searxng"), **SMALL)  # fmt: skip
        out = await graph_for(web).ainvoke({"topic": "Lithium recycling"}, context=ctx)
    assert out["status"] == "insufficient_evidence" and out["sources"] == []
    assert out["reason"].startswith("no usable source: every page found (")
    assert out["reason"].endswith(
        "is outside the scope you set (include_domains=who.int; since=2024-01-01): widen it, "
        "or leave it out"
    )
    assert "outside include_domains (who.int)" in out["report"], "each page says why"
    assert sum(web.fetches.values()) == 0 and summarised(web) == ""
    if engine == "searxng":
        assert {s["query"].endswith(" site:who.int") for s in web.searches} == {True}


async def test_corpus_files_are_dated_by_front_matter_or_name_and_ignore_the_domain_scope(
    tmp_path: Path,
) -> None:
    body = " ".join(f"The Kilo lithium recycling plant number {i} recovered {100 + i} tonnes of "
                    "lithium from used car batteries." for i in range(8))  # fmt: skip
    (tmp_path / "current.md").write_text(f"---\ndate: 2025-01-15\n---\n# Lithium\n\n{body}\n")
    (tmp_path / "2019-05-01-old.md").write_text(
        f"# Lithium, old\n\n{body.replace('Kilo', 'Lima')}\n"
    )
    with serve(FakeWeb()) as web:
        ctx = context_for(web, search="corpus", corpus_dir=str(tmp_path), since="2024-01-01",
                          include_domains="who.int", **SMALL)  # fmt: skip
        out = await graph_for(web).ainvoke({"topic": "Lithium recycling"}, context=ctx)
    assert out["status"] == "ok", out["reason"]
    assert [(Path(s["url"]).name, s["published"]) for s in out["sources"]] == [
        ("current.md", "2025-01-15")
    ]
    (old,) = lines(out, "out_of_scope").values()
    assert old == "published 2019-05-01, before since=2024-01-01: dropped before summarising"
    (note,) = [p for p in out["provenance"] if p["subject"] == "corpus"]
    assert note["reason"].startswith(
        "the corpus ignores the domain scope (include_domains=who.int)"
    )
    assert "Lima" not in summarised(web)
