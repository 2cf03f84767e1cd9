"""The judge's batches: how pending sentences are split, and the graph's fan-out and join."""

import asyncio
import math
import random
from typing import Any, cast

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deskresearch import build_graph
from deskresearch.config.context import Context
from deskresearch.errors import ModelCallError
from deskresearch.nodes.check_citations import Judgement, Judgements, split_batches
from deskresearch.nodes.repair_report import Fixes
from deskresearch.nodes.settle_citations import settle_citations
from tests.support.fakes import ScriptedChat
from tests.unit_tests.nodes.test_check_citations import state

pytestmark = pytest.mark.anyio


def test_batches_are_as_few_as_the_size_allows_even_and_in_order() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n, size = rng.randint(1, 40), rng.randint(1, 12)
        keys = [(f"s{rng.randint(0, 3)}", rng.randint(0, 9)) for _ in range(n)]
        keys.sort()
        got = split_batches(keys, size)
        assert len(got) == math.ceil(n / size), (n, size)
        assert [i for b in got for i in b] == list(range(n)), "every sentence once, in order"
        assert max(map(len, got)) <= math.ceil(n / len(got)) <= size, "no batch over its share"
    assert split_batches([], 3) == []
    assert split_batches([("a", 0)], 3) == [[0]], "one sentence pending: one call"
    assert split_batches([("a", 0)] * 7, 50) == [list(range(7))]


def test_batches_cut_between_sections_then_paragraphs_where_sizes_allow() -> None:
    keys = [("A", 1), ("A", 1), ("A", 2), ("A", 2), ("B", 3), ("B", 3), ("B", 3)]
    # 7 sentences, 3 a call: 3 calls; [0 1][2 3][4 5 6] cuts one paragraph boundary and the
    # section boundary, no paragraph.
    assert split_batches(keys, 3) == [[0, 1], [2, 3], [4, 5, 6]]
    keys = [("A", 1), ("A", 2), ("A", 2), ("B", 3), ("B", 3)]
    assert split_batches(keys, 3) == [[0, 1, 2], [3, 4]], "at the section, not in a paragraph"
    keys = [("A", 1), ("A", 1), ("A", 2), ("A", 2), ("A", 2)]
    assert split_batches(keys, 3) == [[0, 1], [2, 3, 4]], "at the paragraph"
    # The even share comes first: two calls of two finish sooner than one of three and one.
    assert split_batches([("A", 1), ("A", 1), ("A", 1), ("B", 2)], 3) == [[0, 1], [2, 3]]


def test_batches_send_each_source_s_evidence_as_few_times_as_they_can() -> None:
    keys = [("A", 1)] * 5  # one paragraph: no cut is better than another
    shown = [{1}, {1}, {2}, {2}, {2}]
    # [0 1][2 3 4] shows source 1 once and 2 once; [0 1 2][3 4] would show 2 twice.
    assert split_batches(keys, 3, shown) == [[0, 1], [2, 3, 4]]
    shown = [{1}, {1}, {1}, {2}, {3}]
    assert split_batches(keys, 3, shown) == [[0, 1, 2], [3, 4]]
    # Sentence 3 shows 7, 8 and 9: with the first batch, 9 goes twice; with the second, 7 and 8
    # do. Which is less depends on how much evidence each source has.
    keys, shown = [("A", 1)] * 7, [{7}, {8}, {4}, {7, 8, 9}, {9}, {9}, {9}]
    assert split_batches(keys, 4, shown) == [[0, 1, 2, 3], [4, 5, 6]]
    assert split_batches(keys, 4, shown, {9: 100}) == [[0, 1, 2], [3, 4, 5, 6]]


def _prompted(call: Any) -> list[str]:
    """The sentences one judge prompt asks about."""
    text = str(call[1][1].content)
    return [line.split(": ", 1)[1].split("  (cites")[0] for line in text.splitlines()
            if line.startswith("S") and "  (cites" in line]  # fmt: skip


async def _run(llm: ScriptedChat, **ctx: Any) -> dict[str, Any]:
    graph = build_graph(llm=llm, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "judge"}}
    values = {k: v for k, v in state().items()} | {"queries": ["t"], "report_attempts": 1,
                                                   "report_cited": True}  # fmt: skip
    await graph.aupdate_state(config, values, as_node="write_report")
    await graph.ainvoke(None, config, context=Context(cache=False, **ctx))
    return dict((await graph.aget_state(config)).values)


