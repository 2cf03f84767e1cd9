"""A judge that errs, through the real graph: what the facts overrule, and where it shows.

The fake model (behind the real ChatOpenAI, over loopback HTTP) answers the judge's prompt
wrongly for chosen sentences of a benchmark report, in both directions, as a model at
temperature 0 would every time it is asked that way. The check weighs each verdict against the
facts, asks again differently where they disagree, and records the disagreement in the result's
``citations`` (the JSON document) and on the HTML evidence card.
"""

from __future__ import annotations

from datetime import datetime

import jsonschema
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from bench.grounding import run_report
from bench.grounding_data import load_reports
from deskresearch.config.context import Context
from deskresearch.report.contract import document, schema
from deskresearch.report.html import render_html
from tests.support.loopback import FakeWeb
from tests.support.runs import context_for, graph_for
from tests.unit_tests.report.test_html_report import Page

pytestmark = pytest.mark.anyio

WRONG_FIGURE = "Lyft ist deutlich kleiner als Uber"  # 30 percent: not what its source [3] says
CARRIED = "Lyft rechnet für das laufende Quartal"  # its sources' facts state both its claims


async def test_a_judge_wrong_both_ways_is_overruled_and_the_record_shows_it(web: FakeWeb) -> None:
    [report] = load_reports({"de-rail"})
    web.model.judge_says = {WRONG_FIGURE: "supported", CARRIED: "unsupported"}
    graph = graph_for(web, checkpointer=InMemorySaver())
    ctx = context_for(web)
    run = await run_report(graph, report, ctx)
    wrong = {w["text"][:34]: w for w in web.model.misjudged}
    assert wrong[WRONG_FIGURE[:34]]["verdict"] == "supported", "a false 'supported'..."
    assert wrong[CARRIED[:34]]["verdict"] == "unsupported", "...and a false 'unsupported'"

    by_start = {c["original"][:34]: c for c in run.citations}
    figure = by_start[WRONG_FIGURE[:34]]
    assert figure["verdict"] in ("rewritten", "removed") and "30" not in figure["sentence"]
    d = figure["dispute"]
    assert (d["judge"], d["judge_source"], d["settled_by"], d["overruled"]) == (
        "supported", 3, "code", True
    )  # fmt: skip
    assert "figure(s) 30" in d["found"]
    carried = by_start[CARRIED[:34]]
    assert carried["verdict"] == "supported" and carried["sentence"] == carried["original"]
    d = carried["dispute"]
    assert (d["judge"], d["settled_by"], d["overruled"]) == ("unsupported", "asked_again", True)
    assert d["asked_again"] == [{"stage": "repair_report", "model": "judge", "answer": "stated"}]
    assert d["found"].startswith("the facts of [3][2] carry it")
    assert sum(bool(c.get("dispute")) for c in run.citations) >= 2
    assert run.calls.get("repair_report") == 1, "the second look is the rewrite call"
    assert "recheck_citations" not in run.calls, "settled: no third look"

    result = (await graph.aget_state({"configurable": {"thread_id": report.name}})).values
    start = datetime(2026, 1, 1).astimezone()
    doc = document(result, ctx=Context(), thread_id="t", clocks={}, started=start,
                   finished=start, resumed=False, files={"json": "t.json"})  # fmt: skip
    jsonschema.Draft202012Validator(schema()).validate(doc)
    assert [c["dispute"] for c in doc["citations"] if c["original"].startswith(CARRIED)] == [d]

    page = Page(render_html(result, topic=report.topic, language=report.language))
    i = next(i for i, c in enumerate(result["citations"]) if c["original"].startswith(CARRIED))
    card = " ".join(page.text_in[f"ev-{i}"].split())
    assert "The judge model's verdict was overruled: it said “not stated by any source”" in card
    assert "asked again, differently: stated (judge model)" in card
    [button] = page.find("button", aria_controls=f"ev-{i}")
    assert "overruled" in button["class"].split()
    assert "Lyft ist deutlich kleiner" in page.text_in["citation-check"], "overruled, listed"


async def test_a_judge_that_errs_the_same_way_twice_gets_a_third_look(web: FakeWeb) -> None:
    [report] = load_reports({"de-rail"})
    web.model.judge_says = {CARRIED: "unsupported"}
    web.model.misjudge_rewrite_on = (CARRIED,)  # the second look errs the same way
    graph = graph_for(web, checkpointer=InMemorySaver())
    run = await run_report(graph, report, context_for(web))
    carried = next(c for c in run.citations if c["original"].startswith(CARRIED))
    d = carried["dispute"]
    assert [o["answer"] for o in d["asked_again"]] == ["not stated", "stated"]
    assert [o["model"] for o in d["asked_again"]] == ["judge", "report"]
    assert carried["verdict"] == "unchecked" and carried["sentence"] == carried["original"]
    assert d["settled_by"] == "unsettled" and not d["overruled"]
    assert run.calls.get("recheck_citations") == 1
    assert run.path[-2:] == ("recheck_citations", "finish_report")
