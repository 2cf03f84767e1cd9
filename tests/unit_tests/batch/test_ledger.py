"""Batch accounting: calls, tokens and cost over every attempt at a topic, a lost one's included."""

import json
import typing
from pathlib import Path
from typing import Any

from deskresearch.batch.ledger import Ledger, at_least
from deskresearch.batch.summary import BatchSummary, failed_row, row_for
from deskresearch.batch.topics import Topic
from deskresearch.config.pricing import estimate
from deskresearch.records import Usage

T = Topic(1, "EV batteries", {}, "t-1", "ev")
MODEL = "gpt-4o-mini"  # listed in config.pricing


def use(stage: str, calls: int, tokens_in: int, tokens_out: int, model: str = MODEL) -> Usage:
    return Usage(stage=stage, model=model, input_tokens=tokens_in, output_tokens=tokens_out,  # type: ignore[typeddict-item]
                 calls=calls)  # fmt: skip


class Attempt:
    """The events one attempt's run sends (what runner.run_job and the meter emit)."""

    def __init__(self, ledger: Ledger, key: str, at: float, before: list[Usage]) -> None:
        self.ledger, self.key = ledger, key
        self.send({"event": "attempt", "at": at, "resumed": bool(before), "before": before})

    def send(self, event: dict[str, Any]) -> None:
        assert self.ledger.record("t-1", {"stage": "batch", "attempt": self.key, **event})

    def call(self, stage: str, usage: Usage | None, *, answered: bool = True) -> None:
        self.send({"event": "sent", "call_stage": stage, "model": MODEL, "usage": None})
        if answered:
            self.send({"event": "answered", "call_stage": stage, "model": MODEL, "usage": usage})


def calls(usage: list[Usage]) -> dict[str, int]:
    return {u["stage"]: u["calls"] for u in usage}


def test_a_lost_attempt_counts_what_it_was_answered_and_what_it_never_heard_back() -> None:
    ledger = Ledger()
    lost = Attempt(ledger, "a", at=1.0, before=[])
    lost.call("summarise_chunk", use("summarise_chunk", 1, 100, 10))  # its step was saved
    lost.call("summarise_chunk", use("summarise_chunk", 1, 100, 10))  # its step was not
    lost.call("summarise_chunk", None, answered=False)  # in flight when the node died
    # The retry's node has a clock behind the first's: what was saved tells which came first.
    retry = Attempt(ledger, "b", at=0.5, before=[use("summarise_chunk", 1, 100, 10)])
    retry.call("summarise_chunk", use("summarise_chunk", 1, 100, 10))  # the unsaved one again
    retry.call("summarise_chunk", use("summarise_chunk", 1, 100, 10))  # the in-flight one again
    retry.call("write_report", use("write_report", 1, 500, 200))
    # The checkpointed state counts each saved step once: 3 summaries and the report.
    final = [use("summarise_chunk", 3, 300, 30), use("write_report", 1, 500, 200)]

    usage = ledger.usage("t-1", final)
    assert calls(usage) == {"summarise_chunk": 5, "write_report": 1}  # what the provider saw
    assert sum(u["input_tokens"] for u in usage) == 4 * 100 + 500  # answered calls only
    assert ledger.attempts("t-1") == 2

    row = row_for(T, {"status": "ok", "usage": final}, run="resumed", wall_s=1, files=[],
                  usage=usage)  # fmt: skip
    assert (row.model_calls, row.tokens_in, row.tokens_out) == (6, 900, 240)
    assert row.cost_usd == round(estimate(usage)[0], 6) and row.cost_usd > 0
    alone = row_for(T, {"status": "ok", "usage": final}, run="resumed", wall_s=1, files=[])
    assert alone.model_calls == 4 and alone.cost_usd and alone.cost_usd < row.cost_usd


def test_the_result_a_task_returns_settles_events_that_arrive_after_it() -> None:
    task, driver = Ledger(), Ledger()
    Attempt(task, "a", at=1.0, before=[]).call("plan_queries", use("plan_queries", 1, 50, 5))
    late = Attempt(task, "b", at=2.0, before=[])
    late.call("write_report", use("write_report", 1, 500, 200))
    # The driver heard attempt a and b's start, not yet b's report call: the result says it.
    for key, record in task.export("t-1").items():
        driver.settle("t-1", {key: record})
    assert calls(driver.usage("t-1", [])) == {"plan_queries": 1, "write_report": 1}
    assert driver.attempts("t-1") == 2


def test_events_out_of_order_and_other_events_are_told_apart() -> None:
    ledger = Ledger()
    answered_first = {"stage": "batch", "attempt": "a", "event": "answered",
                      "call_stage": "reflect", "model": MODEL, "usage": use("reflect", 1, 9, 9)}  # fmt: skip
    assert ledger.record("t-1", answered_first)
    assert ledger.attempts("t-1") == 0  # its start has not arrived yet
    assert not ledger.record("t-1", {"stage": "read_page", "event": "finished"})
    assert not ledger.record("t-1", {"stage": "batch", "event": "started", "node": "n"})
    assert calls(ledger.usage("t-1", [])) == {"reflect": 1}


def test_the_state_is_a_floor_and_a_topic_with_no_attempt_keeps_it() -> None:
    final = [use("write_report", 2, 900, 300), use("judge_citations", 1, 40, 4)]
    assert Ledger().usage("t-9", final) == final  # finished before this batch: its state
    reported = [use("write_report", 1, 1000, 100)]
    floor = {u["stage"]: (u["calls"], u["input_tokens"], u["output_tokens"])
             for u in at_least(reported, final)}  # fmt: skip
    assert floor == {"write_report": (2, 1000, 300), "judge_citations": (1, 40, 4)}


def test_cost_is_filled_in_the_summary_files_and_empty_only_without_a_price(
    tmp_path: Path,
) -> None:
    summary = BatchSummary(tmp_path, {}, [T, Topic(2, "x", {}, "t-2", "x")], [])
    priced = [use("write_report", 1, 1_000_000, 0)]
    summary.update(row_for(T, {"status": "ok", "usage": priced}, run="new", wall_s=1, files=[]))
    unpriced = [use("write_report", 1, 10, 10, model="llama3")]
    summary.update(failed_row(Topic(2, "x", {}, "t-2", "x"), "boom", wall_s=1, usage=unpriced))
    rows = json.loads((tmp_path / "batch.json").read_text("utf-8"))["topics"]
    assert rows[0]["cost_usd"] == estimate(priced)[0] > 0
    assert rows[1]["cost_usd"] is None and rows[1]["model_calls"] == 1  # a failure's calls count
    csv_text = (tmp_path / "batch.csv").read_text("utf-8")
    assert f",{estimate(priced)[0]}," in csv_text


def test_cached_and_counted_calls_are_summed_per_row_and_kept_as_floors() -> None:
    from deskresearch.state import merge_usage

    def row(calls: int, **marked: int) -> Usage:
        base = Usage(stage="write_section", model="m", input_tokens=10 * calls,
                     output_tokens=calls, calls=calls)  # fmt: skip
        return typing.cast(Usage, base | marked)

    [merged] = merge_usage([row(1, counted_calls=1)], [row(2, counted_calls=2, cached_calls=1)])
    assert (merged["calls"], merged.get("counted_calls"), merged.get("cached_calls")) == (3, 3, 1)
    [floor] = at_least([row(1)], [row(2, counted_calls=2)])
    assert (floor["calls"], floor.get("counted_calls"), "cached_calls" in floor) == (2, 2, False)
