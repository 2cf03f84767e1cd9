"""The grounding benchmark's erring-judge mode, CI-sized: three reports, the direction only.

``python -m bench.grounding --judge-error-rate 0.2`` prints the full figures over twelve
reports (docs/grounding.md). Here three of them go through the real graph against the loopback
model, whose judge errs on 20% of the sentences in both directions (fixed per sentence and
prompt), and the test asserts what must hold whatever the exact figures: where code disputed a
verdict, the report is right more often than the judge was; a competent judge is never doubted
on a sentence it got right; and the extra calls stay within their bound.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from bench.grounding import outcomes, run_report
from bench.grounding_data import Outcome, Run, load_reports
from bench.grounding_report import CHANGED
from tests.support.loopback import FakeWeb
from tests.support.misjudge import FALSE_SUPPORTED, FALSE_UNSUPPORTED
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio

REPORTS = {"de-media", "en-over-fr", "fr-over-de"}


async def bench(web: FakeWeb, rate: float) -> tuple[list[Outcome], list[Run]]:
    web.model.judge_error_rate = rate
    graph = graph_for(web, checkpointer=InMemorySaver())
    results, runs = [], []
    for report in load_reports(REPORTS):
        run = await run_report(graph, report, context_for(web))
        runs.append(run)
        results += outcomes(report, run)
    return results, runs


def report_right(o: Outcome) -> bool:
    """A planted fault caught, a correct sentence kept."""
    return o.verdict in CHANGED if o.label.fault else o.kept


def judge_right(o: Outcome, d: dict[str, Any]) -> bool:
    """Whether the judge's own verdict (before weighing) was the right one."""
    if not o.label.fault:
        return bool(d["judge"] == "supported")
    moved = d["judge"] == "other_source" and d["judge_source"] == o.label.true
    return bool(d["judge"] == "unsupported" or moved)


async def test_where_code_disputes_an_erring_judge_the_report_is_right_more_often(
    web: FakeWeb,
) -> None:
    results, runs = await bench(web, 0.2)
    said = {w["kind"] for w in web.model.misjudged if w["prompt"] == "Judgements"}
    assert said == {FALSE_SUPPORTED, FALSE_UNSUPPORTED}, "it errs both ways"
    disputed = [(o, o.dispute) for o in results if o.dispute]
    by_judge = sum(judge_right(o, d) for o, d in disputed)
    by_report = sum(report_right(o) for o, _ in disputed)
    assert by_report > by_judge, (by_report, by_judge, len(disputed))
    overruled = [o for o, d in disputed if d["overruled"]]
    assert {o.label.fault for o in overruled} == {True, False}, "overruled both ways"
    faults = [o for o in results if o.label.fault]
    correct = [o for o in results if not o.label.fault]
    assert sum(o.verdict in CHANGED for o in faults) >= 0.95 * len(faults)
    assert sum(o.kept for o in correct) >= 0.95 * len(correct)
    for run in runs:  # the weighing's calls: the rewrite call it shares, a third look at most
        assert run.calls.get("repair_report", 0) <= 1
        assert run.calls.get("recheck_citations", 0) <= 1


async def test_a_competent_judge_is_never_doubted_on_a_sentence_it_got_right(
    web: FakeWeb,
) -> None:
    results, runs = await bench(web, 0.0)
    for o in results:
        if o.dispute:  # only code's certain findings: a figure or a quote not the source's
            assert o.dispute["settled_by"] == "code" and o.label.fault, o.label.text
    assert all("recheck_citations" not in run.calls for run in runs)
    correct = [o for o in results if not o.label.fault]
    assert sum(o.kept for o in correct) >= len(correct) - 1
    assert all(o.verdict in CHANGED for o in results if o.label.fault)
