"""A research on a local server's small window: the report's prompts fit it, and say what they left out.

Ollama loads a model with a few thousand tokens and cuts a longer prompt without a word; the
fake model here does the same (``context_tokens``), answered through the real ChatOpenAI.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from deskresearch import build_graph
from tests.support.fake_model import REPORT, chat_over, stage_of
from tests.support.loopback import FakeWeb
from tests.support.runs import context_for, services_for

pytestmark = pytest.mark.anyio
WINDOW = 2048  # Ollama's default before 0.6; the report's prompts of this run hold more
REPORT_STAGES = {"Outline", "Reflection", REPORT, "Judgements"}


async def test_a_run_on_a_small_local_window_fits_every_report_prompt_and_ends_ok(
    web: FakeWeb,
) -> None:
    web.model.context_tokens, web.model.facts_per_chunk = WINDOW, 8  # facts enough to overflow
    graph: Any = build_graph(**{**services_for(web), "llm": chat_over(web.model)})
    ctx = context_for(web, summary_model="ollama:llama3.1", report_model="ollama:llama3.1",
                      summary_context_window=WINDOW)  # fmt: skip
    out = await graph.ainvoke({"topic": "EV battery recycling"}, context=ctx)
    assert out["status"] == "ok" and out["sources"] and "[1]" in out["report"]
    asked = Counter(stage_of(b) for b in web.model.requests)
    assert asked["Outline"] == 1 and asked[REPORT] >= 3, "the outline was used: sections written"
    report_calls = [b for b in web.model.requests if stage_of(b) in REPORT_STAGES]
    cut = [stage_of(b) for b in report_calls if web.model.cuts(b)]
    assert cut == [], "no report prompt was cut by the server"
    skipped = [
        p
        for p in out["provenance"]
        if p["outcome"] == "skipped" and "left out of the prompt" in p["reason"]
    ]
    assert {p["stage"] for p in skipped} >= {"plan_report", "reflect", "judge_citations"}
    verdicts = Counter(c["verdict"] for c in out["citations"])
    assert verdicts and set(verdicts) == {"supported"}, (
        "every citation checked, none left unchecked"
    )
    assert all("2,048-token context" in p["reason"] for p in skipped)
    assert not [p for p in out["provenance"] if "the server cut it" in p["reason"]]
