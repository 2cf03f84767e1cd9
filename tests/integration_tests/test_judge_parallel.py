"""The judge's batches against the loopback model: ceil(n/judge_batch) calls, at the same time."""

import math
import re
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from bench.grounding_data import load_reports
from deskresearch.nodes.check_citations import lexical_checks
from tests.support.loopback import FakeWeb, Latency
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio

_ASKED = re.compile(r"^S\d+: (.*?)  \(cites [\d, ]+\)$", re.MULTILINE)


async def test_pending_sentences_are_judged_in_overlapping_batches_once_each(
    web: FakeWeb,
) -> None:
    [report] = load_reports({"de-rail"})
    values = {"topic": report.topic, "language": report.language, "queries": [report.topic],
              "sources": report.sources, "pages": report.pages, "draft": report.draft,
              "report_attempts": 1, "report_cited": True, "checks": [], "usage": [],
              "provenance": []}  # fmt: skip
    pending = [c["sentence"] for c in lexical_checks(values) if c["status"] == "pending"]  # type: ignore[arg-type]
    assert len(pending) > 3, "the report leaves the judge several batches"
    web.latency = Latency(call_s=0.3)  # each call takes 0.3 s: overlapping ones show it
    graph = graph_for(web, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "judge"}}
    await graph.aupdate_state(config, values, as_node="write_report")
    await graph.ainvoke(None, config, context=context_for(web, judge_batch=3))
    out = (await graph.aget_state(config)).values

    calls = [c for c in web.log if c.kind == "model" and c.key == "Judgements"]
    assert len(calls) == math.ceil(len(pending) / 3)
    assert max(c.started for c in calls) < min(c.started + c.seconds for c in calls), (
        "every judge call was in flight at the same time"
    )
    asked = [s for c in calls for s in _ASKED.findall(c.body["messages"][-1]["content"])]
    assert sorted(asked) == sorted(pending), "each pending sentence asked about exactly once"
    judge_usage = [u for u in out["usage"] if u["stage"] == "judge_citations"]
    assert sum(u["calls"] for u in judge_usage) == len(calls)
    by_text = {c["original"]: c for c in out["citations"]}
    assert all(by_text[s]["decided_by"] == "model" for s in pending), "one verdict each, kept"
    assert len(out["citations"]) == len(lexical_checks(values))  # type: ignore[arg-type]
