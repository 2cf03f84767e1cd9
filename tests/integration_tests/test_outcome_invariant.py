"""No combination of failing services makes a run say ok with nothing.

The whole graph runs against the loopback web with some services failing for good: the search
engine, every page, or one model step at a time and in pairs (HTTP 500 on every call, or
answers that never parse). Whatever fails, the run ends in one of three ways: ``ok`` with a
non-empty report citing a source of its ledger, ``insufficient_evidence`` with a reason, or an
error. Before "ok means a report", a run whose every search failed, or whose every section or
judge batch failed, ended with an empty report marked ok (an error handler's branch has no
edges of its own, so the graph stopped there).
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

import pytest

from deskresearch.errors import DeskResearchError
from tests.support.fake_model import REPORT
from tests.support.loopback import FakeWeb, serve
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio

MODEL_STEPS = ["Keywords", "QueryPlan", "Ranking", "ChunkSummary", "Outline", REPORT,
               "Judgements", "Fixes"]  # fmt: skip
SERVICES = [*(f"model:{s}" for s in MODEL_STEPS), "search", "pages"]
KINDS = ("http_500", "malformed")
# Every service alone (a model step each way it can fail; search and pages one way), then a
# fixed sample of pairs and triples.
_rng = random.Random(20261125)
COMBOS: list[tuple[tuple[str, ...], str]] = [
    ((s,), k) for s in SERVICES for k in (KINDS if s.startswith("model:") else KINDS[:1])
]
COMBOS += [
    (c, _rng.choice(KINDS))
    for c in _rng.sample(list(itertools.combinations(SERVICES, 2)), 10)
    + _rng.sample(list(itertools.combinations(SERVICES, 3)), 6)
]


def broken_web(failing: tuple[str, ...], kind: str) -> FakeWeb:
    web = FakeWeb()
    for service in failing:
        if service.startswith("model:"):
            web.model.fail(service.removeprefix("model:"), *[kind] * 500)
        elif service == "search":
            web.engines_down["tavily"] = 503
        else:  # every page answers HTTP 500
            web.page_fault_rate, web.page_fault_kinds = 1.0, ("http_500",)
    return web


def name(value: Any) -> str:
    return "+".join(value) if isinstance(value, tuple) else str(value)


@pytest.mark.parametrize(("failing", "kind"), COMBOS, ids=name)
async def test_no_failing_services_make_an_empty_ok(failing: tuple[str, ...], kind: str) -> None:
    web = broken_web(failing, kind)
    with serve(web):
        try:
            out: dict[str, Any] = await graph_for(web).ainvoke(
                {"topic": "EV battery recycling"},
                context=context_for(web, model_attempts=1, max_retries_per_run=2),
            )
        except DeskResearchError:
            return  # an error says what failed: never a silent ok
    assert out["status"] in ("ok", "insufficient_evidence"), out["status"]
    if out["status"] == "ok":
        ledger = {s["id"] for s in out["sources"]}
        cited = {int(n) for n in re.findall(r"\[(\d+)\]", out["report"])}
        assert out["report"].strip() and ledger and cited & ledger, out["report"][:300]
        assert out["reason"] == ""
    else:
        assert out["reason"].strip() and out["sources"] == []
        assert out["reason"] in out["report"], "the report says why, as the reason does"
    if "search" in failing:
        assert out["status"] == "insufficient_evidence"
        assert out["reason"].startswith("every search failed")
