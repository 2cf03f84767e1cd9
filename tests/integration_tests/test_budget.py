"""The token budget: gathering stops when it is spent, the report is still written and says so."""

import pytest

from tests.support.fake_model import REPORT
from tests.support.loopback import FakeWeb
from tests.support.runs import run

pytestmark = pytest.mark.anyio


async def test_a_spent_budget_stops_gathering_and_the_report_says_so(web: FakeWeb) -> None:
    full = await run(web)
    gathered = sum(u["input_tokens"] + u["output_tokens"] for u in full["usage"]
                   if u["stage"] in ("rank_urls", "summarise_chunk", "reduce_page"))  # fmt: skip
    before = sum(u["input_tokens"] + u["output_tokens"] for u in full["usage"]
                 if u["stage"] in ("generate_keywords", "plan_queries"))  # fmt: skip
    web.model.requests.clear()
    budget = before + gathered // 4  # room for some of the gathering, not all
    out = await run(web, token_budget=budget)
    assert out["status"] == "ok" and f"token budget ({budget})" in out["report"]
    refused = [p for p in out["provenance"] if "token budget reached" in p["reason"]]
    assert refused, "refused calls are recorded"
    spent = sum(u["input_tokens"] + u["output_tokens"] for u in out["usage"]
                if u["stage"] in ("rank_urls", "summarise_chunk", "reduce_page"))  # fmt: skip
    assert spent < gathered / 2, "gathering stopped (calls in flight at the limit may finish)"
    assert web.model.calls(REPORT), "the report is written all the same"
    assert out["sources"], "from what it had gathered"


async def test_a_budget_spent_before_any_page_ends_in_insufficient_evidence(web: FakeWeb) -> None:
    out = await run(web, token_budget=1)
    assert out["status"] == "insufficient_evidence"
    assert "token budget ran out" in out["report"]
    assert web.model.calls(REPORT) == []
