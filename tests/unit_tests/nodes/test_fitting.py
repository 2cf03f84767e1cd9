"""The report's prompts fitted to the window a local server gives its model (nodes/fitting.py)."""

from __future__ import annotations

from typing import Any

import pytest

from deskresearch.config.context import Context
from deskresearch.nodes.fitting import answer_reserve
from deskresearch.nodes.reflect import FollowUp, Reflection, reflect
from deskresearch.nodes.write_report import write_report
from deskresearch.prompts.fit import fit_groups
from deskresearch.records import Source
from deskresearch.services.model.tokens import TiktokenCounter, count_tokens, served_window
from deskresearch.services.model.usage import prompt_text
from tests.support.fakes import ScriptedChat, runtime

pytestmark = pytest.mark.anyio
LOCAL = "ollama:llama3.1"  # Ollama: 4,096 tokens unless started with more
HOSTED = "openai:gpt-4o-mini"


def test_groups_keep_their_first_items_up_to_the_largest_cap_that_fits() -> None:
    asked: list[int] = []

    def fits(groups: list[list[int]]) -> bool:
        asked.append(1)
        return sum(len(g) for g in groups) <= 9

    fitted = fit_groups([[1, 2, 3, 4, 5], [6, 7], [8, 9, 10, 11, 12, 13, 14, 15]], fits)
    assert fitted.groups == [[1, 2, 3], [6, 7], [8, 9, 10]]  # a cap of 4 would hold 10 items
    assert (fitted.kept, fitted.total, fitted.cap) == (8, 15, 3)
    assert len(asked) <= 4, "a binary search on the cap, not one item at a time"


def test_what_fits_whole_is_left_whole_and_nothing_is_cut_below_the_least() -> None:
    whole = fit_groups([[1, 2], [3]], lambda groups: True)
    assert whole.groups == [[1, 2], [3]] and whole.cap is None and whole.kept == whole.total
    never = fit_groups([[1, 2, 3], [4, 5]], lambda groups: False)
    assert never.groups == [[1], [4]] and never.cap == 1, "a source keeps one fact to be cited"


def test_a_local_servers_window_is_its_default_or_the_setting_within_the_models_own() -> None:
    def window(**kw: Any) -> int | None:
        ctx = Context(**kw)
        return served_window(ctx, ctx.report_spec())

    assert window(report_model=LOCAL) == 4096
    assert window(report_model="ollama:gemma2:2b") == 4096  # its name allows 8,192
    local = {"summary_model": LOCAL, "summary_context_window": 32_768}
    assert window(report_model=LOCAL, **local) == 32_768, "the server's setting"
    assert window(report_model="ollama:gpt-oss:20b", **local) == 32_768, "never capped by a name"
    assert window(report_model=LOCAL, summary_model=HOSTED, summary_context_window=128_000) == 4096
    assert window(report_model="lmstudio:llama3.1", **local) == 4096, "another server: its default"
    assert window(report_model=HOSTED) is None, "a hosted API answers a prompt too long with 400"
    assert window(report_model=HOSTED, **local) is None


def ledger(n: int, facts: int) -> list[Source]:
    return [
        Source(id=i, url=f"https://e.org/{i}", title=f"Report {i}", site="e.org", published="",
               date_read="2026-01-01", queries=["q"], text_hash=f"h{i}", origin="page", summary="",
               facts=[{"claim": f"Source {i} states finding {k}: recycling plants in region {k} "
                                f"recovered {k * 3} percent of cobalt from spent cells in 2024.",
                       "quote": f"finding {k}"} for k in range(facts)],
               round=1)
        for i in range(1, n + 1)
    ]  # fmt: skip


def report_state(sources: list[Source]) -> Any:
    return {"topic": "Cobalt recovery", "language": "en", "sources": sources, "report": "",
            "report_attempts": 0, "draft": "", "checks": [], "pages": [], "provenance": []}  # fmt: skip