async def test_one_failing_batch_leaves_only_its_sentences_unchecked() -> None:
    # Two pending sentences, one a call: the first call to arrive gets a verdict, the second
    # fails for good (a 400 is not retried). Which sentence is which depends on timing.
    ok = Judgements(judgements=[Judgement(sentence=1, verdict="unsupported")])
    llm = ScriptedChat({"judge_citations": [ok, ModelCallError("400 bad request")],
                        "repair_report": [Fixes(fixes=[])]})  # fmt: skip
    out = await _run(llm, judge_batch=1)
    calls = [c for c in llm.calls if c[0] == "judge_citations"]
    assert len(calls) == 2
    first, second = (_prompted(c) for c in calls)
    assert len(first) == len(second) == 1
    by_text = {c["original"]: c for c in out["citations"]}
    assert by_text[first[0]]["verdict"] == "removed", "the other batch's verdict stands"
    assert by_text[first[0]]["decided_by"] == "model"
    failed = by_text[second[0]]
    assert failed["verdict"] == "unchecked" and "judge call failed" in failed["reason"]
    verdicts = [c["verdict"] for c in out["citations"]]
    assert verdicts.count("unchecked") == 1, "only the failed batch's sentence"
    assert out["status"] == "ok" and "## Citation check" in out["report"]


async def test_judge_batch_50_asks_about_every_pending_sentence_in_one_call() -> None:
    verdicts = Judgements(judgements=[Judgement(sentence=1, verdict="unsupported"),
                                      Judgement(sentence=2, verdict="supported", source=3,
                                                fact=1)])  # fmt: skip
    llm = ScriptedChat({"judge_citations": [verdicts], "repair_report": [Fixes(fixes=[])]})
    out = await _run(llm, judge_batch=50)
    [call] = [c for c in llm.calls if c[0] == "judge_citations"]
    assert [s[:5] for s in _prompted(call)] == ["Hydro", "About"]
    assert [c["decided_by"] for c in out["citations"]].count("model") >= 2
    assert out["judged"] != [] and all(j["status"] != "pending" for j in out["judged"])


def test_the_join_ignores_verdicts_for_other_sentences_and_counts_a_repeat_once() -> None:
    s: Any = state()
    pending = {"unit": 3, "index": 0, "sentence": "X [1].", "status": "pending", "reason": ""}
    other = {**pending, "index": 1, "sentence": "Y [1]."}
    verdict = {**pending, "status": "supported", "reason": "stated by source [1]"}
    stale = {**other, "sentence": "Y, as an earlier draft had it [1].", "status": "supported"}
    judged = [verdict, verdict, stale]
    out = settle_citations(cast(Any, {**s, "checks": [pending, other], "judged": judged}))
    assert [c["status"] for c in out["checks"]] == ["supported", "unchecked"]
    assert "no verdict" in out["checks"][1]["reason"]


class _Stalls(ScriptedChat):
    """A judge whose second call never returns: the process dies with one batch judged."""

    async def structured(self, messages: Any, schema: Any, *, spec: Any, stage: Any) -> Any:
        if stage == "judge_citations" and sum(c[0] == stage for c in self.calls) == 1:
            self.calls.append((stage, list(messages)))
            await asyncio.Event().wait()
        return await super().structured(messages, schema, spec=spec, stage=stage)


async def test_a_run_resumed_mid_judging_asks_only_the_unfinished_batch_and_counts_each_once() -> (
    None
):
    ok = Judgements(judgements=[Judgement(sentence=1, verdict="unsupported")])
    saver = InMemorySaver()
    config: Any = {"configurable": {"thread_id": "resume"}}
    ctx = Context(cache=False, judge_batch=1)
    first = _Stalls({"judge_citations": [ok]})
    graph = build_graph(llm=first, checkpointer=saver)
    values = {**state(), "queries": ["t"], "report_attempts": 1, "report_cited": True}
    await graph.aupdate_state(config, values, as_node="write_report")
    run = asyncio.create_task(graph.ainvoke(None, config, context=ctx))

    async def one_batch_saved() -> bool:  # its verdict saved as a pending write
        tasks = (await graph.aget_state(config)).tasks
        return any(t.name == "judge_citations" and t.result for t in tasks)

    for _ in range(1000):
        if len(first.calls) == 2 and await one_batch_saved():
            break
        await asyncio.sleep(0.01)
    assert await one_batch_saved()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    again = ScriptedChat({"judge_citations": [ok], "repair_report": [Fixes(fixes=[])]})
    await build_graph(llm=again, checkpointer=saver).ainvoke(None, config, context=ctx)
    out = (await graph.aget_state(config)).values
    asked = [_prompted(c) for c in again.calls if c[0] == "judge_citations"]
    assert asked == [_prompted(first.calls[1])], "only the batch that never finished"
    assert len(out["judged"]) == 2, "the finished batch's verdict is not added twice"
    by_text = {c["original"][:7]: c for c in out["citations"]}
    assert by_text["Hydrome"]["decided_by"] == "model"
    # Source 3's fact carries "About 5 percent ...": its "unsupported" is weighed, not taken.
    assert (by_text["About 5"].get("dispute") or {}).get("judge") == "unsupported"
