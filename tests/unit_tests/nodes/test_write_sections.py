from typing import Any, cast

import pytest
from langgraph.errors import NodeError
from langgraph.types import Send

from deskresearch.errors import ContextLengthError, ModelCallError
from deskresearch.graph import route_after_brief, route_after_report
from deskresearch.nodes.plan_report import (
    Outline,
    SectionItem,
    checked_outline,
    plan_failed,
    plan_report,
)
from deskresearch.nodes.write_sections import (
    assemble_report,
    section_failed,
    section_tasks,
    write_section,
)
from deskresearch.records import Source
from deskresearch.services.model.tokens import TiktokenCounter
from tests.support.fakes import ScriptedChat, runtime

pytestmark = pytest.mark.anyio


def source(i: int, title: str = "") -> Source:
    return Source(id=i, url=f"https://e.org/{i}", title=title or f"T{i}", site="", published="",
                  date_read="2026-01-01", queries=["q"], text_hash=f"h{i}", origin="page",
                  summary=f"- claim {i}", facts=[{"claim": f"claim {i}", "quote": f"quote {i}"}], round=1)  # fmt: skip


SOURCES = [source(1), source(2), source(3, "Cobalt mining"), source(4)]


def outline(*sections: tuple[str, list[int]]) -> Outline:
    return Outline(
        title="## Batteries",
        sections=[SectionItem(heading=h, focus=f"on {h}", sources=ids) for h, ids in sections],
    )


def test_an_outline_keeps_known_sources_and_gives_unused_ones_a_middle_section() -> None:
    checked = checked_outline(
        outline(("Overview", [1, 9, 1]), ("Cobalt", []), ("Lithium", [2]), ("Outlook", [4])),
        SOURCES,
    )
    assert checked is not None and checked["title"] == "Batteries"
    assert [(p["heading"], p["sources"]) for p in checked["sections"]] == [
        ("Overview", [1]),  # 9 is not in the ledger; the repeat goes
        ("Cobalt", [3]),  # source 3 was in no section: it joins the one sharing its words
        ("Lithium", [2]),
        ("Outlook", [4]),
    ]


def test_an_outline_with_too_few_sections_or_no_source_is_not_used() -> None:
    assert checked_outline(outline(("A", [1]), ("B", [2])), SOURCES) is None
    assert checked_outline(outline(("A", [9]), ("B", []), ("C", [])), SOURCES) is None


async def test_a_malformed_outline_sends_the_run_to_one_call() -> None:
    update = await plan_report(
        cast(Any, {"topic": "t", "language": "en", "sources": SOURCES}),
        runtime(),
        llm=ScriptedChat({"plan_report": ["junk"]}),
        tokens=TiktokenCounter(),
    )
    assert update["outline"] is None and update["provenance"][0]["outcome"] == "fallback"
    brief = {**update, "sources": SOURCES, "followups": []}
    assert route_after_brief(cast(Any, brief)) == "write_report"


def test_an_outline_that_failed_sends_the_run_to_one_call_unless_its_prompt_was_too_long() -> None:
    state = cast(Any, {"topic": "batteries"})
    down = plan_failed(state, NodeError("plan_report", ModelCallError("503", transient=True)))
    assert down.goto == "brief_writers" and cast(Any, down.update)["outline"] is None
    cut = ContextLengthError("llama3.1 read 2,050 tokens of a prompt of 6,401", status=400)
    with pytest.raises(ContextLengthError):  # the one call's prompt holds more: it would fail too
        plan_failed(state, NodeError("plan_report", cut))


async def test_each_section_is_written_from_its_own_sources_at_the_same_time() -> None:
    plan = checked_outline(outline(("Overview", [1]), ("Mid", [2, 3]), ("End", [4])), SOURCES)
    state = cast(Any, {"topic": "t", "language": "fr", "sources": SOURCES, "outline": plan})
    sends = route_after_brief(
        cast(Any, {**state, "followups": [], "settings": {"report_words": 900}})
    )
    assert isinstance(sends, list) and all(isinstance(s, Send) for s in sends)
    tasks = section_tasks(state, 900)
    assert [t["position"] for t in tasks] == ["first", "middle", "last"]
    assert [[s["id"] for s in t["sources"]] for t in tasks] == [[1], [2, 3], [4]]
    assert {t["words"] for t in tasks} == {300}
    llm = ScriptedChat({"write_section": ["## Mid\n\nClaim two [2] and three [3]."]})
    update = await write_section(tasks[1], runtime(), llm=llm, tokens=TiktokenCounter())
    assert update["sections"][0]["text"] == "Claim two [2] and three [3]."
    prompt = str(llm.calls[0][1][1].content)
    assert (
        "- claim 2" in prompt
        and "- claim 1" not in prompt
        and "fr" in str(llm.calls[0][1][0].content)
    )


async def test_assemble_stitches_sections_in_order_and_keeps_ledger_numbers() -> None:
    plan = checked_outline(outline(("Overview", [1]), ("Mid", [2]), ("End", [4])), SOURCES)
    sections = [
        {"index": 2, "heading": "End", "text": "Last [4].", "error": ""},
        {"index": 0, "heading": "Overview", "text": "First [1]. Bad [7].", "error": ""},
        {"index": 1, "heading": "Mid", "text": "", "error": "503"},
    ]
    state = cast(Any, {"topic": "t", "sources": SOURCES, "outline": plan, "sections": sections})
    update = await assemble_report(state, runtime())
    assert update["draft"] == "# Batteries\n\n## Overview\n\nFirst [1]. Bad.\n\n## End\n\nLast [4]."
    assert [p["subject"] for p in update["provenance"]] == ["[7]"]
    assert route_after_report(cast(Any, update)) == "check_citations"


async def test_sections_that_cite_nothing_fall_back_to_one_call() -> None:
    plan = checked_outline(outline(("A", [1]), ("B", [2]), ("C", [4])), SOURCES)
    sections = [{"index": 0, "heading": "A", "text": "No citation here.", "error": ""}]
    state = cast(Any, {"topic": "t", "sources": SOURCES, "outline": plan, "sections": sections})
    update = await assemble_report(state, runtime())
    assert update["draft"] == "" and update["report_attempts"] == 1
    assert route_after_report(cast(Any, update)) == "write_report"


def test_a_section_that_fails_for_good_is_left_out_and_recorded() -> None:
    task = cast(Any, {"index": 1, "plan": {"heading": "Mid"}})
    update: Any = section_failed(task, NodeError("write_section", ModelCallError("503"))).update
    assert update["sections"][0]["text"] == "" and update["provenance"][0]["outcome"] == "failed"