async def test_the_one_call_report_fits_a_local_window_and_says_what_it_left_out() -> None:
    sources = ledger(8, 30)  # about 11,000 tokens of facts
    llm = ScriptedChat({"write_report": ["# R\n\nCobalt [1]."]})
    ctx = Context(report_model=LOCAL, report_words=600)
    update = await write_report(
        report_state(sources), runtime(ctx), llm=llm, tokens=TiktokenCounter()
    )
    [(_, messages)] = llm.calls
    sent = prompt_text(messages)
    assert count_tokens(sent) <= 4096 - answer_reserve(600)
    for s in sources:  # every source keeps its first fact, so each can still be cited
        assert s["facts"][0]["claim"] in sent
    assert sources[0]["facts"][-1]["claim"] not in sent
    [skipped] = [p for p in update["provenance"] if p["outcome"] == "skipped"]
    assert skipped["stage"] == "write_report" and "of 240 facts left out" in skipped["reason"]
    assert (
        "4,096-token context" in skipped["reason"] and "OLLAMA_CONTEXT_LENGTH" in skipped["reason"]
    )


async def test_a_hosted_report_model_gets_every_fact_and_no_note() -> None:
    sources = ledger(8, 30)
    llm = ScriptedChat({"write_report": ["# R\n\nCobalt [1]."]})
    update = await write_report(report_state(sources), runtime(Context(report_model=HOSTED)),
                                llm=llm, tokens=TiktokenCounter())  # fmt: skip
    sent = prompt_text(llm.calls[0][1])
    assert all(f["claim"] in sent for s in sources for f in s["facts"])
    assert not [p for p in update["provenance"] if p["outcome"] == "skipped"]


def pages(n: int, facts: int) -> list[dict[str, Any]]:
    return [
        {"url": f"https://e.org/{i}", "order": i, "round": 1,
         "facts": [{"claim": f"Page {i} fact {k}: the cobalt plant in district {k} recovered "
                             f"{k} tonnes of cobalt from spent batteries in the year 2024.",
                    "quote": "q"} for k in range(facts)]}
        for i in range(n)
    ]  # fmt: skip


async def test_a_reflections_fact_numbers_name_the_facts_the_model_was_shown() -> None:
    """The numbers a follow-up gives are those of the fitted prompt, not of the whole ledger."""
    state: Any = {"topic": "Who recovers cobalt?", "language": "en", "round": 1, "round_started": 0.0,
             "keywords": ["cobalt"], "queries": ["cobalt recovery"], "pages": pages(3, 60),
             "rounds": [], "followups": [], "usage": [], "read_urls": [], "run_id": "r",
             "budget_stopped": False, "ranked": []}  # fmt: skip
    lead = FollowUp(query="district 1 plant", gap="who runs it", lead="district 1", fact=0)
    llm = ScriptedChat({"reflect": [Reflection(gaps=["who runs it"], followups=[lead])]})
    ctx = Context(report_model=LOCAL, max_rounds=2)
    await reflect(state, runtime(ctx), llm=llm, tokens=TiktokenCounter())
    shown = str(llm.calls[0][1][-1].content)
    numbered = [line for line in shown.splitlines() if line.startswith("[")]
    assert count_tokens(prompt_text(llm.calls[0][1])) <= 4096 - 1024
    assert 3 <= len(numbered) < 180, "fitted: fewer facts than gathered, some of every page"
    second_page_first = next(i for i, line in enumerate(numbered, 1) if "Page 1 fact 0" in line)
    assert second_page_first < 61, "the first page lost facts, so the second one's come sooner"
    picked = FollowUp(query="district 0 plant", gap="who runs it", lead="district 0",
                      fact=second_page_first)  # fmt: skip
    llm = ScriptedChat({"reflect": [Reflection(gaps=["who runs it"], followups=[picked])]})
    update = await reflect(state, runtime(ctx), llm=llm, tokens=TiktokenCounter())
    [q] = update["followups"]
    assert q["fact"].startswith("Page 1 fact 0") and q["source"] == "https://e.org/1"
    [note] = [
        p for p in update["provenance"] if p["outcome"] == "skipped" and "left out" in p["reason"]
    ]
    assert "(each page kept at most its first " in note["reason"]
