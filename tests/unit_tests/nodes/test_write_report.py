from typing import Any, cast

import pytest

from deskresearch.config.context import Context
from deskresearch.graph import close_round, route_after_report
from deskresearch.nodes.collect_sources import collect_sources
from deskresearch.nodes.finish_report import finish_report, unchecked
from deskresearch.nodes.insufficient import insufficient_evidence
from deskresearch.nodes.write_report import UNCITED_WARNING, write_report
from deskresearch.records import Source
from deskresearch.services.model.tokens import TiktokenCounter
from tests.support.fakes import ScriptedChat, runtime

pytestmark = pytest.mark.anyio


def source(i: int) -> Source:
    return Source(
        id=i,
        url=f"https://e.org/{i}",
        title=f"T{i}",
        site="",
        published="",
        date_read="2026-01-01",
        queries=["q"],
        text_hash=f"h{i}",
        origin="page",
        summary=f"- claim {i}",
        facts=[{"claim": f"claim {i}", "quote": f"quote {i}"}],
        round=1,
    )


def state(**kw: Any) -> Any:
    return {
        "topic": "t",
        "language": "fr",
        "sources": [source(1), source(2)],
        "report_attempts": 0,
        "report": "",
        "draft": "",
        "checks": [],
        "pages": [],
        "provenance": [],
        **kw,
    }


async def test_write_report_removes_unknown_citations_and_drops_the_models_references() -> None:
    llm = ScriptedChat(
        {"write_report": ["# R\n\nA [1]. B [5].\n\n## References\n[1] made up https://x.org"]}
    )
    update = await write_report(state(), runtime(), llm=llm, tokens=TiktokenCounter())
    assert update["draft"] == "# R\n\nA [1]. B."
    assert [p["subject"] for p in update["provenance"] if p["outcome"] == "removed"] == ["[5]"]
    assert "fr" in str(llm.calls[0][1][0].content)
    assert "- claim 2" in str(llm.calls[0][1][1].content), "the writer sees each source's facts"
    drafted = cast(Any, {**state(), **update})
    assert route_after_report(drafted) == "check_citations"
    unchecked: Any = {**drafted, "settings": {"check_citations": False}}  # start_run saved it
    assert route_after_report(unchecked) == "finish_report"


async def test_finish_report_appends_the_ledger_references_and_lists_unchecked_citations() -> None:
    drafted = cast(Any, {**state(), "draft": "# R\n\nA [1]. B [2]."})
    update = await finish_report(drafted, runtime(Context(check_citations=False)))
    assert update["status"] == "ok" and "<https://e.org/2>" in update["report"]
    assert [(c["verdict"], c["sources"]) for c in update["citations"]] == [
        ("unchecked", [1]),
        ("unchecked", [2]),
    ]


async def test_write_report_retries_an_uncited_draft_once_then_flags_it() -> None:
    llm = ScriptedChat({"write_report": ["no citations", "still none"]})
    first = await write_report(state(), runtime(), llm=llm, tokens=TiktokenCounter())
    assert "draft" not in first and first["report_attempts"] == 1
    assert route_after_report(cast(Any, {**state(), **first})) == "write_report"
    second = await write_report(
        state(report_attempts=1), runtime(), llm=llm, tokens=TiktokenCounter()
    )
    assert second["draft"].startswith(UNCITED_WARNING)
    assert second["provenance"][-1]["outcome"] == "flagged"
    assert "cited no source" in str(llm.calls[1][1][1].content)


async def test_collect_sources_numbers_pages_and_merges_same_text() -> None:
    def page(url: str, h: str, order: int, q: str) -> Any:
        return {
            "url": url,
            "title": url,
            "site": "",
            "published": "",
            "date_read": "d",
            "queries": [q],
            "text_hash": h,
            "origin": "page",
            "facts": [{"claim": "c", "quote": "q"}],
            "order": order,
            "round": 1,
            "text": "t",
            "language": "en",
        }

    pages = [
        page("https://b", "h2", 1, "q2"),
        page("https://a", "h1", 0, "q1"),
        page("https://mirror", "h1", 2, "q3"),
    ]
    update = await collect_sources({"pages": pages}, runtime())  # type: ignore[typeddict-item]
    assert [(s["id"], s["url"]) for s in update["sources"]] == [(1, "https://a"), (2, "https://b")]
    assert update["sources"][0]["queries"] == ["q1", "q3"]
    assert [p["outcome"] for p in update["provenance"]] == ["used", "used", "duplicate"]
    assert close_round(cast(Any, {"sources": []})) == ["reflect"]
    # Different texts: two origins. The outline is planned and the evidence weighed while the
    # round is reflected on.
    assert [s["origin_group"] for s in update["sources"]] == [1, 2]
    assert close_round(cast(Any, update)) == ["reflect", "weigh_evidence", "plan_report"]
    single = {**update, "settings": {"report_mode": "single"}}
    assert close_round(cast(Any, single)) == ["reflect", "weigh_evidence"]


async def test_insufficient_evidence_lists_what_was_tried_without_a_model() -> None:
    prov = [
        {
            "stage": "search_query",
            "subject": "q1",
            "outcome": "issued",
            "reason": "tavily: 3 results",
        },
        {
            "stage": "read_page",
            "subject": "https://x.org",
            "outcome": "blocked",
            "reason": "captcha",
        },
    ]
    update = await insufficient_evidence(state(provenance=prov), runtime())
    assert update["status"] == "insufficient_evidence"
    assert "q1" in update["report"] and "https://x.org: blocked (captcha)" in update["report"]
    assert update["reason"].startswith("no usable source: 1 page considered")


async def test_finish_report_never_says_ok_for_a_report_that_cites_no_page_read() -> None:
    uncited = cast(Any, {**state(), "draft": f"{UNCITED_WARNING}\n\n# R\n\nA claim. Another."})
    update = await finish_report(uncited, runtime(Context(check_citations=False)))
    assert update["status"] == "insufficient_evidence" and update["sources"] == []
    assert update["reason"] == "the report's writer cited none of the pages read"
    assert update["report"].startswith("# Insufficient evidence: t")


async def test_finish_report_ends_insufficient_when_the_check_removed_every_cited_sentence() -> (
    None
):
    drafted = cast(Any, {**state(), "draft": "# R\n\nA made-up claim [1]."})
    checks = [{**c, "status": "unsupported", "reason": "source 1 does not say this"}
              for c in unchecked(drafted)]  # fmt: skip
    checked = cast(Any, {**drafted, "checks": checks})
    update = await finish_report(checked, runtime())
    assert update["status"] == "insufficient_evidence"
    assert "removed every cited sentence" in update["reason"]
    assert "A made-up claim" in update["report"], "the account of what was removed stays"
    assert [c["verdict"] for c in update["citations"]] == ["removed"]


async def test_insufficient_evidence_says_when_every_search_failed() -> None:
    failed = [{"keyword": "k", "hits": [], "error": "searxng: unreachable at http://127.0.0.1:9"}]
    update = await insufficient_evidence(state(keyword_hits=failed), runtime())
    assert update["reason"].startswith("every search failed (searxng: unreachable")
    assert f"Reason: {update['reason']}." in update["report"]
